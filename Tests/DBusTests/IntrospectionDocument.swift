import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Introspection XML parsed into the parts tests look at; parsing fails on XML that is not
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

    /// Parses `xml`, or returns nil if it is not well-formed.
    init?(_ xml: String) {
        let builder = Builder()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = builder
        guard parser.parse(), !builder.malformed, builder.depth == 0 else { return nil }
        self = builder.document
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var document = IntrospectionDocument(empty: ())
        var depth = 0
        var malformed = false
        private var inMethod = false
        private var inSignal = false
        private var inProperty = false

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?,
            qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            depth += 1
            let name = attributes["name"] ?? ""
            // Members outside an interface are a malformed document, not a crash of the test.
            let needsInterface = ["method", "signal", "property", "arg", "annotation"].contains(element)
            guard !needsInterface || !document.interfaces.isEmpty else {
                malformed = true
                parser.abortParsing()
                return
            }
            switch element {
            case "node" where depth == 2:
                document.children.append(name)
            case "interface":
                document.interfaces.append(InterfaceEntry(name: name))
            case "method":
                inMethod = true
                document.interfaces[document.interfaces.count - 1].methods.append(Member(name: name))
            case "signal":
                inSignal = true
                document.interfaces[document.interfaces.count - 1].signals.append(Member(name: name))
            case "property":
                inProperty = true
                document.interfaces[document.interfaces.count - 1].properties.append(
                    PropertyEntry(name: name, type: attributes["type"] ?? "", access: attributes["access"] ?? ""))
            case "arg":
                let argument = (attributes["type"] ?? "") + " " + (attributes["direction"] ?? "")
                let last = document.interfaces.count - 1
                if inMethod, !document.interfaces[last].methods.isEmpty {
                    document.interfaces[last].methods[document.interfaces[last].methods.count - 1].arguments
                        .append(argument)
                } else if inSignal, !document.interfaces[last].signals.isEmpty {
                    document.interfaces[last].signals[document.interfaces[last].signals.count - 1].arguments
                        .append(argument)
                }
            case "annotation" where inProperty && name == "org.freedesktop.DBus.Property.EmitsChangedSignal":
                let last = document.interfaces.count - 1
                guard !document.interfaces[last].properties.isEmpty else { break }
                document.interfaces[last].properties[document.interfaces[last].properties.count - 1]
                    .emitsChangedSignal = attributes["value"]
            default:
                break
            }
        }

        func parser(
            _ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?
        ) {
            depth -= 1
            switch element {
            case "method": inMethod = false
            case "signal": inSignal = false
            case "property": inProperty = false
            default: break
            }
        }
    }

    private init(empty: Void) {}
}
