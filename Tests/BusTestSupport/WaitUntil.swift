import Foundation

/// Polls `condition` until it returns true or `timeout` passes.
///
/// For state that has no event to await (a file appearing, a process leaving the bus). The
/// pause between polls grows from 1 ms to 50 ms. Blocks the calling thread.
///
/// - Throws: `BusTestError` "timed out after 5 s waiting for <what>", or whatever
///   `condition` throws.
public func waitUntil(
    _ what: String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool
) throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var pause = Duration.milliseconds(1)
    while true {
        if try condition() {
            return
        }
        let now = clock.now
        if now >= deadline {
            throw BusTestError("timed out after \(timeout.spoken) waiting for \(what)")
        }
        Thread.sleep(forTimeInterval: min(pause, deadline - now).seconds)
        pause = min(pause * 2, .milliseconds(50))
    }
}
