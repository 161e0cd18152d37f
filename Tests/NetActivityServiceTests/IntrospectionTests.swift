import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityContract
import NetActivityService
import Testing

/// docs/interface.md, "Names": Introspectable on `/` down to the object, `busctl tree`, the
/// checked-in interface XML, and `org.freedesktop.DBus.Peer`.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct IntrospectionTests {
    /// `/`, `/io`, … each with the one child node it should list.
    static let ancestors: [(path: ObjectPath, child: String)] = [
        ("/", "io"), ("/io", "github"), ("/io/github", "netactivity"),
        ("/io/github/netactivity", "NetActivity1"),
    ]

    @Test func busctlTreeShowsTheObject() throws {
        try requireTool("busctl")
        let service = try ServiceDaemon()
        let result = try service.busctl(["tree", NetActivityBus.name.rawValue])
        try #require(result.succeeded, "\(result)")
        // busctl draws the tree below the implicit root `/`: one path per line after the box
        // drawing characters.
        let paths = result.stdout.split(separator: "\n").compactMap { line in
            line.firstIndex(of: "/").map { String(line[$0...]).trimmingCharacters(in: .whitespaces) }
        }
        #expect(paths == ["/io", "/io/github", "/io/github/netactivity", "/io/github/netactivity/NetActivity1"],
                "busctl tree printed:\n\(result.stdout)")
    }

    @Test func everyAncestorListsItsChildNode() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        for (path, child) in Self.ancestors {
            let root = try #require(IntrospectionElement(parsing: try client.introspect(path)))
            #expect(root.name == "node")
            let children = root.elements("node").compactMap { $0["name"] }
            #expect(children == [child], "Introspect of \(path)")
            let interfaces = root.elements("interface").compactMap { $0["name"] }
            #expect(interfaces.contains(InterfaceName.introspectable.rawValue), "\(path) lists \(interfaces)")
            #expect(!interfaces.contains(NetActivityBus.interface.rawValue), "\(path) is not the object")
        }

        let root = try #require(IntrospectionElement(parsing: try client.introspect(NetActivityBus.path)))
        #expect(root.elements("node").isEmpty, "the object has no children")
        let interfaces = Set(root.elements("interface").compactMap { $0["name"] })
        #expect(interfaces == [
            NetActivityBus.interface.rawValue, InterfaceName.properties.rawValue,
            InterfaceName.introspectable.rawValue, InterfaceName.peer.rawValue, InterfaceName.objectManager.rawValue,
        ])
    }

    @Test func gdbusIntrospectReadsTheObject() throws {
        try requireTool("gdbus")
        let service = try ServiceDaemon()
        let result = try run("gdbus", [
            "introspect", "--address", service.bus.address, "--dest", NetActivityBus.name.rawValue,
            "--object-path", NetActivityBus.path.rawValue,
        ])
        try #require(result.succeeded, "\(result)")
        let text = result.stdout.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        for expected in [
            "interface io.github.netactivity.NetActivity1 {", "Push();", "Pop();",
            "BeginActivity(in s label, out u id);", "UpdateActivity(in u id, in t completed, in t total);",
            "EndActivity(in u id);", "readonly b Active = false;", "readonly b Visible = false;",
            "readonly u Count = 0;", "readonly d Progress = -1.0;", "readonly a(ussttt) Activities = [];",
            "readonly s Version = '", "interface org.freedesktop.DBus.Properties {",
            "interface org.freedesktop.DBus.Introspectable {", "interface org.freedesktop.DBus.Peer {",
        ] {
            #expect(text.contains(expected), "gdbus introspect lacks \(expected.debugDescription):\n\(result.stdout)")
        }

        let recursive = try run("gdbus", [
            "introspect", "--address", service.bus.address, "--dest", NetActivityBus.name.rawValue,
            "--object-path", "/", "--recurse", "--only-properties",
        ])
        try #require(recursive.succeeded, "\(recursive)")
        #expect(recursive.stdout.contains("node /io/github/netactivity/NetActivity1 {"), "\(recursive.stdout)")
    }

    @Test func runningInterfaceEqualsTheCheckedInXML() throws {
        let file = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/io.github.netactivity.NetActivity1.xml")
        let checkedIn = try InterfaceShape(
            named: NetActivityBus.interface.rawValue, in: String(contentsOf: file, encoding: .utf8), source: file.path)

        let service = try ServiceDaemon()
        let running = try InterfaceShape(
            named: NetActivityBus.interface.rawValue, in: try service.probe().introspect(NetActivityBus.path),
            source: "Introspect of the running service")

        let differences = running.differences(from: checkedIn)
        #expect(differences.isEmpty, "the running service and \(file.lastPathComponent) differ:\n\(differences.joined(separator: "\n"))")
        let declared = NetActivityInterface.descriptor
        #expect(checkedIn.methods.mapValues { method in
            ["in", "out"].map { direction in method.arguments.filter { $0.direction == direction }.map(\.type).joined() }
        } == Dictionary(uniqueKeysWithValues: declared.methods.map {
            ($0.name.rawValue, [$0.inputSignature, $0.outputSignature])
        }))
        #expect(checkedIn.properties.mapValues(\.type) == Self.types(of: declared))
        for property in declared.properties {
            #expect(checkedIn.properties[property.name.rawValue]?.access == "read", "\(property.name)")
            #expect(
                checkedIn.properties[property.name.rawValue]?.annotations
                    == [InterfaceShape.emitsChangedSignal: property.changes.rawValue], "\(property.name)")
        }
    }

    @Test func runningActivityObjectEqualsTheCheckedInXML() throws {
        let file = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dbus/io.github.netactivity.NetActivity1.xml")
        let checkedIn = try InterfaceShape(
            named: NetActivityBus.activityInterface.rawValue, in: String(contentsOf: file, encoding: .utf8),
            source: file.path)
        let service = try ServiceDaemon()
        let client = try service.probe()
        let id = try client.begin("introspected")
        let running = try InterfaceShape(
            named: NetActivityBus.activityInterface.rawValue, in: try client.introspect(NetActivityBus.activityPath(id)),
            source: "Introspect of a running activity object")
        let differences = running.differences(from: checkedIn)
        #expect(differences.isEmpty, "activity object and \(file.lastPathComponent) differ:\n\(differences.joined(separator: "\n"))")
        let declared = ActivityObjectInterface.descriptor
        #expect(declared.methods.isEmpty && checkedIn.methods.isEmpty)
        #expect(checkedIn.properties.mapValues(\.type) == Self.types(of: declared))
        for property in declared.properties {
            #expect(
                checkedIn.properties[property.name.rawValue]?.annotations
                    == [InterfaceShape.emitsChangedSignal: property.changes.rawValue], "\(property.name)")
        }
    }

    // MARK: - The contract's list

    /// The contract's methods (in and out signatures) and properties (type and change signal),
    /// written out here so that the descriptors, the XML generated from them and the running
    /// service cannot drift together.
    static let contractMethods: [String: [String]] = [
        "Push": ["", ""], "Pop": ["", ""], "BeginActivity": ["s", "u"], "BeginActivityWithHints": ["sa{sv}", "u"],
        "UpdateActivity": ["utt", ""], "UpdateActivityFraction": ["ud", ""], "EndActivity": ["u", ""],
    ]
    static let contractProperties: [String: [String]] = [
        "Active": ["b", "true"], "Visible": ["b", "true"], "Count": ["u", "true"], "Progress": ["d", "true"],
        "Rate": ["d", "true"], "Activities": ["a(ussttt)", "invalidates"], "Version": ["s", "const"],
        "InterfaceVersion": ["u", "const"],
    ]
    static let contractActivityProperties: [String: [String]] = [
        "Id": ["u", "const"], "Label": ["s", "const"], "Owner": ["s", "const"], "Started": ["t", "const"],
        "Completed": ["t", "true"], "Total": ["t", "true"], "ProcessID": ["u", "true"], "UserID": ["u", "true"],
        "Application": ["s", "true"], "ClaimedApplication": ["s", "const"], "Icon": ["s", "const"],
        "Kind": ["s", "const"], "Fraction": ["d", "true"], "Rate": ["d", "true"],
    ]

    @Test func theDescriptorsDeclareTheContractsMembers() {
        let main = NetActivityInterface.descriptor
        #expect(main.name == NetActivityBus.interface)
        #expect(Dictionary(uniqueKeysWithValues: main.methods.map {
            ($0.name.rawValue, [$0.inputSignature, $0.outputSignature])
        }) == Self.contractMethods)
        for (declared, contract) in [
            (main, Self.contractProperties), (ActivityObjectInterface.descriptor, Self.contractActivityProperties),
        ] {
            #expect(Dictionary(uniqueKeysWithValues: declared.properties.map {
                ($0.name.rawValue, [$0.signature.rawValue, $0.changes.rawValue])
            }) == contract, "\(declared.name)")
        }
        #expect(ActivityObjectInterface.descriptor.name == NetActivityBus.activityInterface)
    }

    /// Property name → signature, as `interface` declares them.
    static func types(of interface: InterfaceDescriptor) -> [String: String] {
        Dictionary(uniqueKeysWithValues: interface.properties.map { ($0.name.rawValue, $0.signature.rawValue) })
    }

    // MARK: - Peer

    @Test func pingAnswersOnTheObjectWithAndWithoutInterface() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        #expect(try client.call("Ping", interface: .peer).isEmpty)
        #expect(try client.call("Ping", interface: nil).isEmpty)
    }

    @Test func getMachineIdMatchesTheBusMachineId() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let daemonReply = try client.connection.call(
            .methodCall(
                destination: .bus, path: "/org/freedesktop/DBus", interface: .peer, member: "GetMachineId"),
            timeout: .seconds(10))
        let expected = try #require(try daemonReply.arguments().first?.string)

        for interface in [InterfaceName.peer, nil] {
            let reply = try client.call("GetMachineId", interface: interface)
            #expect(reply.map(\.signature) == ["s"])
            let id = try #require(reply.first?.string)
            #expect(id.count == 32 && id.allSatisfy(\.isHexDigit), "not a machine id: \(id.debugDescription)")
            #expect(id == expected, "the service and dbus-daemon run on the same machine")
        }
    }
}

// MARK: - Comparing interfaces

/// One interface of an introspection document, reduced to what a client depends on:
/// methods and signals with their arguments, properties with type, access and annotations.
/// Comments, whitespace and the order of members are ignored; the order of arguments is not.
struct InterfaceShape {
    static let emitsChangedSignal = "org.freedesktop.DBus.Property.EmitsChangedSignal"

    struct Argument: Equatable, CustomStringConvertible {
        var name: String?
        var type: String
        var direction: String
        var description: String { "\(direction) \(type) \(name ?? "(unnamed)")" }
    }

    struct Member: Equatable {
        var arguments: [Argument]
        var annotations: [String: String]
    }

    struct PropertyShape: Equatable {
        var type: String
        var access: String
        var annotations: [String: String]
    }

    var methods: [String: Member] = [:]
    var signals: [String: Member] = [:]
    var properties: [String: PropertyShape] = [:]
    var annotations: [String: String] = [:]

    /// Parses the interface called `name` out of introspection XML.
    ///
    /// - Throws: `BusTestError` if the XML is malformed, lacks the interface, or holds an
    ///   element introspection does not define.
    init(named name: String, in xml: String, source: String) throws {
        guard let root = IntrospectionElement(parsing: xml) else { throw BusTestError("\(source): not well-formed XML") }
        guard root.name == "node" else { throw BusTestError("\(source): the root element is not <node>") }
        let matches = root.elements("interface").filter { $0["name"] == name }
        guard matches.count == 1, let interface = matches.first else {
            throw BusTestError("\(source): \(matches.count) <interface name=\"\(name)\"> elements, expected 1")
        }
        for element in interface.children {
            guard let memberName = element["name"] else {
                throw BusTestError("\(source): <\(element.name)> without a name")
            }
            switch element.name {
            case "method":
                methods[memberName] = try Self.member(element, defaultDirection: "in", source: source)
            case "signal":
                signals[memberName] = try Self.member(element, defaultDirection: "out", source: source)
            case "property":
                properties[memberName] = PropertyShape(
                    type: element["type"] ?? "", access: element["access"] ?? "",
                    annotations: try Self.annotations(of: element, allowing: [], source: source))
            case "annotation":
                annotations[memberName] = element["value"] ?? ""
            default:
                throw BusTestError("\(source): unexpected <\(element.name)> in the interface")
            }
        }
    }

    private static func member(_ element: IntrospectionElement, defaultDirection: String, source: String) throws -> Member {
        Member(
            arguments: element.elements("arg").map { argument in
                Argument(
                    name: argument["name"], type: argument["type"] ?? "",
                    direction: argument["direction"] ?? defaultDirection)
            },
            annotations: try annotations(of: element, allowing: ["arg"], source: source))
    }

    private static func annotations(
        of element: IntrospectionElement, allowing others: Set<String>, source: String
    ) throws -> [String: String] {
        var result: [String: String] = [:]
        for child in element.children {
            if child.name == "annotation", let name = child["name"] {
                result[name] = child["value"] ?? ""
            } else if !others.contains(child.name) {
                throw BusTestError("\(source): unexpected <\(child.name)> in <\(element.name)>")
            }
        }
        return result
    }

    /// Human-readable differences, `self` being the running service and `other` the file.
    func differences(from other: InterfaceShape) -> [String] {
        var lines: [String] = []
        func compare<Value: Equatable>(_ kind: String, _ mine: [String: Value], _ theirs: [String: Value]) {
            for name in Set(mine.keys).union(theirs.keys).sorted() where mine[name] != theirs[name] {
                lines.append(
                    "\(kind) \(name): service has \(mine[name].map { "\($0)" } ?? "nothing"), "
                        + "file has \(theirs[name].map { "\($0)" } ?? "nothing")")
            }
        }
        compare("method", methods, other.methods)
        compare("signal", signals, other.signals)
        compare("property", properties, other.properties)
        compare("annotation", annotations, other.annotations)
        return lines
    }
}
