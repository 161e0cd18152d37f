@testable import DBus
import Testing

/// A signal sent as a patched copy of its shape's template is byte for byte the signal libdbus
/// would have built for the same contents.
@Suite struct SignalShapesTests {
    static func built(_ interface: InterfaceName, _ path: ObjectPath, _ changed: [(MemberName, Value)]) throws -> Message {
        try Message.signal(
            path: path, interface: .properties, member: "PropertiesChanged",
            arguments: [
                .string(interface.rawValue), .properties(changed.map { ($0.0.rawValue, $0.1) }),
                .array(element: "s", []),
            ])
    }

    static let shapes: [(InterfaceName, [(MemberName, Value)], [(MemberName, Value)])] = [
        ("io.github.netactivity.NetActivity1.Activity",
         [("Completed", .uint64(0)), ("Total", .uint64(0))],
         [("Completed", .uint64(123_456_789_012)), ("Total", .uint64(.max))]),
        ("io.github.netactivity.NetActivity1",
         [("Active", .boolean(false)), ("Count", .uint32(0)), ("Progress", .double(-1))],
         [("Active", .boolean(true)), ("Count", .uint32(65_536)), ("Progress", .double(0.125))]),
        ("a.b", [("X", .int32(-1)), ("LongerName", .int64(1)), ("Y", .uint32(7))],
         [("X", .int32(.min)), ("LongerName", .int64(.min)), ("Y", .uint32(.max))]),
    ]

    @Test(arguments: 0..<3)
    func aPatchedCopyIsTheSignalLibdbusBuilds(_ index: Int) throws {
        let (interface, first, second) = Self.shapes[index]
        let shapes = SignalShapes()
        #expect(SignalShapes.isPatchable(changed: first, invalidated: []))
        let original: ObjectPath = "/io/github/netactivity/NetActivity1/activity/7"
        #expect(shapes.signal(interface: interface, path: original, changed: first) == nil, "nothing kept yet")
        shapes.remember(try Self.built(interface, original, first), interface: interface, path: original, changed: first)

        // The same path, a longer one (set through libdbus), one as long (written in place).
        let paths: [ObjectPath] = [
            original, "/io/github/netactivity/NetActivity1/activity/65536", "/io/github/netactivity/NetActivity1/activity/9",
        ]
        for path in paths {
            let patched = try #require(shapes.signal(interface: interface, path: path, changed: second))
            #expect(patched.wireBytes == (try Self.built(interface, path, second)).wireBytes, "\(path)")
            #expect(try patched.arguments()[1] == .properties(second.map { ($0.0.rawValue, $0.1) }))
        }
    }

    @Test func stringsAndInvalidationsAreBuiltInFull() {
        #expect(!SignalShapes.isPatchable(changed: [("Application", .string("x"))], invalidated: []))
        #expect(!SignalShapes.isPatchable(changed: [("Count", .uint32(1))], invalidated: ["Activities"]))
        #expect(!SignalShapes.isPatchable(changed: [], invalidated: []))
    }
}
