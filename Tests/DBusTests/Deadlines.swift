import BusTestSupport
import DBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Waiting for events with a deadline: a test that waits too long fails with what it waited
// for, instead of hanging the run.

/// Waits for `semaphore`, or throws after `seconds`.
func wait(_ semaphore: DispatchSemaphore, for what: String, seconds: Double = 10) throws {
    guard semaphore.wait(timeout: .now() + seconds) == .success else {
        throw BusTestError("timed out after \(seconds) s waiting for \(what)")
    }
}

/// The next message on `connection` that satisfies `wanted`, skipping others.
///
/// - Throws: `BusTestError` if none arrives within `timeout` or the connection closes first.
func nextMessage(
    on connection: Connection, _ what: String, timeout: Duration = .seconds(10), where wanted: (Message) -> Bool
) throws -> Message {
    let clock = SuspendingClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        guard let message = connection.readMessage(timeout: deadline - clock.now) else {
            guard connection.isConnected else { break }
            continue
        }
        if wanted(message) { return message }
    }
    throw BusTestError(
        "no \(what) within \(timeout)" + (connection.isConnected ? "" : "; the connection closed"))
}

/// CLOCK_MONOTONIC, the clock the event loop's timers run on.
func monotonicNow() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
}
