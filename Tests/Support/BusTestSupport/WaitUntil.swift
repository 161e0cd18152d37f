import Foundation

// The one wait of the test suites, for state that has no event to await (a file appearing, a
// process leaving the bus, a client's observer catching up). Blocking from a synchronous test,
// suspending from an async one, so an async test never holds one of the cooperative pool's few
// threads while it waits; the same pacing and the same failure either way.

/// Polls `condition` until it returns true or `timeout` passes, blocking the calling thread.
///
/// The pause between polls grows from 1 ms to 50 ms. `what` is read only on failure, so it may
/// describe the state the wait ended in.
///
/// - Throws: `BusTestError` "timed out after 10 s waiting for <what>", or whatever `condition`
///   throws.
public func waitUntil(
    _ what: @autoclosure () -> String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool
) throws {
    var pacing = WaitPacing(timeout: timeout)
    while true {
        if try condition() { return }
        Thread.sleep(forTimeInterval: try pacing.nextPause(waitingFor: what).seconds)
    }
}

/// `waitUntil` from an async test: suspends between polls, so the tasks `condition` waits on
/// keep running. (A synchronous condition: it then differs from the blocking form only in being
/// async, which is what makes an async test pick this one.)
public func waitUntil(
    _ what: @autoclosure () -> String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool
) async throws {
    var pacing = WaitPacing(timeout: timeout)
    while true {
        if try condition() { return }
        try await Task.sleep(for: try pacing.nextPause(waitingFor: what))
    }
}

/// `waitUntil` with a condition that itself awaits.
public func waitUntil(
    _ what: @autoclosure () -> String, timeout: Duration = .seconds(10), _ condition: () async throws -> Bool
) async throws {
    var pacing = WaitPacing(timeout: timeout)
    while true {
        if try await condition() { return }
        try await Task.sleep(for: try pacing.nextPause(waitingFor: what))
    }
}

/// The pauses of one wait: doubling from 1 ms up to 50 ms, never past the deadline.
private struct WaitPacing {
    private let clock = ContinuousClock()
    private let timeout: Duration
    private let deadline: ContinuousClock.Instant
    private var pause = Duration.milliseconds(1)

    init(timeout: Duration) {
        self.timeout = timeout
        deadline = clock.now + timeout
    }

    /// The pause before the next poll.
    ///
    /// - Throws: `BusTestError` once the deadline has passed.
    mutating func nextPause(waitingFor what: () -> String) throws -> Duration {
        let now = clock.now
        guard now < deadline else { throw BusTestError("timed out after \(timeout.spoken) waiting for \(what())") }
        defer { pause = min(pause * 2, .milliseconds(50)) }
        return min(pause, deadline - now)
    }
}
