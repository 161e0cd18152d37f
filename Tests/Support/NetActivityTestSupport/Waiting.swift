import BusTestSupport
import Foundation
import DBus

// Blocking work from async tests, kept off the cooperative pool. The wait for a condition,
// blocking or suspending, is BusTestSupport's `waitUntil`.

/// Runs blocking work (waits on processes and the bus) on a thread of its own and awaits its
/// result, so an async test does not hold one of the cooperative pool's few threads.
@discardableResult
public func onThread<Output: Sendable>(_ work: @escaping @Sendable () throws -> Output) async throws -> Output {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
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
