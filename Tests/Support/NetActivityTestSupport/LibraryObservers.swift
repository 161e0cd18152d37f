import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract

// What the client library shows a test: the clients it makes, the states it yields, the labels
// it holds.

extension ServiceDaemon {
    /// A library client on this bus that reports problems to `problems`.
    public func client(_ problems: ProblemLog) -> NetActivityClient {
        NetActivityClient(bus: .address(address), problems: problems.handler)
    }
}

extension ServiceProbe {
    /// The labels of the service's activities but those behind the library's `push()`.
    public func labels() throws -> [String] {
        try activities().map(\.label).filter { $0 != NetActivityClient.pushLabel }
    }
}

// MARK: - What the library reports

/// Records every state a client's `states()` stream yields, on a task of its own.
public final class StateRecorder: Sendable {
    private let box = StateBox()
    private let task: Task<Void, Never>

    public init(_ client: NetActivityClient) {
        let stream = client.states()
        let box = self.box
        task = Task {
            for await state in stream { box.append(state) }
        }
    }

    deinit {
        task.cancel()
    }

    public var states: [IndicatorSnapshot] { box.states }

    /// Waits until the recorded states satisfy `condition`.
    public func wait(
        for what: String, timeout: Duration = .seconds(10), _ condition: ([IndicatorSnapshot]) -> Bool
    ) async throws {
        try await waitUntil("\(what); states so far: \(describe(states))", timeout: timeout) {
            condition(states)
        }
    }

    /// Waits until some state recorded after the first `index` satisfies `condition`.
    public func wait(
        for what: String, after index: Int, timeout: Duration = .seconds(10), _ condition: (IndicatorSnapshot) -> Bool
    ) async throws {
        try await wait(for: what, timeout: timeout) { $0.dropFirst(index).contains(where: condition) }
    }
}

private final class StateBox: Sendable {
    private let recorded = Locked<[IndicatorSnapshot]>([])
    func append(_ state: IndicatorSnapshot) { recorded.withLock { $0.append(state) } }
    var states: [IndicatorSnapshot] { recorded.withLock { $0 } }
}

extension IndicatorSnapshot {
    /// The labels of the activities but those behind the library's `push()`.
    public var labels: [String] { activities.map(\.label).filter { $0 != NetActivityClient.pushLabel } }
}

/// A compact rendering of states for failure messages.
public func describe(_ states: [IndicatorSnapshot]) -> String {
    states.map { state in
        guard state.serviceAvailable else { return "unavailable" }
        return "(active \(state.active) visible \(state.visible) count \(state.count)"
            + " activities \(state.activities.map(\.label)))"
    }.joined(separator: ", ")
}

/// The elements of `values` with runs of equal neighbours collapsed to one.
public func collapsingRepeats<T: Equatable>(_ values: [T]) -> [T] {
    var result: [T] = []
    for value in values where result.last != value { result.append(value) }
    return result
}

// MARK: - Gates

/// A one-shot signal a test awaits, e.g. "the body has started".
public final class Gate: Sendable {
    public init() {}

    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    public var isOpen: Bool { state.withLock { $0.open } }

    /// Waits until `open()`, ignoring cancellation (so a body can stay suspended after its task
    /// is cancelled).
    public func wait() async {
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
