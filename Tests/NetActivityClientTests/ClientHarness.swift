import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// MARK: - The service under test

/// A private bus with the real `netactivityd` on it, which a test may stop, kill and start
/// again on the same bus (a service restart as the client library meets it).
final class ServiceOnBus: @unchecked Sendable {
    /// No throttle and no debounce delays: every change is announced at once.
    static let immediate = ["--throttle-ms", "0", "--activation-delay", "0", "--completion-delay", "0"]

    let bus: PrivateBus
    let arguments: [String]
    private let lock = NSLock()
    private var daemon: ChildProcess?
    /// Instances replaced with `--replace`, kept until they exit on their own.
    private var retired: [ChildProcess] = []
    private var lastOwner: String?

    /// Starts a bus and, when `startService`, `netactivityd --address <bus> <arguments>`.
    init(
        _ arguments: [String] = ServiceOnBus.immediate, startService: Bool = true,
        serviceDirectories: [String] = []
    ) throws {
        bus = try PrivateBus(serviceDirectories: serviceDirectories)
        self.arguments = arguments
        if startService { try start() }
    }

    deinit {
        for process in retired + [daemon].compactMap({ $0 }) where process.isRunning {
            process.send(signal: SIGTERM)
            _ = try? process.waitForExit(timeout: .seconds(10))
        }
        bus.stop()
    }

    var address: String { bus.address }

    /// The running daemon's process.
    var process: ChildProcess? { lock.withLock { daemon } }

    /// The instances replaced with `--replace`.
    var replaced: [ChildProcess] { lock.withLock { retired } }

    /// Starts a new `netactivityd` and waits until it (not an earlier instance) owns the name.
    func start(_ extraArguments: [String] = []) throws {
        let process = try ChildProcess(
            try builtProduct("netactivityd"), ["--address", address] + arguments + extraArguments)
        let previous = lock.withLock { () -> String? in
            if let daemon, daemon.isRunning { retired.append(daemon) }
            daemon = process
            return lastOwner
        }
        let probe = try Probe(address)
        var owner: String?
        try waitUntil("netactivityd (pid \(process.pid)) to own \(NetActivityBus.name)") {
            guard process.isRunning else {
                throw BusTestError("netactivityd exited early: \(process.stderrText)")
            }
            owner = try probe.connection.owner(of: NetActivityBus.name)?.rawValue
            return owner != nil && owner != previous
        }
        lock.withLock { lastOwner = owner }
    }

    /// Stops the running daemon with `signal` and waits until the bus has no owner for the name.
    func stop(signal: Int32 = SIGTERM) throws {
        guard let process = lock.withLock({ daemon }) else { return }
        process.send(signal: signal)
        let result = try process.waitForExit(timeout: .seconds(10))
        if signal == SIGTERM, result.exitStatus != 0 {
            throw BusTestError("netactivityd did not exit 0 after SIGTERM: \(result)")
        }
        let probe = try Probe(address)
        try waitUntil("the bus to notice that netactivityd has gone") {
            try probe.connection.owner(of: NetActivityBus.name) == nil
        }
    }

    /// The current owner of the well-known name, as the bus sees it.
    var owner: String? { lock.withLock { lastOwner } }

    /// A fresh blocking connection to the bus.
    func probe() throws -> Probe {
        try Probe(address)
    }

    /// A library client on this bus that reports problems to `problems`.
    func client(_ problems: ProblemLog) -> NetActivityClient {
        NetActivityClient(bus: .address(address), problems: problems.handler)
    }

    /// `netactivity --address <bus> <arguments>` run to completion.
    func netactivity(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> ProcessResult {
        try run(try builtProduct("netactivity"), ["--address", address] + arguments, timeout: timeout)
    }

    /// `netactivity --address <bus> <arguments>` started and left running.
    func startNetactivity(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(try builtProduct("netactivity"), ["--address", address] + arguments)
    }
}

// MARK: - An independent view of the service

/// A blocking connection of its own, used to check what the service really holds.
final class Probe: @unchecked Sendable {
    let connection: Connection

    init(_ address: String) throws {
        connection = try Connection(.address(address))
    }

    var uniqueName: String { connection.uniqueName.rawValue }

    /// Calls a method of the service and returns the reply's arguments.
    @discardableResult
    func call(_ member: MemberName, _ arguments: [Value] = []) throws -> [Value] {
        let message = try Message.methodCall(
            destination: NetActivityBus.name, path: NetActivityBus.path, interface: NetActivityBus.interface,
            member: member, arguments: arguments)
        return try connection.call(message, timeout: .seconds(10)).arguments()
    }

    /// Reads one property of the service.
    func property(_ name: String) throws -> Value {
        let message = try Message.methodCall(
            destination: NetActivityBus.name, path: NetActivityBus.path, interface: .properties, member: "Get",
            arguments: [.string(NetActivityBus.interface.rawValue), .string(name)])
        let reply = try connection.call(message, timeout: .seconds(10)).arguments()
        guard let value = reply.first?.unwrapped else { throw BusTestError("Get \(name) gave \(reply)") }
        return value
    }

    func count() throws -> UInt32 {
        guard let count = try property("Count").uint32 else { throw BusTestError("Count is not a u") }
        return count
    }

    func progress() throws -> Double {
        guard let progress = try property("Progress").double else { throw BusTestError("Progress is not a d") }
        return progress
    }

    func activities() throws -> [ActivityInfo] {
        guard let elements = try property("Activities").elements else {
            throw BusTestError("Activities is not an array")
        }
        return elements.compactMap(ActivityInfo.init)
    }

    /// The labels of the service's activities but those behind the library's `push()`.
    func labels() throws -> [String] {
        try activities().map(\.label).filter { $0 != NetActivityClient.pushLabel }
    }

    /// The service's activity labelled `label`, if there is exactly one.
    func activity(_ label: String) throws -> ActivityInfo? {
        let matching = try activities().filter { $0.label == label }
        return matching.count == 1 ? matching[0] : nil
    }

    /// The process id behind a unique bus name.
    func processID(of name: String) throws -> UInt32 {
        try connection.processID(of: BusName(unchecked: name))
    }

    /// The begin id of a new activity owned by this probe.
    func begin(_ label: String) throws -> UInt32 {
        guard let id = try call("BeginActivity", [.string(label)]).first?.uint32 else {
            throw BusTestError("BeginActivity returned no id")
        }
        return id
    }
}

// MARK: - What the library reports

/// Collects the messages a client hands to its `problems` handler.
final class ProblemLog: Sendable {
    private let messages = Mutex<[String]>([])

    var handler: @Sendable (String) -> Void {
        { [self] message in messages.withLock { $0.append(message) } }
    }

    var all: [String] { messages.withLock { $0 } }
}

/// Records every state a client's `states()` stream yields, on a task of its own.
final class StateRecorder: Sendable {
    private let box = StateBox()
    private let task: Task<Void, Never>

    init(_ client: NetActivityClient) {
        let stream = client.states()
        let box = self.box
        task = Task {
            for await state in stream { box.append(state) }
        }
    }

    deinit {
        task.cancel()
    }

    var states: [IndicatorSnapshot] { box.states }

    /// Waits until the recorded states satisfy `condition`.
    func wait(
        for what: String, timeout: Duration = .seconds(10), _ condition: ([IndicatorSnapshot]) -> Bool
    ) async throws {
        try await eventually("\(what); states so far: \(describe(states))", timeout: timeout) {
            condition(states)
        }
    }

    /// Waits until some state recorded after the first `index` satisfies `condition`.
    func wait(
        for what: String, after index: Int, timeout: Duration = .seconds(10), _ condition: (IndicatorSnapshot) -> Bool
    ) async throws {
        try await wait(for: what, timeout: timeout) { $0.dropFirst(index).contains(where: condition) }
    }
}

private final class StateBox: Sendable {
    private let recorded = Mutex<[IndicatorSnapshot]>([])
    func append(_ state: IndicatorSnapshot) { recorded.withLock { $0.append(state) } }
    var states: [IndicatorSnapshot] { recorded.withLock { $0 } }
}

extension IndicatorSnapshot {
    /// The labels of the activities but those behind the library's `push()`.
    var labels: [String] { activities.map(\.label).filter { $0 != NetActivityClient.pushLabel } }
}

/// A compact rendering of states for failure messages.
func describe(_ states: [IndicatorSnapshot]) -> String {
    states.map { state in
        guard state.serviceAvailable else { return "unavailable" }
        return "(active \(state.active) visible \(state.visible) count \(state.count)"
            + " activities \(state.activities.map(\.label)))"
    }.joined(separator: ", ")
}

/// The elements of `values` with runs of equal neighbours collapsed to one.
func collapsingRepeats<T: Equatable>(_ values: [T]) -> [T] {
    var result: [T] = []
    for value in values where result.last != value { result.append(value) }
    return result
}

// MARK: - Waiting without blocking the cooperative pool

/// Polls `condition` until it holds or `timeout` passes, suspending (not blocking) between
/// polls, so the tasks the condition waits on keep running.
///
/// - Throws: `BusTestError` "timed out after … waiting for <what>", or what `condition` throws.
func eventually(
    _ what: @autoclosure () -> String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var pause = Duration.milliseconds(2)
    while true {
        if try condition() { return }
        guard clock.now < deadline else {
            throw BusTestError("timed out after \(timeout) waiting for \(what())")
        }
        try await Task.sleep(for: pause)
        pause = min(pause * 2, .milliseconds(50))
    }
}

/// `eventually` for a condition that must itself await.
func eventuallyAsync(
    _ what: @autoclosure () -> String, timeout: Duration = .seconds(5), _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while true {
        if try await condition() { return }
        guard clock.now < deadline else {
            throw BusTestError("timed out after \(timeout) waiting for \(what())")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Runs a blocking `body` on a thread of its own and awaits its result.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// A one-shot signal a test awaits, e.g. "the body has started".
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var isOpen: Bool { state.withLock { $0.open } }

    /// Waits until `open()`, ignoring cancellation (so a body can stay suspended after its task
    /// is cancelled).
    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
