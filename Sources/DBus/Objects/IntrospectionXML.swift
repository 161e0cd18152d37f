/// Writes introspection XML from an interface table. Every name in it is a validated D-Bus
/// name or signature, none of which can hold XML's special characters.
enum IntrospectionXML {
    static func interface(_ interface: Interface) -> String {
        var xml = "  <interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            let arguments = method.inputs.map { argument($0, direction: "in") }
                + method.outputs.map { argument($0, direction: "out") }
            xml += element("method", name: method.name.rawValue, children: arguments)
        }
        for signal in interface.signals {
            xml += element("signal", name: signal.name.rawValue, children: signal.arguments.map { argument($0, direction: nil) })
        }
        for property in interface.properties {
            xml += "    <property name=\"\(property.name)\" type=\"\(property.type)\" access=\"read\">\n"
            xml += "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\""
                + " value=\"\(property.changeSignal.rawValue)\"/>\n"
            xml += "    </property>\n"
        }
        xml += "  </interface>\n"
        return xml
    }

    private static func argument(_ argument: Argument, direction: String?) -> String {
        let direction = direction.map { " direction=\"\($0)\"" } ?? ""
        return "      <arg name=\"\(escape(argument.name))\" type=\"\(argument.type)\"\(direction)/>\n"
    }

    private static func element(_ kind: String, name: String, children: [String]) -> String {
        guard !children.isEmpty else { return "    <\(kind) name=\"\(name)\"/>\n" }
        return "    <\(kind) name=\"\(name)\">\n" + children.joined() + "    </\(kind)>\n"
    }

    /// Argument names are free text; escape what XML attributes cannot hold.
    static func escape(_ text: String) -> String { XMLText.escaped(text, forAttribute: true) }
}
