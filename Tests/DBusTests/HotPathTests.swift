import BusTestSupport
@testable import DBus
import Testing

/// The object server's speed-ups, each checked against what it stands in for: the reply
/// templates against libdbus's own method return, the signal templates against the signal
/// they copy, the dispatch table against the specification's first-match rule.
@Suite struct HotPathTests {
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

    @Test func anEmptyReplyHoldsWhatLibdbusMethodReturnHolds() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let server = try Connection(.address(bus.address))
        let caller = try Connection(.address(bus.address))
        let replies = EmptyReplies()
        // The second call from the same caller is answered from the template the first made.
        for call in try Self.receivedCalls(server: server, callers: [caller, caller]) {
            let expected = try #require(call.raw.methodReturn().map { Message(consuming: $0) })
            let reply = try #require(replies.reply(to: call.raw).map { Message(consuming: $0) })
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
                let reply = try #require(replies.reply(to: call.raw))
                server.queue(reply)
                reply.release()
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

    // MARK: - Signal templates

    private static let interface: InterfaceName = "io.github.netactivity.Test1"
    private static let path: ObjectPath = "/io/github/netactivity/Test"

    private static func propertiesChanged(_ changed: [(MemberName, Value)], at path: ObjectPath = path) throws -> Message {
        try .signal(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [
                .string(interface.rawValue), .properties(changed.map { ($0.0.rawValue, $0.1) }),
                .array(element: "s", []),
            ])
    }

    @Test func aKeptSignalComesBackAsAByteIdenticalCopy() throws {
        let signals = RecentSignals()
        let changed: [(MemberName, Value)] = [("Active", .boolean(true)), ("Count", .uint32(1))]
        let signal = try Self.propertiesChanged(changed)
        try signals.remember(signal, interface: Self.interface, path: Self.path, changed: changed)
        let copy = try #require(try signals.copy(interface: Self.interface, path: Self.path, changed: changed))
        #expect(copy !== signal)
        #expect(copy.wireBytes == signal.wireBytes)
        #expect(!copy.wireBytes.isEmpty)
    }

    @Test func aKeptSignalServesTheSameContentsAtAnotherPath() throws {
        let signals = RecentSignals()
        let changed: [(MemberName, Value)] = [("Application", .string("firefox")), ("ProcessID", .uint32(42))]
        try signals.remember(try Self.propertiesChanged(changed), interface: Self.interface, path: Self.path, changed: changed)
        // As long as the kept one's path (written in place), longer (set by libdbus), and as long
        // as that one's (kept in its place): each byte for byte the signal built at its path.
        let paths: [ObjectPath] = [
            "/io/github/netactivity/Tesu", "/io/github/netactivity/NetActivity1/activity/12345",
            "/io/github/netactivity/NetActivity1/activity/54321", Self.path,
        ]
        for path in paths {
            let copy = try #require(try signals.copy(interface: Self.interface, path: path, changed: changed))
            #expect(copy.path == path)
            #expect(copy.wireBytes == (try Self.propertiesChanged(changed, at: path)).wireBytes, "\(path)")
        }
    }

    @Test func aSignalWithOtherContentsFindsNoCopy() throws {
        let signals = RecentSignals()
        let changed: [(MemberName, Value)] = [("Active", .boolean(true))]
        try signals.remember(try Self.propertiesChanged(changed), interface: Self.interface, path: Self.path, changed: changed)
        #expect(try signals.copy(interface: Self.interface, path: Self.path, changed: [("Active", .boolean(false))]) == nil)
        #expect(try signals.copy(interface: Self.interface, path: Self.path, changed: [("Visible", .boolean(true))]) == nil)
        #expect(try signals.copy(interface: "io.github.netactivity.Other1", path: Self.path, changed: changed) == nil)
        #expect(try signals.copy(interface: Self.interface, path: Self.path, changed: changed + changed) == nil)
    }

    @Test func theLeastRecentlyUsedSignalGoesFirst() throws {
        let signals = RecentSignals()
        func changed(_ count: UInt32) -> [(MemberName, Value)] { [("Count", .uint32(count))] }
        for count in 0..<UInt32(RecentSignals.limit) {
            try signals.remember(
                try Self.propertiesChanged(changed(count)), interface: Self.interface, path: Self.path,
                changed: changed(count))
        }
        // Using the oldest makes it the most recent: the next one kept evicts the second.
        #expect(try signals.copy(interface: Self.interface, path: Self.path, changed: changed(0)) != nil)
        let next = UInt32(RecentSignals.limit)
        try signals.remember(
            try Self.propertiesChanged(changed(next)), interface: Self.interface, path: Self.path, changed: changed(next))
        #expect(try signals.copy(interface: Self.interface, path: Self.path, changed: changed(0)) != nil)
        #expect(try signals.copy(interface: Self.interface, path: Self.path, changed: changed(1)) == nil)
        #expect(try signals.copy(interface: Self.interface, path: Self.path, changed: changed(next)) != nil)
    }

    @Test func onlyFewBasicValuesAreWorthKeeping() {
        let basic: [(MemberName, Value)] = [("Active", .boolean(true))]
        #expect(RecentSignals.isCacheable(changed: basic, invalidated: []))
        #expect(!RecentSignals.isCacheable(changed: basic, invalidated: ["Count"]))
        #expect(!RecentSignals.isCacheable(changed: [("Activities", .array(element: "u", []))], invalidated: []))
        let many = (0...RecentSignals.valueLimit).map { (MemberName(unchecked: "P\($0)"), Value.uint32(0)) }
        #expect(!RecentSignals.isCacheable(changed: many, invalidated: []))
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
