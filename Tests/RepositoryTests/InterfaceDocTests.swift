import Foundation
import NetActivityContract
import Testing

/// One interface as the introspection XML or the doc's tables describe it.
struct DescribedInterface: Equatable, CustomStringConvertible {
    /// Method name → (in signature, out signature).
    var methods: [String: Signatures] = [:]
    /// Property name → type, and how it is announced (`true`, `invalidates`, `const`).
    var properties: [String: PropertyShape] = [:]

    struct Signatures: Equatable { var input = "", output = "" }
    struct PropertyShape: Equatable { var type: String, emits: String }

    var description: String {
        let methods = methods.sorted { $0.key < $1.key }.map { "\($0.key)(\($0.value.input))→(\($0.value.output))" }
        let properties = properties.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.type) [\($0.value.emits)]" }
        return (methods + properties).joined(separator: ", ")
    }
}

/// Reads `dbus/io.github.netactivity.NetActivity1.xml`: interfaces, methods with their argument
/// types, properties with their type and `EmitsChangedSignal` annotation.
func interfacesInXML(_ xml: String) -> [String: DescribedInterface] {
    let withoutComments = xml.replacing(/<!--(.|\n)*?-->/, with: "")
    var interfaces: [String: DescribedInterface] = [:]
    var interface: String?
    var method: String?
    var property: String?
    for match in withoutComments.matches(of: /<(\w+)((?:\s+\w+(?:\.\w+)*="[^"]*")*)\s*\/?>/) {
        var attributes: [String: String] = [:]
        for attribute in match.output.2.matches(of: /(\w+)="([^"]*)"/) {
            attributes[String(attribute.output.1)] = String(attribute.output.2)
        }
        let name = attributes["name"] ?? ""
        switch match.output.1 {
        case "interface":
            interface = name
            interfaces[name] = DescribedInterface()
            method = nil
            property = nil
        case "method":
            guard let interface else { continue }
            interfaces[interface]?.methods[name] = .init()
            method = name
            property = nil
        case "arg":
            guard let interface, let method else { continue }
            let type = attributes["type"] ?? ""
            if attributes["direction"] == "out" {
                interfaces[interface]?.methods[method]?.output += type
            } else {
                interfaces[interface]?.methods[method]?.input += type
            }
        case "property":
            guard let interface else { continue }
            interfaces[interface]?.properties[name] = .init(type: attributes["type"] ?? "", emits: "true")
            property = name
            method = nil
        case "annotation":
            guard let interface, let property, name == "org.freedesktop.DBus.Property.EmitsChangedSignal" else { continue }
            interfaces[interface]?.properties[property]?.emits = attributes["value"] ?? "true"
        default:
            break
        }
    }
    return interfaces
}

/// Reads the method and property tables of `docs/interface.md`. A table belongs to the last
/// interface name written in backticks before it; its first header cell says what it lists.
func interfacesInDoc(_ markdown: String) -> [String: DescribedInterface] {
    var interfaces: [String: DescribedInterface] = [:]
    var interface: String?
    var table: String?
    for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
        guard line.hasPrefix("|") else {
            table = nil
            if let last = line.matches(of: /`(io\.github\.netactivity\.NetActivity1(?:\.\w+)?)`/).last {
                interface = String(last.output.1)
            }
            continue
        }
        let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = cells.first else { continue }
        if table == nil {
            table = first
            continue
        }
        guard let interface, first.hasPrefix("`"), !first.hasPrefix("`-") else { continue }
        let name = first.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
        func types(_ cell: String) -> String {
            cell == "—" ? "" : cell.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                .split(separator: ",").map { $0.split(separator: " ").first.map(String.init) ?? "" }.joined()
        }
        switch table {
        case "method" where cells.count >= 3:
            interfaces[interface, default: .init()].methods[name] = .init(input: types(cells[1]), output: types(cells[2]))
        case "property" where cells.count >= 4:
            let announced = cells[3]
            let emits = announced.contains("const") ? "const" : announced.contains("invalidation") ? "invalidates" : "true"
            interfaces[interface, default: .init()].properties[name] = .init(
                type: cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), emits: emits)
        default:
            break
        }
    }
    return interfaces
}

/// `docs/interface.md` says what `dbus/io.github.netactivity.NetActivity1.xml` says: the same
/// interfaces, methods, argument types, properties, types and change signalling, no more.
@Suite struct InterfaceDocTests {
    let xml: String
    let doc: String

    init() throws {
        xml = try Repository.text("dbus/io.github.netactivity.NetActivity1.xml")
        doc = try Repository.text("docs/interface.md")
    }

    @Test func theXMLIsReadAsExpected() {
        let interfaces = interfacesInXML(xml)
        #expect(Set(interfaces.keys) == [NetActivityBus.interface.rawValue, NetActivityBus.activityInterface.rawValue])
        #expect(interfaces[NetActivityBus.interface.rawValue]?.methods["UpdateActivity"] == .init(input: "utt", output: ""))
        #expect(interfaces[NetActivityBus.interface.rawValue]?.properties["Activities"] == .init(type: "a(ussttt)", emits: "invalidates"))
    }

    @Test func theDocDescribesExactlyTheXMLsInterfaces() {
        let described = interfacesInDoc(doc)
        let declared = interfacesInXML(xml)
        #expect(Set(described.keys).isSubset(of: Set(declared.keys)), "the doc has tables for \(described.keys.sorted())")
        for (name, interface) in declared {
            #expect(doc.contains("`\(name)`"), "the doc does not name \(name)")
            #expect(described[name, default: .init()] == interface, """
                \(name)
                  in the XML: \(interface)
                  in docs/interface.md: \(described[name, default: .init()])
                """)
        }
    }

    @Test func theDocNamesEveryErrorTheXMLNamesAndNoOther() {
        let errorsInXML = Set(xml.matches(of: /(?:Error)?\.([A-Z][A-Za-z]+)\b/).map { String($0.output.1) })
            .filter { $0 != "DBus" && $0 != "Property" && $0 != "EmitsChangedSignal" }
        for error in xml.matches(of: /Error\.([A-Z]\w+)/).map({ String($0.output.1) }) {
            #expect(doc.contains("`\(error)`") || doc.contains("Error.\(error)`"), "the doc does not name the error \(error)")
        }
        for error in doc.matches(of: /Error\.([A-Z]\w+)/).map({ String($0.output.1) }) {
            #expect(errorsInXML.contains(error), "the doc names an error the XML does not: \(error)")
        }
    }

    @Test func theDocStatesTheContractsLimits() {
        let limits = [
            NetActivityBus.Limits.sharedCount, UInt32(NetActivityBus.Limits.labelBytes),
            UInt32(NetActivityBus.Limits.activitiesPerOwner), UInt32(NetActivityBus.Limits.activities),
        ]
        for limit in limits {
            let written = limit.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
            #expect(doc.contains(written), "docs/interface.md does not state the limit \(written)")
        }
        #expect(doc.contains(NetActivityBus.path.rawValue) && doc.contains(NetActivityBus.activitiesPath.rawValue))
    }
}
