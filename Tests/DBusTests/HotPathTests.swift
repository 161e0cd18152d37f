import BusTestSupport
@testable import DBus
import Testing

/// The object server's speed-ups, each checked against what it stands in for: the reply
/// templates against libdbus's own method return, the dispatch table against the
/// specification's first-match rule (the signals' in `SignalBuilderTests`).
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct HotPathTests {
    // MARK: - Reply templates

    /// Method calls from `callers`, each received by `server` as the bus delivered it
    /// (sender and serial filled in).
    private static func receivedCalls(
        server: Connection, callers: [Connection]
    ) throws -> [Message] {
        try callers.map { caller in
            try caller.send(
                .methodCall(destination: server.uniqueName, path: "/test", interface: "io.github.netactivity.Test1", member: "Poke"))
            caller.flush()
            guard let call = nextMessage(on: server, { $0.kind == .methodCall }) else {
                throw BusTestError("no method call arrived from \(caller.uniqueName)")
            }
            return call
        }
    }

    /// The next message on `connection` that `wanted` accepts, waiting up to 10 s for it.
    private static func nextMessage(on connection: Connection, _ wanted: (Message) -> Bool) -> Message? {
        while let message = connection.readMessage(timeout: .seconds(10)) {
            if wanted(message) { return message }
        }
        return nil
    }

    /// The body's bytes: as long as the fixed header's second number says, at the end.
    private static func body(of message: Message) -> [UInt8] {
        let bytes = message.wireBytes
        guard bytes.count >= 8 else { return [] }
        let length = bytes[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
        return Array(bytes.suffix(length))
    }

    /// A server with reply templates and one caller, on a private bus.
    private struct Answering {
        let bus: PrivateBus
        let server: Connection
        let caller: Connection
        let replies = EmptyReplies()

        init() throws {
            bus = try PrivateBus()
            server = try Connection(.address(bus.address))
            caller = try Connection(.address(bus.address))
        }

        /// `count` calls from the caller, each with libdbus's method return to it and the
        /// reply from the template (the second and later from the template the first made);
        /// nil when libdbus runs out of memory.
        func answers(_ count: Int) throws -> [(call: Message, madeByLibdbus: Message, fromTemplate: Message)]? {
            var answers: [(call: Message, madeByLibdbus: Message, fromTemplate: Message)] = []
            for call in try HotPathTests.receivedCalls(server: server, callers: Array(repeating: caller, count: count)) {
                guard let madeByLibdbus = call.raw.methodReturn(), let fromTemplate = replies.reply(to: call.raw) else {
                    return nil
                }
                answers.append((call, Message(consuming: madeByLibdbus), Message(consuming: fromTemplate)))
            }
            return answers
        }
    }

    @Test func anEmptyReplyHoldsWhatLibdbusMethodReturnHolds() throws {
        let answering = try Answering()
        defer { answering.bus.stop() }
        let caller = answering.caller
        guard let answers = try answering.answers(2) else {
            Issue.record("out of memory")
            return
        }
        for (call, expected, reply) in answers {
            #expect(reply.kind == .methodReturn)
            #expect(reply.destination == expected.destination)
            #expect(reply.destination == caller.uniqueName)
            #expect(reply.replySerial == expected.replySerial)
            #expect(reply.replySerial == call.serial)
            #expect(reply.noReply == expected.noReply)
            #expect(reply.signature == expected.signature)
            #expect(reply.signature == .empty)
            #expect(try reply.arguments().isEmpty)
            #expect(reply.serial == 0, "libdbus gives it a serial when it is sent")
            #expect(reply.path == nil && reply.interface == nil && reply.member == nil && reply.errorName == nil)
        }
    }

    /// A reply that carries values (BeginActivity's id) is the template's copy with the values
    /// appended: the same header fields and the same body as libdbus's method return with them.
    @Test func aReplyWithValuesFromTheTemplateHoldsWhatLibdbusMethodReturnHolds() throws {
        let answering = try Answering()
        defer { answering.bus.stop() }
        let values: [Value] = [.uint32(7), .string("seven")]
        guard let answers = try answering.answers(2) else {
            Issue.record("out of memory")
            return
        }
        for (_, expected, reply) in answers {
            try expected.append(values)
            _ = try Message.append(values, to: reply.raw, signatureLength: 0)
            #expect(reply.destination == expected.destination)
            #expect(reply.replySerial == expected.replySerial)
            #expect(reply.noReply == expected.noReply)
            #expect(reply.signature == expected.signature)
            #expect(try reply.arguments() == values)
            #expect(Self.body(of: reply) == Self.body(of: expected))
        }
        // A template's copy is written to, never the template: the next reply starts empty.
        guard let next = try answering.answers(1)?.first else {
            Issue.record("out of memory")
            return
        }
        #expect(next.fromTemplate.signature == .empty)
    }

    @Test func emptyRepliesReachEachOfMoreCallersThanTheTemplatesKept() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let server = try Connection(.address(bus.address))
        let callers = try (0...EmptyReplies.limit).map { _ in try Connection(.address(bus.address)) }
        let replies = EmptyReplies()
        // Twice round: the second round finds the first caller's template evicted.
        for _ in 0..<2 {
            let calls = try Self.receivedCalls(server: server, callers: callers)
            for call in calls {
                guard let reply = replies.reply(to: call.raw) else {
                    Issue.record("out of memory")
                    return
                }
                server.queue(reply)
            }
            server.flush()
            for (caller, call) in zip(callers, calls) {
                // Past the bus's NameAcquired signal to the caller.
                let answer = try #require(Self.nextMessage(on: caller) { $0.kind != .signal })
                #expect(answer.kind == .methodReturn)
                #expect(answer.replySerial == call.serial)
                #expect(answer.sender == server.uniqueName)
            }
        }
    }

    // MARK: - Dispatch table

    /// A method whose single output argument's name tells which table entry answered.
    private static func method(_ name: MemberName, _ tag: String) -> Method {
        Method(name, outputs: [Argument(tag, "s")]) { _ in [] }
    }

    private static func tag(_ entry: DispatchTable.Entry?) -> String? { entry?.method.outputs.first?.name }

    @Test func theFirstInterfaceAndTheFirstMethodOfANameWin() {
        let table = DispatchTable([
            Interface("io.github.netactivity.A", methods: [Self.method("Go", "A.Go"), Self.method("Go", "A.Go twice")]),
            Interface("io.github.netactivity.A", methods: [Self.method("Go", "second A.Go"), Self.method("Stop", "second A.Stop")]),
            Interface("io.github.netactivity.B", methods: [Self.method("Go", "B.Go"), Self.method("Stop", "B.Stop")]),
        ])
        func methods(_ interface: String) -> [DispatchTable.Entry]? { interface.withCString { table.methods(of: $0) } }
        func find(_ member: String, in methods: [DispatchTable.Entry]) -> DispatchTable.Entry? {
            member.withCString { DispatchTable.method($0, in: methods) }
        }
        func named(_ member: String) -> DispatchTable.Entry? { member.withCString { table.method(named: $0) } }

        let a = methods("io.github.netactivity.A") ?? []
        #expect(Self.tag(find("Go", in: a)) == "A.Go")
        #expect(find("Stop", in: a) == nil, "the second interface of the same name is never reached")
        let b = methods("io.github.netactivity.B") ?? []
        #expect(Self.tag(find("Go", in: b)) == "B.Go")
        #expect(methods("io.github.netactivity.C") == nil)
        // Without an interface field: the first method of that name over all interfaces.
        #expect(Self.tag(named("Go")) == "A.Go")
        #expect(Self.tag(named("Stop")) == "second A.Stop")
        #expect(named("Pause") == nil)
        #expect(table.interfaces.count == 3)
    }

    @Test func aCNameMatchesTheSameSpellingOnly() {
        let name = CName("Push")
        #expect("Push".withCString { name.matches($0) })
        #expect(!"Pus".withCString { name.matches($0) })
        #expect(!"Pushed".withCString { name.matches($0) })
        #expect(!name.matches(nil))
        #expect(CName("").matches(nil), "a missing header field counts as the empty name")
    }
}
