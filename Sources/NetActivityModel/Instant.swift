/// A point on a monotonic clock, in nanoseconds since an arbitrary origin.
///
/// Instants from different clocks cannot be compared meaningfully. Arithmetic saturates
/// instead of trapping, so no duration (even one built from untrusted input) can crash the
/// process.
public struct Instant: Comparable, Hashable, Sendable {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: UInt64

    /// Creates the instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// Orders instants by their position on the clock.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The instant `rhs` after `lhs`.
    ///
    /// Saturates at `UInt64.max` nanoseconds; a negative duration yields `lhs` unchanged
    /// (a monotonic clock never goes back). Sub-nanosecond parts are dropped.
    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        guard rhs > .zero else { return lhs }
        let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(rhs.saturatingNanoseconds)
        return Instant(nanoseconds: overflow ? .max : sum)
    }

    /// The signed duration from this instant to `other`: negative when `other` is earlier.
    public func duration(to other: Instant) -> Duration {
        if other.nanoseconds >= nanoseconds {
            return Duration(nanoseconds: other.nanoseconds - nanoseconds)
        } else {
            return .zero - Duration(nanoseconds: nanoseconds - other.nanoseconds)
        }
    }
}

extension Duration {
    /// A non-negative duration as whole nanoseconds, saturating at `UInt64.max`.
    var saturatingNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (sum, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return carry ? .max : sum
    }

    /// An exact duration from an unsigned nanosecond count (the full `UInt64` range fits).
    init(nanoseconds: UInt64) {
        self = .seconds(Int64(nanoseconds / 1_000_000_000))
            + .nanoseconds(Int64(nanoseconds % 1_000_000_000))
    }
}
