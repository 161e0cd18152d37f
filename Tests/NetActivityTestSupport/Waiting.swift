import BusTestSupport
import Foundation
import DBus

// Waiting from async tests. Blocking waits (`waitUntil`, `ChildProcess.waitForExit`) live in
// BusTestSupport; these keep them off the cooperative pool.

/// Runs blocking work (waits on processes and the bus) on a thread of its own and awaits its
/// result, so an async test does not hold one of the cooperative pool's few threads.
@discardableResult
public func onThread<Output: Sendable>(_ work: @escaping @Sendable () throws -> Output) async throws -> Output {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}

/// Polls `condition` until it holds or `timeout` passes, suspending (not blocking) between
/// polls, so the tasks the condition waits on keep running.
///
/// - Throws: `BusTestError` "timed out after … waiting for <what>", or what `condition` throws.
public func eventually(
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
public func eventuallyAsync(
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

/// Collects the messages a client library hands to its `problems` handler.
public final class ProblemLog: Sendable {
    // `Locked`, not `Mutex`: several clients' threads report at once, and ThreadSanitizer
    // reports `Mutex.withLock` from two threads as a race (see `Locked`).
    private let messages = Locked<[String]>([])

    public init() {}

    /// The handler to give the client.
    public var handler: @Sendable (String) -> Void {
        { [self] message in messages.withLock { $0.append(message) } }
    }

    /// Everything reported so far, in order.
    public var all: [String] { messages.withLock { $0 } }
}
