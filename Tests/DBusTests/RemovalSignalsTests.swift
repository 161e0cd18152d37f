@testable import DBus
import Testing

/// An `InterfacesRemoved` sent as a copy of a kept one with another path written in is byte for
/// byte the signal built for that path.
@Suite struct RemovalSignalsTests {
    static let manager: ObjectPath = "/io/github/netactivity/NetActivity1"
    static let interfaces: [InterfaceName] = ["io.github.netactivity.NetActivity1.Activity"]

    static func built(_ path: ObjectPath) throws -> Message {
        try Message.signal(
            path: manager, interface: .objectManager, member: "InterfacesRemoved",
            arguments: [.objectPath(path), .array(element: "s", interfaces.map { .string($0.rawValue) })])
    }

    @Test func aPatchedCopyIsTheSignalForItsPath() throws {
        let signals = RemovalSignals()
        let first: ObjectPath = "/io/github/netactivity/NetActivity1/activity/17"
        #expect(signals.signal(manager: Self.manager, path: first, interfaces: Self.interfaces) == nil, "nothing kept yet")
        signals.remember(try Self.built(first).raw, manager: Self.manager, path: first, interfaces: Self.interfaces)

        let second: ObjectPath = "/io/github/netactivity/NetActivity1/activity/42"
        let copy = try #require(signals.signal(manager: Self.manager, path: second, interfaces: Self.interfaces))
        let patched = Message(consuming: copy)
        #expect(patched.wireBytes == (try Self.built(second)).wireBytes)
        #expect(try patched.arguments().first == .objectPath(second))
    }

    @Test func aPathOfAnotherLengthIsNotPatched() throws {
        let signals = RemovalSignals()
        let first: ObjectPath = "/io/github/netactivity/NetActivity1/activity/17"
        signals.remember(try Self.built(first).raw, manager: Self.manager, path: first, interfaces: Self.interfaces)
        #expect(signals.signal(manager: Self.manager, path: "/io/github/netactivity/NetActivity1/activity/170", interfaces: Self.interfaces) == nil)
        #expect(signals.signal(manager: Self.manager, path: "/io/github/netactivity/NetActivity1/activity/18", interfaces: ["a.B"]) == nil)
    }
}
