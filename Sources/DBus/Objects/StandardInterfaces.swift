/// The standard interfaces every exported object answers besides its own (`Properties`,
/// `Introspectable`, `Peer`), each derived from the object's own interface tables, and the
/// introspection XML they describe.
extension ObjectServer {
    /// The immediate child node names of `path`, sorted.
    func children(of path: ObjectPath) -> [String] {
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

    /// `Properties` over `own`, whose getters read `object` (nil: an object exported on its own).
    func propertiesInterface(_ own: [Interface], of object: AnyObject?) -> Interface {
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
                    return [.variant(property.value(of: object))]
                },
                Method(
                    "GetAll", inputs: [Argument("interface_name", "s")],
                    outputs: [Argument("properties", "a{sv}")]
                ) { call in
                    let properties = try lookUp(call.arguments[0].string ?? "").flatMap(\.properties)
                    return [.properties(properties.map { ($0.name.rawValue, $0.value(of: object)) })]
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
            signals: [SignalDescription(PropertiesInterface.propertiesChanged.declaration)])
    }

    func introspectableInterface(_ path: ObjectPath) -> Interface {
        Interface(
            .introspectable,
            methods: [
                Method("Introspect", outputs: [Argument("xml_data", "s")]) { [unowned self] _ in
                    [.string(self.introspectionXML(at: path))]
                }
            ])
    }

    var peerInterface: Interface {
        Interface(
            .peer,
            methods: [
                Method("Ping") { _ in [] },
                Method("GetMachineId", outputs: [Argument("machine_uuid", "s")]) { _ in
                    [.string(try localMachineID())]
                },
            ])
    }

    // MARK: - Introspection

    /// The introspection XML for `path`: its interfaces (standard ones included) and child nodes.
    public func introspectionXML(at path: ObjectPath) -> String {
        let interfaces = (try? table(at: path).interfaces) ?? []
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
