import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityService
import Testing

/// docs/interface.md, "Error names": wrong signatures, unknown members and interfaces, and calls
/// without an interface field.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ErrorTests {
    /// A call with the wrong arguments and the signature the method expects.
    struct WrongCall: CustomStringConvertible {
        var member: MemberName
        var interface: InterfaceName
        var arguments: [Value]
        var expected: Signature
        var description: String {
            "\(interface).\(member)(\(arguments.map(\.signature.rawValue).joined()))"
        }
    }

    /// Wrong calls for every method: missing, extra and mistyped arguments. `id` is a live
    /// activity of the caller, so a call that slipped through would change something.
    static func wrongCalls(id: UInt32) -> [WrongCall] {
        let own = NetActivityBus.interface
        let name = Value.string(own.rawValue)
        func call(_ member: MemberName, _ expected: Signature, _ arguments: [Value], on interface: InterfaceName = own) -> WrongCall {
            WrongCall(member: member, interface: interface, arguments: arguments, expected: expected)
        }
        return [
            call("Push", "", [.string("x")]),
            call("Push", "", [.uint32(1)]),
            call("Pop", "", [.string("x")]),
            call("Pop", "", [.boolean(true), .boolean(true)]),
            call("BeginActivity", "s", []),
            call("BeginActivity", "s", [.uint32(1)]),
            call("BeginActivity", "s", [.objectPath("/label")]),
            call("BeginActivity", "s", [.string("a"), .string("b")]),
            call("BeginActivity", "s", [.variant(.string("boxed"))]),
            call("UpdateActivity", "utt", []),
            call("UpdateActivity", "utt", [.uint32(id)]),
            call("UpdateActivity", "utt", [.uint32(id), .uint64(1)]),
            call("UpdateActivity", "utt", [.uint32(id), .uint64(1), .uint64(2), .uint64(3)]),
            call("UpdateActivity", "utt", [.uint32(id), .uint32(1), .uint32(2)]),
            call("UpdateActivity", "utt", [.int32(Int32(id)), .uint64(1), .uint64(2)]),
            call("UpdateActivity", "utt", [.uint64(UInt64(id)), .uint64(1), .uint64(2)]),
            call("UpdateActivity", "utt", [.uint32(id), .int64(1), .int64(2)]),
            call("UpdateActivity", "utt", [.string("\(id)"), .string("1"), .string("2")]),
            call("UpdateActivity", "utt", [.structure([.uint32(id), .uint64(1), .uint64(2)])]),
            call("EndActivity", "u", []),
            call("EndActivity", "u", [.string("\(id)")]),
            call("EndActivity", "u", [.int32(Int32(id))]),
            call("EndActivity", "u", [.uint64(UInt64(id))]),
            call("EndActivity", "u", [.uint32(id), .uint32(id)]),
            call("EndActivity", "u", [.array(element: "u", [.uint32(id)])]),
            call("Get", "ss", [], on: .properties),
            call("Get", "ss", [name], on: .properties),
            call("Get", "ss", [name, .uint32(1)], on: .properties),
            call("Get", "ss", [name, .string("Count"), .string("extra")], on: .properties),
            call("GetAll", "s", [], on: .properties),
            call("GetAll", "s", [.uint32(1)], on: .properties),
            call("GetAll", "s", [name, name], on: .properties),
            call("Set", "ssv", [name, .string("Count")], on: .properties),
            call("Set", "ssv", [name, .string("Count"), .uint32(1)], on: .properties),
            call("Introspect", "", [.string("/")], on: .introspectable),
            // Not Peer: libdbus answers org.freedesktop.DBus.Peer itself, before any handler
            // of the service runs, and ignores the arguments.
        ]
    }

    @Test func wrongSignatureIsInvalidArgsNamingTheExpectedSignatureAndChangesNothing() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        try client.call("Push")
        let id = try client.begin("must survive")
        try client.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(4)])
        let before = try client.observedState()

        let calls = Self.wrongCalls(id: id)
        for wrong in calls {
            let error = expectCallFails(with: .invalidArgs) {
                try client.call(wrong.member, wrong.arguments, interface: wrong.interface)
            }
            if let error {
                #expect(
                    error.message.contains("'\(wrong.expected)'"),
                    "\(wrong): the message should name the expected signature '\(wrong.expected)': \(error.message)")
            }
        }
        #expect(try client.observedState() == before, "a wrongly typed call changed the state")
        // The shared counter is still exactly 1: one Pop succeeds, the next does not.
        try client.call("Pop")
        expectCallFails(with: .notActive) { try client.call("Pop") }
    }

    @Test func wrongSignatureWithoutInterfaceFieldIsInvalidArgsToo() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let id = try client.begin("must survive")
        let before = try client.observedState()
        for wrong in Self.wrongCalls(id: id) {
            expectCallFails(with: .invalidArgs) { try client.call(wrong.member, wrong.arguments, interface: nil) }
        }
        #expect(try client.observedState() == before)
    }

    @Test func unknownMethodIsUnknownMethod() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let before = try client.observedState()
        for member: MemberName in ["Frobnicate", "push", "PushPop", "Begin"] {
            expectCallFails(with: .unknownMethod) { try client.call(member) }
            expectCallFails(with: .unknownMethod) { try client.call(member, interface: nil) }
        }
        expectCallFails(with: .unknownMethod) { try client.call("Frobnicate", interface: .properties) }
        expectCallFails(with: .unknownMethod) { try client.call("Push", interface: .properties) }
        #expect(try client.observedState() == before)
    }

    @Test func anInterfaceTheObjectLacksIsUnknownInterface() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        // docs/interface.md tolerates UnknownMethod here; what matters is that Push is not run.
        let refusals: Set<ErrorName> = [.unknownInterface, .unknownMethod]
        for interface: InterfaceName in ["org.example.Missing", "io.github.netactivity.NetActivity2", "org.freedesktop.DBus"] {
            expectCallFails(withOneOf: refusals) { try client.call("Push", interface: interface) }
        }
        expectCallFails(withOneOf: refusals) { try client.call("Push", path: "/") }
        expectCallFails(withOneOf: refusals) {
            try client.call("Get", [.string(NetActivityBus.interface.rawValue), .string("Count")], interface: .properties, path: "/io")
        }
        #expect(try client.count() == 0, "a call naming a missing interface was dispatched anyway")
        #expect(try client.boolProperty("Active") == false)
    }

    @Test func callWithoutInterfaceFieldIsDispatchedByMemberName() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        #expect(try client.call("Push", interface: nil).isEmpty)
        #expect(try client.count() == 1)

        let reply = try client.call("Get", [.string(NetActivityBus.interface.rawValue), .string("Count")], interface: nil)
        #expect(reply == [.variant(.uint32(1))])

        let id = try #require(try client.call("BeginActivity", [.string("no interface")], interface: nil).first?.uint32)
        try client.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(2)], interface: nil)
        #expect(try client.listedActivities().map(\.completed) == [1])

        let all = try #require(
            try client.call("GetAll", [.string(NetActivityBus.interface.rawValue)], interface: nil).first?.stringKeyedEntries)
        #expect(all["Count"]?.unwrapped == .uint32(2))

        try client.call("EndActivity", [.uint32(id)], interface: nil)
        try client.call("Pop", interface: nil)
        #expect(try client.count() == 0)
        expectCallFails(with: .notActive) { try client.call("Pop", interface: nil) }

        let xml = try #require(try client.call("Introspect", interface: nil).first?.string)
        #expect(xml.contains("io.github.netactivity.NetActivity1"))
    }
}
