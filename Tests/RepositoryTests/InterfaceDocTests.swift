import DBus
import Foundation
import NetActivityContract
import Testing

/// One interface as its descriptor declares it or the doc's tables describe it.
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

/// An interface as its descriptor declares it, in the shape the doc's tables are read into.
func described(_ interface: InterfaceDescriptor) -> DescribedInterface {
    var result = DescribedInterface()
    for method in interface.methods {
        result.methods[method.name.rawValue] = .init(input: method.inputSignature, output: method.outputSignature)
    }
    for property in interface.properties {
        result.properties[property.name.rawValue] = .init(type: property.signature.rawValue, emits: property.changes.rawValue)
    }
    return result
}

/// The interfaces the contract declares.
let declaredInterfaces = [NetActivityInterface.descriptor, ActivityObjectInterface.descriptor]

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

/// `dbus/io.github.netactivity.NetActivity1.xml` is what the descriptors generate, and
/// `docs/interface.md` says what they declare: the same interfaces, methods, argument types,
/// properties, types and change signalling, no more.
@Suite struct InterfaceDocTests {
    let xml: String
    let doc: String

    init() throws {
        xml = try Repository.text("dbus/io.github.netactivity.NetActivity1.xml")
        doc = try Repository.text("docs/interface.md")
    }

    @Test func theCheckedInXMLIsGeneratedFromTheDescriptors() {
        let generated = NetActivityInterface.introspectionXML
        // Compared outside #expect, which would print both documents whole before the diff.
        let isCurrent = xml == generated
        #expect(isCurrent, """
            dbus/io.github.netactivity.NetActivity1.xml is not what the descriptors generate; run \
            `make interface`. The first lines that differ (- file, + generated):
            \(firstDifferences(xml, generated))
            """)
    }

    @Test func theExtensionsNamesAreGeneratedFromTheDescriptors() throws {
        let script = try Repository.text("gnome-extension/src/interface.js")
        let generated = NetActivityInterface.gjsDeclaration
        let isCurrent = script == generated
        #expect(isCurrent, """
            gnome-extension/src/interface.js is not what the descriptors generate; run \
            `make interface`. The first lines that differ (- file, + generated):
            \(firstDifferences(script, generated))
            """)
    }

    /// The extension's other sources name the interface only through interface.js: each
    /// property they read is declared, and no member or property name is spelled in them.
    @Test func theExtensionReadsOnlyDeclaredPropertiesAndSpellsNoName() throws {
        let declared = [
            "MAIN_PROPERTIES": Set(NetActivityInterface.descriptor.properties.map { GJSDeclaration.key($0.name.rawValue) }),
            "ACTIVITY_PROPERTIES": Set(ActivityObjectInterface.descriptor.properties.map { GJSDeclaration.key($0.name.rawValue) }),
        ]
        let names = Set(
            declaredInterfaces.flatMap { $0.methods.map(\.name.rawValue) + $0.properties.map(\.name.rawValue) })
        let folder = Repository.root.appendingPathComponent("gnome-extension/src")
        let sources = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasSuffix(".js") && $0 != "interface.js" }.sorted()
        #expect(sources.contains("service.js"))
        var read = 0
        for source in sources {
            let text = try Repository.text("gnome-extension/src/" + source)
            for match in text.matches(of: /\b(MAIN_PROPERTIES|ACTIVITY_PROPERTIES)\.(\w+)/) {
                read += 1
                let (table, key) = (String(match.output.1), String(match.output.2))
                #expect(declared[table]?.contains(key) == true, "\(source) reads \(table).\(key), which is not declared")
            }
            for match in text.matches(of: /'([A-Za-z]+)'|"([A-Za-z]+)"/) {
                let word = String(match.output.1 ?? match.output.2 ?? "")
                #expect(!names.contains(word), "\(source) spells '\(word)'; read it from interface.js")
            }
        }
        #expect(read >= 10, "the extension reads its properties through interface.js")
    }

    @Test func theDocIsReadAsExpected() {
        let interfaces = interfacesInDoc(doc)
        #expect(interfaces[NetActivityBus.interface.rawValue]?.methods["UpdateActivity"] == .init(input: "utt", output: ""))
        #expect(interfaces[NetActivityBus.interface.rawValue]?.properties["Activities"] == .init(type: "a(ussttt)", emits: "invalidates"))
    }

    @Test func theDocDescribesExactlyTheDeclaredInterfaces() {
        let inDoc = interfacesInDoc(doc)
        #expect(Set(inDoc.keys) == Set(declaredInterfaces.map(\.name.rawValue)), "the doc has tables for \(inDoc.keys.sorted())")
        for interface in declaredInterfaces {
            let name = interface.name.rawValue
            let declared = described(interface)
            #expect(inDoc[name, default: .init()] == declared, """
                \(name)
                  declared: \(declared)
                  in docs/interface.md: \(inDoc[name, default: .init()])
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

/// The first few lines where `file` and `generated` differ, as `- file` / `+ generated` pairs.
func firstDifferences(_ file: String, _ generated: String, limit: Int = 8) -> String {
    let old = file.split(separator: "\n", omittingEmptySubsequences: false)
    let new = generated.split(separator: "\n", omittingEmptySubsequences: false)
    var lines: [String] = []
    for index in 0..<max(old.count, new.count) where lines.count < 2 * limit {
        let before = index < old.count ? String(old[index]) : nil
        let after = index < new.count ? String(new[index]) : nil
        guard before != after else { continue }
        lines.append("line \(index + 1): - \(before ?? "(end of file)")")
        lines.append("line \(index + 1): + \(after ?? "(end of output)")")
    }
    return lines.joined(separator: "\n")
}
