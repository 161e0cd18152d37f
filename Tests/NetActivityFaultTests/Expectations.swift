import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import Testing

/// Stops the service with SIGTERM and expects exit status 0 and nothing on stderr, where a
/// sanitizer's report (a leak found at exit, say) would be.
func expectCleanExit(_ service: ServiceDaemon, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let result = try service.stop()  // throws unless the exit status is 0
    #expect(
        result.stderr.isEmpty, "netactivityd did not stop cleanly: \(result)",
        sourceLocation: sourceLocation)
}

/// The tests' sizes: a short form by default, the soak with `NETACTIVITY_SOAK=1`.
enum Scale {
    static let soak = ProcessInfo.processInfo.environment["NETACTIVITY_SOAK"] == "1"

    /// `short` normally, `soak` under `NETACTIVITY_SOAK=1`.
    static func pick<Value>(_ short: Value, soak: Value) -> Value {
        Scale.soak ? soak : short
    }

    /// The seed of a randomized test: `NETACTIVITY_SEED` if set (to replay a failure),
    /// otherwise a fresh one. Tests print it in their failure messages.
    static func seed() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["NETACTIVITY_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 1...UInt64(UInt32.max))
    }
}

/// The activities with `started` set to 0, to compare with what a test expects.
func withoutStart(_ activities: [ActivityInfo]) -> [ActivityInfo] {
    activities.map { activity in
        var activity = activity
        activity.started = 0
        return activity
    }
}
