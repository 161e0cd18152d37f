internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Exports objects on a connection and answers every method call addressed to it.
///
/// Each object is a list of interface tables; the standard `Properties`, `Introspectable` and
/// `Peer` interfaces are added to every object and derived from those tables. Paths above an
/// exported object answer `Introspect` with their child nodes, so `busctl tree` finds it.
/// Calls run on the connection's dispatching thread.
public final class ObjectServer {
    /// The connection the objects are exported on.
    public let connection: Connection
    // Each exported object's interfaces with the standard ones appended, indexed once at
    // export: dispatch is then a few dictionary lookups, with nothing rebuilt per call.
    private var objects: [ObjectPath: DispatchTable] = [:]
    // Each exported object's own interfaces, without the standard ones.
    private var exported: [ObjectPath: [Interface]] = [:]
    // Families of objects looked up when a call arrives, each below its own path.
    var subtrees: [ObjectPath: Subtree] = [:]
    // Objects that are an org.freedesktop.DBus.ObjectManager for everything below them.
    var managers: Set<ObjectPath> = []
    // The object the last call went to: most calls go to the same one, found by one strcmp.
    // Read for every call and only assigned, never held across a call: exclusivity unchecked.
    @exclusivity(unchecked) private var lastCalled: (path: CName, table: DispatchTable)?
    private let senders = SenderNames()
    private let emptyReplies = EmptyReplies()

    // PropertiesChanged signals built or sent lately, most recent last, each an unsent template
    // whose copy goes out. A busy desktop flips Active back and forth, sending the same two
    // signals over and over; libdbus builds one in about 70,000 instructions (each value
    // appended rewrites the header's signature field) and copies it in a small fraction of that.
    // Only signals made of a few basic values are kept, so the cache stays small and quick to
    // search.
    private var recentSignals: [RecentSignal] = []
    private static let recentSignalLimit = 4
    private static let cachedSignalValueLimit = 4

    private struct RecentSignal {
        let interface: InterfaceName
        let path: ObjectPath
        let changed: [(MemberName, Value)]
        let template: Message

        func matches(_ interface: InterfaceName, _ path: ObjectPath, _ changed: [(MemberName, Value)]) -> Bool {
            self.interface == interface && self.path == path && self.changed.count == changed.count
                && zip(self.changed, changed).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        }
    }

    private var handlerID = 0

    /// Starts answering method calls on `connection`.
    public init(connection: Connection) {
        self.connection = connection
        // Without this libdbus answers org.freedesktop.DBus.Peer itself, on any path and with
        // any arguments; the object's own table checks signatures and paths like every other call.
        dbus_connection_set_route_peer_messages(connection.raw, 1)
        // Unowned: deinit removes the handler, so it never outlives this server.
        handlerID = connection.addMethodCallHandler { [unowned self] call in self.handle(call) }
    }

    deinit {
        connection.removeFilter(handlerID)
    }

    /// Exports `interfaces` at `path`, replacing what was there. With `managingObjects`, the
    /// object is also an `org.freedesktop.DBus.ObjectManager` for every object below it.
    public func export(_ interfaces: [Interface], at path: ObjectPath, managingObjects: Bool = false) {
        if managingObjects { managers.insert(path) } else { managers.remove(path) }
        objects[path] = DispatchTable(interfaces + standardInterfaces(interfaces, at: path))
        exported[path] = interfaces
        lastCalled = nil
    }

    /// Removes the object at `path`.
    public func unexport(_ path: ObjectPath) {
        objects[path] = nil
        exported[path] = nil
        managers.remove(path)
        lastCalled = nil
    }

    /// Exports a family of objects, one level below `prefix`, that come and go at run time
    /// without being exported one by one (sd-bus's fallback vtables): a call to
    /// `prefix/NAME` finds its object through `subtree` when it arrives, and one to a name
    /// the subtree does not know gets `UnknownObject`.
    public func exportSubtree(_ subtree: Subtree, under prefix: ObjectPath) {
        subtrees[prefix] = subtree
    }

    /// The paths of the exported objects (not those of subtrees).
    var exportedPaths: Dictionary<ObjectPath, [Interface]>.Keys { exported.keys }

    /// The own interfaces of the exported object at `path`.
    func exportedInterfaces(at path: ObjectPath) -> [Interface]? { exported[path] }

    /// The standard interfaces every object at `path` with `own` interfaces answers too.
    private func standardInterfaces(_ own: [Interface], at path: ObjectPath) -> [Interface] {
        var standard = [propertiesInterface(own), introspectableInterface(path), peerInterface]
        if managers.contains(path) { standard.append(objectManagerInterface(at: path)) }
        return standard
    }

    // MARK: - Signals

    /// Emits a signal from `path`.
    public func emit(
        _ member: MemberName, interface: InterfaceName, at path: ObjectPath, arguments: [Value] = []
    ) throws(BusError) {
        try connection.send(.signal(path: path, interface: interface, member: member, arguments: arguments))
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for the properties `names` of
    /// `interface` at `path`, their values read through the interface table's getters at
    /// once: a property that `invalidates` goes in the invalidated list, a `const` one or one
    /// whose changes are not announced is left out. Does nothing when none is left.
    ///
    /// - Throws: `UnknownObject`, `UnknownInterface` or `UnknownProperty` for a name the
    ///   object does not have; a send failure.
    public func emitPropertiesChanged(
        _ names: [MemberName], of interface: InterfaceName, at path: ObjectPath
    ) throws(BusError) {
        let table = try table(at: path)
        guard let own = table.interfaces.first(where: { $0.name == interface }) else {
            throw BusError(.unknownInterface, "object \(path) has no interface \(interface)")
        }
        var changed: [(MemberName, Value)] = []
        var invalidated: [MemberName] = []
        for name in names {
            guard let property = own.properties.first(where: { $0.name == name }) else {
                throw BusError(.unknownProperty, "interface \(interface) has no property \(name)")
            }
            switch property.changeSignal {
            case .emitsValue: changed.append((name, property.get()))
            case .invalidates: invalidated.append(name)
            case .constant, .none: break
            }
        }
        try emitPropertiesChanged(interface: interface, at: path, changed: changed, invalidated: invalidated)
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` with the given new values, in
    /// the order given. Does nothing when both lists are empty.
    public func emitPropertiesChanged(
        interface: InterfaceName, at path: ObjectPath, changed: [(MemberName, Value)],
        invalidated: [MemberName] = []
    ) throws(BusError) {
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        let cacheable =
            invalidated.isEmpty && changed.count <= Self.cachedSignalValueLimit && changed.allSatisfy { $0.1.isBasic }
        if cacheable, let index = recentSignals.lastIndex(where: { $0.matches(interface, path, changed) }) {
            let recent = recentSignals[index]
            if index != recentSignals.count - 1 { recentSignals.append(recentSignals.remove(at: index)) }
            try connection.send(recent.template.copy())
            return
        }
        let signal = try Message.signal(
            path: path, interface: .properties, member: .propertiesChanged,
            arguments: [
                .string(interface.rawValue),
                .properties(changed.map { ($0.0.rawValue, $0.1) }),
                .array(element: .string, invalidated.map { .string($0.rawValue) }),
            ])
        if cacheable {
            if recentSignals.count == Self.recentSignalLimit { recentSignals.removeFirst() }
            recentSignals.append(
                RecentSignal(interface: interface, path: path, changed: changed, template: try signal.copy()))
        }
        try connection.send(signal)
    }

    // MARK: - Dispatch

    /// Answers the method call `call`, libdbus's message, valid for the duration.
    private func handle(_ call: OpaquePointer) {
        let wantsReply = dbus_message_get_no_reply(call) == 0
        let reply: Message?
        do {
            let values: [Value]
            do {
                values = try dispatch(call)
            } catch is ReplyWritten {
                return
            }
            guard wantsReply else { return }
            if values.isEmpty {
                try emptyReplies.send(to: call, on: connection)
            } else {
                try Message.sendReply(to: call, values, on: connection)
            }
            return
        } catch let error as BusError {
            reply = wantsReply ? try? Message.errorReply(to: call, error) : nil
        } catch {
            reply = wantsReply ? try? Message.errorReply(to: call, BusError(.failed, "\(error)")) : nil
        }
        if let reply { connection.queue(reply) }
    }

    // Works on libdbus's C strings of the header: no Swift string is made for a call that
    // succeeds, only for the text of an error.
    private func dispatch(_ call: OpaquePointer) throws -> [Value] {
        guard let path = dbus_message_get_path(call), let member = dbus_message_get_member(call) else {
            throw BusError(.unknownMethod, "method call without a path or member")
        }
        let table = try table(at: path)
        let method: DispatchTable.Entry
        if let name = dbus_message_get_interface(call) {
            guard let methods = table.methods(of: name) else {
                throw BusError(
                    .unknownInterface, "object \(String(cString: path)) has no interface \(String(cString: name))")
            }
            guard let found = DispatchTable.method(member, in: methods) else {
                throw BusError(
                    .unknownMethod, "interface \(String(cString: name)) has no method \(String(cString: member))")
            }
            method = found
        } else {
            guard let found = table.method(named: member) else {
                throw BusError(
                    .unknownMethod, "object \(String(cString: path)) has no method \(String(cString: member))")
            }
            method = found
        }
        let signature = dbus_message_get_signature(call)
        guard method.inputSignature.matches(signature) else {
            throw BusError(
                .invalidArgs,
                "\(String(cString: member)) expects arguments of signature '\(method.method.inputSignature)', "
                    + "got '\(signature.map { String(cString: $0) } ?? "")'")
        }
        let arguments = try Message.arguments(of: call, count: method.argumentCount)
        if let writer = method.method.replyWriter {
            try ReplyWriter.sendReply(to: call, on: connection) { (reply) throws in
                try writer(MethodCall(raw: call, arguments: arguments, senders: senders), &reply)
            }
            throw ReplyWritten()
        }
        return try method.handler(MethodCall(raw: call, arguments: arguments, senders: senders))
    }

    /// Thrown once a method has sent its own reply: there is nothing left to send.
    private struct ReplyWritten: Error {}

    /// The dispatch table for a call to `rawPath`.
    private func table(at rawPath: UnsafePointer<CChar>) throws(BusError) -> DispatchTable {
        if let lastCalled, lastCalled.path.matches(rawPath) { return lastCalled.table }
        let path = ObjectPath(unchecked: String(cString: rawPath))
        let table = try table(at: path)
        if objects[path] != nil { lastCalled = (CName(path.rawValue), table) }
        return table
    }

    /// The dispatch table at `path`: an exported object's own interfaces plus the standard
    /// ones, or just `Introspectable` and `Peer` for a node above an exported object.
    private func table(at path: ObjectPath) throws(BusError) -> DispatchTable {
        if let table = objects[path] { return table }
        if let own = subtreeInterfaces(at: path) {
            return DispatchTable(own + standardInterfaces(own, at: path))
        }
        guard hasDescendants(path) else {
            throw BusError(.unknownObject, "no object at \(path)")
        }
        // Nodes above objects answer only Introspect and Ping: rare enough to build on demand.
        return DispatchTable([introspectableInterface(path), peerInterface])
    }

    /// The own interfaces of a subtree's object at `path`; nil if no subtree has one there.
    func subtreeInterfaces(at path: ObjectPath) -> [Interface]? {
        guard let (prefix, name) = path.parentAndName, let subtree = subtrees[prefix] else { return nil }
        return subtree.interfaces(name)
    }

    /// Whether any object lives below `path`.
    private func hasDescendants(_ path: ObjectPath) -> Bool {
        objects.keys.contains { $0.isDescendant(of: path) }
            || subtrees.contains { prefix, subtree in
                (prefix == path || prefix.isDescendant(of: path)) && !subtree.isEmpty()
            }
    }

    /// The interfaces answering at `path`, standard ones included.
    private func interfaces(at path: ObjectPath) throws(BusError) -> [Interface] {
        try table(at: path).interfaces
    }

    /// The immediate child node names of `path`, sorted.
    private func children(of path: ObjectPath) -> [String] {
        let depth = path.elements.count
        var names = Set<String>()
        for exported in objects.keys where exported.isDescendant(of: path) {
            names.insert(String(exported.elements[depth]))
        }
        for (prefix, subtree) in subtrees where prefix.isDescendant(of: path) && !subtree.isEmpty() {
            names.insert(String(prefix.elements[depth]))
        }
        if let subtree = subtrees[path] {
            // Numbers sort as numbers, the way a reader expects `busctl tree` to list them.
            return names.sorted() + subtree.names().sorted { ($0.count, $0) < ($1.count, $1) }
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

// MARK: - Dispatch table

/// One object's interfaces in dispatch order, with their methods listed for lookup by the C
/// strings of a call's header. Where two interfaces (or two methods of one interface) share a
/// name, the first one wins, as the specification's linear search in that order finds.
/// Classes, not structs: a lookup hands out one reference instead of copying every field.
private final class DispatchTable {
    final class Entry {
        let name: CName
        let method: Method
        /// `method.handler`, kept apart so a call retains the closure alone, not the whole method.
        let handler: (borrowing MethodCall) throws -> [Value]
        /// `method.inputSignature`, joined once here rather than on every call.
        let inputSignature: CName
        /// How many complete types `inputSignature` holds: the values a matching call carries.
        let argumentCount: Int

        init(_ method: Method) {
            name = CName(method.name.rawValue)
            self.method = method
            handler = method.handler
            inputSignature = CName(method.inputSignature.rawValue)
            argumentCount = method.inputSignature.completeTypes.count
        }
    }

    /// Every interface, the object's own first.
    let interfaces: [Interface]
    // The first interface of each name, in order, with the first method of each name.
    private let byInterface: [(name: CName, methods: [Entry])]
    // For calls without an interface field: the first method of each name over all interfaces.
    private let byMember: [Entry]

    init(_ interfaces: [Interface]) {
        self.interfaces = interfaces
        var byInterface: [(name: CName, methods: [Entry])] = []
        var byMember: [Entry] = []
        var seenInterfaces = Set<InterfaceName>()
        var seenMembers = Set<MemberName>()
        for interface in interfaces {
            var methods: [Entry] = []
            var seen = Set<MemberName>()
            for method in interface.methods {
                let entry = Entry(method)
                if seen.insert(method.name).inserted { methods.append(entry) }
                if seenMembers.insert(method.name).inserted { byMember.append(entry) }
            }
            if seenInterfaces.insert(interface.name).inserted {
                byInterface.append((CName(interface.name.rawValue), methods))
            }
        }
        self.byInterface = byInterface
        self.byMember = byMember
    }

    /// The methods of the first interface called `name`, or nil if the object has none.
    func methods(of name: UnsafePointer<CChar>) -> [Entry]? {
        byInterface.first { $0.name.matches(name) }?.methods
    }

    /// The method called `name` in the first interface that has one.
    func method(named name: UnsafePointer<CChar>) -> Entry? { Self.method(name, in: byMember) }

    /// The method called `name` among `methods`.
    static func method(_ name: UnsafePointer<CChar>, in methods: [Entry]) -> Entry? {
        methods.first { $0.name.matches(name) }
    }
}

/// The caller's unique name of the last call that asked for it, so a client making call after
/// call gets the same `String` back instead of a new one each time.
final class SenderNames {
    // Read and set only by the calls the server dispatches, one at a time.
    @exclusivity(unchecked) private var last = (raw: CName(""), name: "")

    /// `raw` as a `String`; nil (a peer-to-peer call) is "".
    func name(_ raw: UnsafePointer<CChar>?) -> String {
        guard let raw else { return "" }
        if !last.raw.matches(raw) { last = (CName(raw), String(cString: raw)) }
        return last.name
    }
}

/// Empty method returns made once per recent caller and copied for each reply after that.
///
/// libdbus spends about 7,000 instructions building a method return (a fresh header, then the
/// reply serial set into it), and less copying one and overwriting the reply serial in place.
/// Most calls that answer with nothing (Push, Pop, EndActivity) come from a
/// caller that has just made another, so the copy is what most replies cost. The copy holds
/// what `dbus_message_new_method_return` would: destination, reply serial, the no-reply flag,
/// no body; libdbus gives it a fresh serial when it is sent.
private final class EmptyReplies {
    private var recent: [(destination: CName, template: OpaquePointer)] = []
    private static let limit = 4

    deinit {
        for entry in recent { dbus_message_unref(entry.template) }
    }

    /// Sends the empty reply to the method call `call`.
    func send(to call: OpaquePointer, on connection: Connection) throws(BusError) {
        guard let reply = reply(to: call) else { throw BusError.outOfMemory }
        defer { dbus_message_unref(reply) }
        _ = dbus_connection_send(connection.raw, reply, nil)
    }

    private func reply(to call: OpaquePointer) -> OpaquePointer? {
        let sender = dbus_message_get_sender(call)
        let template: OpaquePointer
        if let entry = recent.last(where: { $0.destination.matches(sender) }) {
            template = entry.template
        } else {
            guard let made = Self.template(destination: sender) else { return nil }
            if recent.count == Self.limit { dbus_message_unref(recent.removeFirst().template) }
            recent.append((sender.map(CName.init) ?? CName(""), made))
            template = made
        }
        guard let reply = dbus_message_copy(template) else { return nil }
        guard dbus_message_set_reply_serial(reply, dbus_message_get_serial(call)) != 0 else {
            dbus_message_unref(reply)
            return nil
        }
        return reply
    }

    /// What `dbus_message_new_method_return` makes, with the reply serial (a placeholder
    /// here) as the header's first field: libdbus walks the fields to the one it overwrites,
    /// so the first is the quickest to reach.
    private static func template(destination: UnsafePointer<CChar>?) -> OpaquePointer? {
        guard let template = dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN) else { return nil }
        dbus_message_set_no_reply(template, 1)
        guard dbus_message_set_reply_serial(template, 1) != 0,
            destination.map({ dbus_message_set_destination(template, $0) != 0 }) ?? true
        else {
            dbus_message_unref(template)
            return nil
        }
        return template
    }
}

/// A name kept NUL-terminated, to compare with a C string from a message header as it is.
private struct CName {
    private let bytes: ContiguousArray<CChar>

    init(_ text: String) { bytes = text.utf8CString }
    init(_ raw: UnsafePointer<CChar>) { bytes = ContiguousArray(UnsafeBufferPointer(start: raw, count: strlen(raw) + 1)) }

    /// Whether `raw` spells the same name; a nil `raw` counts as the empty string.
    func matches(_ raw: UnsafePointer<CChar>?) -> Bool {
        guard let raw else { return bytes.count == 1 }
        return bytes.withUnsafeBufferPointer { strcmp($0.baseAddress!, raw) == 0 }
    }
}

// Constants rather than literals at the call site: a literal is validated every time it runs.
extension MemberName {
    fileprivate static let propertiesChanged: MemberName = "PropertiesChanged"
}

extension Signature {
    fileprivate static let string: Signature = "s"
}
