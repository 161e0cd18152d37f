import Foundation

/// A failure of the test harness itself: a missing tool, a child that overran its deadline,
/// a private bus that would not start.
///
/// The description is the whole story, so a failing test prints something a reader can act on.
public struct BusTestError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in a sentence or two.
    public let description: String

    /// Creates an error with the given message.
    public init(_ description: String) {
        self.description = description
    }
}

// MARK: - Durations

extension Duration {
    /// The duration in seconds, for APIs that take a `TimeInterval`.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration as people write it in messages: "5 s", "0.25 s".
    public var spoken: String {
        let value = seconds
        if value == value.rounded() {
            return "\(Int64(value)) s"
        }
        return "\(value) s"
    }

    /// The wall-clock moment this long from now; `NSCondition` waits take a `Date`.
    var fromNow: Date {
        Date(timeIntervalSinceNow: seconds)
    }
}
