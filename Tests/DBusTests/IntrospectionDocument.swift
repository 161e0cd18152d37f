import BusTestSupport

/// Introspection XML in the parts the DBus tests look at; parsing fails on XML that is not
/// well-formed, so a test also proves the document is.
struct IntrospectionDocument {
    struct Member: Equatable {
        var name: String
        /// `type` of every `<arg>`, with its direction (`in`/`out`, or "" for signals).
        var arguments: [String] = []
    }

    struct PropertyEntry: Equatable {
        var name: String
        var type: String
        var access: String
        var emitsChangedSignal: String?
    }

    struct InterfaceEntry {
        var name: String
        var methods: [Member] = []
        var signals: [Member] = []
        var properties: [PropertyEntry] = []
    }

    var interfaces: [InterfaceEntry] = []
    /// The `name` of each child `<node>`.
    var children: [String] = []

    func interface(_ name: String) -> InterfaceEntry? { interfaces.first { $0.name == name } }

    /// Parses `xml` (`IntrospectionElement`), or returns nil if it is not well-formed or holds
    /// members outside an interface.
    init?(_ xml: String) {
        guard let root = IntrospectionElement(parsing: xml) else { return nil }
        let members: Set = ["method", "signal", "property", "arg", "annotation"]
        guard !root.children.contains(where: { members.contains($0.name) }) else { return nil }
        children = root.elements("node").map { $0["name"] ?? "" }
        interfaces = root.elements("interface").map { element in
            InterfaceEntry(
                name: element["name"] ?? "",
                methods: element.elements("method").map(Self.member),
                signals: element.elements("signal").map(Self.member),
                properties: element.elements("property").map { property in
                    PropertyEntry(
                        name: property["name"] ?? "", type: property["type"] ?? "", access: property["access"] ?? "",
                        emitsChangedSignal: property.elements("annotation")
                            .first { $0["name"] == "org.freedesktop.DBus.Property.EmitsChangedSignal" }?["value"])
                })
        }
    }

    /// A method or signal, each argument as its type and direction ("" for none given).
    private static func member(_ element: IntrospectionElement) -> Member {
        Member(
            name: element["name"] ?? "",
            arguments: element.elements("arg").map { ($0["type"] ?? "") + " " + ($0["direction"] ?? "") })
    }
}
