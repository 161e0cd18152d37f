internal import CDBus

/// Exports objects on a connection and answers every method call addressed to it.
///
/// Each object is a list of interface tables; the standard `Properties`, `Introspectable` and
/// `Peer` interfaces are added to every object and derived from those tables. Paths above an
/// exported object answer `Introspect` with their child nodes, so `busctl tree` finds it.
/// Calls run on the connection's dispatching thread.
public final class ObjectServer {
    /// The connection the objects are exported on.
    public let connection: Connection
    private var objects: [ObjectPath: [Interface]] = [:]

    /// Starts answering method calls on `connection`.
    public init(connection: Connection) {
        self.connection = connection
        connection.addFilter { [weak self] message in
            guard let self, message.kind == .methodCall else { return false }
            self.handle(message)
            return true
        }
    }

    /// Exports `interfaces` at `path`, replacing what was there.
    public func export(_ interfaces: [Interface], at path: ObjectPath) {
        objects[path] = interfaces
    }

    /// Removes the object at `path`.
    public func unexport(_ path: ObjectPath) {
        objects[path] = nil
    }

    // MARK: - Signals

    /// Emits a signal from `path`.
    public func emit(
        _ member: MemberName, interface: InterfaceName, at path: ObjectPath, arguments: [Value] = []
    ) throws(BusError) {
        try connection.send(.signal(path: path, interface: interface, member: member, arguments: arguments))
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` with the given new values, in
    /// the order given. Does nothing when both lists are empty.
    public func emitPropertiesChanged(
        interface: InterfaceName, at path: ObjectPath, changed: [(MemberName, Value)],
        invalidated: [MemberName] = []
    ) throws(BusError) {
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        try emit(
            "PropertiesChanged", interface: .properties, at: path,
            arguments: [
                .string(interface.rawValue),
                .properties(changed.map { ($0.0.rawValue, $0.1) }),
                .array(element: "s", invalidated.map { .string($0.rawValue) }),
            ])
    }

    // MARK: - Dispatch

    private func handle(_ message: Message) {
        let reply: Message?
        do {
            let values = try dispatch(message)
            reply = try message.makeReply(values)
        } catch let error as BusError {
            reply = try? message.makeErrorReply(error)
        } catch {
            reply = try? message.makeErrorReply(BusError(.failed, "\(error)"))
        }
        guard !message.noReply, let reply else { return }
        _ = try? connection.send(reply)
    }

    private func dispatch(_ message: Message) throws -> [Value] {
        guard let path = message.path, let member = message.member else {
            throw BusError(.unknownMethod, "method call without a path or member")
        }
        let interfaces = try interfaces(at: path)
        let method: Method
        if let name = message.interface {
            guard let interface = interfaces.first(where: { $0.name == name }) else {
                throw BusError(.unknownInterface, "object \(path) has no interface \(name)")
            }
            guard let found = interface.method(member) else {
                throw BusError(.unknownMethod, "interface \(name) has no method \(member)")
            }
            method = found
        } else {
            guard let found = interfaces.lazy.compactMap({ $0.method(member) }).first else {
                throw BusError(.unknownMethod, "object \(path) has no method \(member)")
            }
            method = found
        }
        let expected = method.inputSignature
        guard message.signature == expected else {
            throw BusError(
                .invalidArgs,
                "\(member) expects arguments of signature '\(expected)', got '\(message.signature)'")
        }
        return try method.handler(MethodCall(message: message, arguments: message.arguments()))
    }

    /// The interfaces answering at `path`: an exported object's own plus the standard ones, or
    /// just `Introspectable` and `Peer` for a node above an exported object.
    private func interfaces(at path: ObjectPath) throws(BusError) -> [Interface] {
        if let own = objects[path] {
            return own + [propertiesInterface(own), introspectableInterface(path), peerInterface]
        }
        guard objects.keys.contains(where: { $0.isDescendant(of: path) }) else {
            throw BusError(.unknownObject, "no object at \(path)")
        }
        return [introspectableInterface(path), peerInterface]
    }

    /// The immediate child node names of `path`, sorted.
    private func children(of path: ObjectPath) -> [String] {
        let depth = path.elements.count
        var names = Set<String>()
        for exported in objects.keys where exported.isDescendant(of: path) {
            names.insert(String(exported.elements[depth]))
        }
        return names.sorted()
    }

    // MARK: - Standard interfaces

    private func propertiesInterface(_ own: [Interface]) -> Interface {
        func lookUp(_ interfaceName: String) throws(BusError) -> [Interface] {
            if interfaceName.isEmpty { return own }
            guard let interface = own.first(where: { $0.name.rawValue == interfaceName }) else {
                throw BusError(.unknownInterface, "no interface \(interfaceName) here")
            }
            return [interface]
        }
        func property(_ interfaceName: String, _ name: String) throws(BusError) -> Property {
            guard let property = try lookUp(interfaceName).lazy.compactMap({ $0.property(name) }).first else {
                throw BusError(.unknownProperty, "no property \(name) in \(interfaceName)")
            }
            return property
        }
        return Interface(
            .properties,
            methods: [
                Method(
                    "Get", inputs: [Argument("interface_name", "s"), Argument("property_name", "s")],
                    outputs: [Argument("value", "v")]
                ) { call in
                    let property = try property(call.arguments[0].string ?? "", call.arguments[1].string ?? "")
                    return [.variant(property.get())]
                },
                Method(
                    "GetAll", inputs: [Argument("interface_name", "s")],
                    outputs: [Argument("properties", "a{sv}")]
                ) { call in
                    let properties = try lookUp(call.arguments[0].string ?? "").flatMap(\.properties)
                    return [.properties(properties.map { ($0.name.rawValue, $0.get()) })]
                },
                Method(
                    "Set",
                    inputs: [Argument("interface_name", "s"), Argument("property_name", "s"), Argument("value", "v")]
                ) { call in
                    let name = call.arguments[1].string ?? ""
                    _ = try property(call.arguments[0].string ?? "", name)
                    throw BusError(.propertyReadOnly, "property \(name) is read-only")
                },
            ],
            signals: [
                SignalDescription(
                    "PropertiesChanged",
                    arguments: [
                        Argument("interface_name", "s"), Argument("changed_properties", "a{sv}"),
                        Argument("invalidated_properties", "as"),
                    ])
            ])
    }

    private func introspectableInterface(_ path: ObjectPath) -> Interface {
        Interface(
            .introspectable,
            methods: [
                Method("Introspect", outputs: [Argument("xml_data", "s")]) { [unowned self] _ in
                    [.string(self.introspectionXML(at: path))]
                }
            ])
    }

    private var peerInterface: Interface {
        Interface(
            .peer,
            methods: [
                Method("Ping") { _ in [] },
                Method("GetMachineId", outputs: [Argument("machine_uuid", "s")]) { _ in
                    let id = try withDBusError { dbus_try_get_local_machine_id($0) }
                    guard let id else { throw BusError(.failed, "no machine ID") }
                    defer { dbus_free(id) }
                    return [.string(String(cString: id))]
                },
            ])
    }

    // MARK: - Introspection

    /// The introspection XML for `path`: its interfaces (standard ones included) and child nodes.
    public func introspectionXML(at path: ObjectPath) -> String {
        let interfaces = (try? interfaces(at: path)) ?? []
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        for interface in interfaces.sorted(by: { $0.name.rawValue < $1.name.rawValue }) {
            xml += IntrospectionXML.interface(interface)
        }
        for child in children(of: path) {
            xml += "  <node name=\"\(child)\"/>\n"
        }
        xml += "</node>\n"
        return xml
    }
}
