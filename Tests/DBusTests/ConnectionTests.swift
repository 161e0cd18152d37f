import BusTestSupport
import DBus
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Connections to a private bus: connecting, names, blocking calls, reading, filters, and the
/// bus going away.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ConnectionTests {
    static func connect(_ bus: PrivateBus) throws -> Connection {
        try Connection(.address(bus.address))
    }

    // MARK: - Connecting

    @Test(arguments: [
        "unix:path=/nonexistent/netactivity-test-socket", "garbage", "", "unix:", "a\0b",
        "tcp:host=127.0.0.1,port=1", "unix:path=/dev/null", "nonce-tcp:",
    ])
    func bogusAddressThrowsABusError(_ address: String) {
        do {
            let connection = try Connection(.address(address))
            Issue.record("connected to '\(address)' as \(connection.uniqueName)")
        } catch {
            #expect(!error.message.isEmpty, "\(error)")
        }
    }

    @Test func connectionGetsAUniqueName() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let first = try Self.connect(bus)
        let second = try Self.connect(bus)
        #expect(first.uniqueName.isUnique)
        #expect(first.uniqueName != second.uniqueName)
        #expect(first.isConnected)
        #expect(try first.owner(of: first.uniqueName) == first.uniqueName)
        #expect(try first.processID(of: second.uniqueName) == UInt32(getpid()))
    }

    // MARK: - Names

    @Test func requestNameRepliesAndOwnership() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let first = try Self.connect(bus)
        let second = try Self.connect(bus)
        let name: BusName = "io.github.netactivity.Test"

        #expect(try first.owner(of: name) == nil)
        #expect(try first.requestName(name, options: .doNotQueue) == .primaryOwner)
        #expect(try first.requestName(name, options: .doNotQueue) == .alreadyOwner)
        #expect(try second.requestName(name, options: .doNotQueue) == .exists)
        #expect(try second.owner(of: name) == first.uniqueName)
        #expect(try second.requestName(name, options: []) == .inQueue)

        #expect(try first.releaseName(name))
        #expect(try first.owner(of: name) == second.uniqueName)
        #expect(try !first.releaseName(name))
        #expect(try second.releaseName(name))
        #expect(try first.owner(of: name) == nil)
        #expect(try first.owner(of: "io.github.netactivity.NobodyHasThis") == nil)
    }

    @Test func replaceExistingTakesAReplaceableName() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let first = try Self.connect(bus)
        let second = try Self.connect(bus)
        let name: BusName = "io.github.netactivity.Replaceable"
        #expect(try first.requestName(name, options: [.allowReplacement, .doNotQueue]) == .primaryOwner)
        #expect(try second.requestName(name, options: [.replaceExisting, .doNotQueue]) == .primaryOwner)
        #expect(try first.owner(of: name) == second.uniqueName)
        // Without allowReplacement the new owner keeps it.
        #expect(try first.requestName(name, options: [.replaceExisting, .doNotQueue]) == .exists)
    }

    @Test func requestingAUniqueNameIsABusError() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try Self.connect(bus)
        #expect(throws: BusError.self) { try connection.requestName(":1.999", options: .doNotQueue) }
        #expect(throws: BusError.self) { try connection.addMatch("this is not a match rule") }
        #expect(connection.isConnected)
    }

    // MARK: - Calls

    @Test func callToAMissingServiceIsServiceUnknown() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try Self.connect(bus)
        let message = try Message.methodCall(
            destination: "io.github.netactivity.Missing", path: "/", interface: .peer, member: "Ping")
        let serviceUnknownError = #expect(throws: BusError.self) { try connection.call(message, timeout: .seconds(10)) }
        #expect(serviceUnknownError?.name == .serviceUnknown, "\(String(describing: serviceUnknownError))")
    }

    @Test func callThatIsNeverAnsweredTimesOut() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let silent = try Self.connect(bus)
        let caller = try Self.connect(bus)
        let message = try Message.methodCall(destination: silent.uniqueName, path: "/", interface: .peer, member: "Ping")
        let start = monotonicNow()
        do {
            let reply = try caller.call(message, timeout: .milliseconds(100))
            Issue.record("a connection that never reads answered: \(reply.kind)")
        } catch {
            #expect(error.name == .noReply, "\(error)")
        }
        let elapsed = monotonicNow() - start
        #expect(elapsed >= .milliseconds(100), "gave up after \(elapsed)")
        #expect(elapsed < .seconds(5), "gave up after \(elapsed)")
    }

    @Test func unhandledMethodCallGetsUnknownMethod() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let server = try Self.connect(bus)
        let seen = Log<String>()
        server.addFilter { message in
            seen.append(message.member?.rawValue ?? "")
            return false
        }
        let loop = try EventLoop()
        loop.attach(server)
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }

        let caller = try Self.connect(bus)
        let message = try Message.methodCall(
            destination: server.uniqueName, path: "/any", interface: "io.github.netactivity.Test1", member: "Anything")
        let unknownMethodError = #expect(throws: BusError.self) { try caller.call(message, timeout: .seconds(10)) }
        #expect(unknownMethodError?.name == .unknownMethod, "\(String(describing: unknownMethodError))")
        #expect(seen.all.contains("Anything"))
    }

    // MARK: - Signals and filters

    @Test func signalReachesASubscriberWithItsSender() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let emitter = try Self.connect(bus)
        let subscriber = try Self.connect(bus)
        try subscriber.addMatch("type='signal',interface='io.github.netactivity.Test1'")
        let sent = try Message.signal(
            path: "/io/github/netactivity/Test", interface: "io.github.netactivity.Test1", member: "Changed",
            arguments: [.uint32(9), .properties([("k", .string("v"))])])
        #expect(try emitter.send(sent) > 0)
        emitter.flush()
        let received = try nextMessage(on: subscriber, "the Changed signal") {
            $0.isSignal("io.github.netactivity.Test1", "Changed")
        }
        #expect(received.sender == emitter.uniqueName)
        #expect(try received.arguments() == [.uint32(9), .properties([("k", .string("v"))])])

        // Once the match is gone, the next Test1 signal is skipped: the marker that follows it
        // from the same sender arrives first.
        try subscriber.removeMatch("type='signal',interface='io.github.netactivity.Test1'")
        try subscriber.addMatch("type='signal',interface='io.github.netactivity.Marker1'")
        try emitter.send(sent)
        try emitter.send(.signal(path: "/", interface: "io.github.netactivity.Marker1", member: "Marker"))
        emitter.flush()
        let next = try nextMessage(on: subscriber, "a signal after removeMatch") { $0.kind == .signal }
        #expect(next.isSignal("io.github.netactivity.Marker1", "Marker"), "got \(String(describing: next.member))")
    }

    @Test func filtersSeeMessagesInOrderUntilOneHandlesIt() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let listener = try Self.connect(bus)
        try listener.addMatch("type='signal',interface='io.github.netactivity.Test1'")
        let first = Log<String>()
        let second = Log<String>()
        let arrived = DispatchSemaphore(value: 0)
        let firstID = listener.addFilter { message in
            guard message.interface == "io.github.netactivity.Test1" else { return false }
            first.append(message.member?.rawValue ?? "")
            return message.member == "Handled"
        }
        listener.addFilter { message in
            guard message.interface == "io.github.netactivity.Test1" else { return false }
            second.append(message.member?.rawValue ?? "")
            arrived.signal()
            return true
        }
        let loop = try EventLoop()
        loop.attach(listener)
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }

        let emitter = try Self.connect(bus)
        func emit(_ member: MemberName) throws {
            try emitter.send(.signal(path: "/", interface: "io.github.netactivity.Test1", member: member))
        }
        try emit("Handled")
        try emit("PassedOn")
        try wait(arrived, for: "PassedOn at the second filter")
        #expect(first.all == ["Handled", "PassedOn"])
        #expect(second.all == ["PassedOn"])

        try thread.sync { listener.removeFilter(firstID) }
        try emit("Handled")
        try wait(arrived, for: "Handled at the second filter once the first is gone")
        #expect(first.all == ["Handled", "PassedOn"])
        #expect(second.all == ["PassedOn", "Handled"])
    }

    @Test func aFilterForOneKindSeesOnlyThatKind() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let listener = try Self.connect(bus)
        try listener.addMatch("type='signal',interface='io.github.netactivity.Test1'")
        let signals = Log<String>()
        let calls = Log<String>()
        let arrived = DispatchSemaphore(value: 0)
        listener.addFilter(for: .signal) { message in
            signals.append(message.member?.rawValue ?? "")
            return false
        }
        listener.addFilter(for: .methodCall) { message in
            calls.append(message.member?.rawValue ?? "")
            arrived.signal()
            return false
        }
        let loop = try EventLoop()
        loop.attach(listener)
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }

        let sender = try Self.connect(bus)
        try sender.send(.signal(path: "/", interface: "io.github.netactivity.Test1", member: "Signalled"))
        // Unhandled, so libdbus answers UnknownMethod; the reply is not the point.
        try sender.send(
            .methodCall(destination: listener.uniqueName, path: "/", interface: "io.github.netactivity.Test1", member: "Called"))
        try wait(arrived, for: "the method call at its filter")
        #expect(signals.all.filter { $0 == "Signalled" } == ["Signalled"])
        #expect(!signals.all.contains("Called"))
        #expect(calls.all == ["Called"])
    }

    // MARK: - Reading without a loop

    @Test func readMessageReturnsNilAfterTheTimeout() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try Self.connect(bus)
        // The bus greets every connection with NameAcquired for its unique name.
        let greeting = try nextMessage(on: connection, "NameAcquired") { $0.isSignal(.bus, "NameAcquired") }
        #expect(try greeting.arguments() == [.string(connection.uniqueName.rawValue)])

        for timeout: Duration in [.zero, .milliseconds(1), .milliseconds(50)] {
            let start = monotonicNow()
            let message = connection.readMessage(timeout: timeout)
            let elapsed = monotonicNow() - start
            #expect(message == nil, "got a \(String(describing: message?.kind)) \(String(describing: message?.member))")
            #expect(elapsed >= timeout, "returned after \(elapsed)")
            #expect(elapsed < timeout + .seconds(5), "returned after \(elapsed)")
        }
    }

    @Test func bodyNestedDeeperThanTheBusAllowsNeverLeaves() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try Self.connect(bus)
        let tooDeep = (0..<65).reduce(Value.int32(1)) { inner, _ in .variant(inner) }
        #expect(throws: BusError.self) {
            try connection.send(
                .signal(path: "/", interface: "io.github.netactivity.Test1", member: "Deep", arguments: [tooDeep]))
        }
        connection.flush()
        // Had it left, dbus-daemon would have dropped this connection as a protocol violator.
        let ping = try Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus", interface: .peer, member: "Ping")
        #expect(throws: Never.self) { try connection.call(ping, timeout: .seconds(10)) }
        #expect(connection.isConnected)
    }

    // MARK: - The bus going away

    @Test func killedBusDeliversDisconnected() throws {
        let bus = try PrivateBus()
        let connection = try Self.connect(bus)
        _ = try nextMessage(on: connection, "NameAcquired") { $0.isSignal(.bus, "NameAcquired") }
        bus.kill()
        let disconnected = try nextMessage(on: connection, "the Disconnected signal") {
            $0.isSignal(.local, "Disconnected")
        }
        #expect(disconnected.path == "/org/freedesktop/DBus/Local")
        #expect(!connection.isConnected)
        #expect(connection.readMessage(timeout: .milliseconds(10)) == nil)

        let ping = try Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus", interface: .peer, member: "Ping")
        let disconnectedError = #expect(throws: BusError.self) { try connection.send(ping) }
        #expect(disconnectedError?.name == .disconnected, "\(String(describing: disconnectedError))")
        #expect(throws: BusError.self) { try connection.call(ping, timeout: .seconds(1)) }
        #expect(throws: BusError.self) { try connection.requestName("io.github.netactivity.Late", options: .doNotQueue) }
    }

    @Test func killedBusStopsNoEventLoop() throws {
        let bus = try PrivateBus()
        let connection = try Self.connect(bus)
        let disconnected = DispatchSemaphore(value: 0)
        connection.addFilter { message in
            if message.isSignal(.local, "Disconnected") { disconnected.signal() }
            return false
        }
        let loop = try EventLoop()
        loop.attach(connection)
        let thread = try RunningLoop(loop)
        bus.kill()
        try wait(disconnected, for: "Disconnected at the filter")
        #expect(try thread.sync { 42 } == 42)
        try thread.stop()
    }
}
