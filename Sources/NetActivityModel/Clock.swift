import Platform

/// The source of time for the model: a monotonic clock for deadlines and a wall clock for
/// the `started` timestamps of activities.
///
/// Inject ``SystemClock`` in the service and ``ManualClock`` in tests. Implementations must
/// be safe to read from any thread.
public protocol IndicatorClock: Sendable {
    /// The current monotonic instant; never decreases.
    var now: Instant { get }

    /// The current wall-clock time in microseconds since the Unix epoch.
    var wallMicroseconds: UInt64 { get }

    /// Whether the clock moves by itself (true for the real clocks). Code that waits for a
    /// deadline on a clock that does not is woken through `onAdvance(_:)` instead.
    var movesByItself: Bool { get }

    /// Arranges for `moved` to run, on the thread that moves the clock, each time it is moved
    /// by hand; nothing for a clock that moves by itself.
    func onAdvance(_ moved: @escaping @Sendable () -> Void)
}

extension IndicatorClock {
    public var movesByItself: Bool { true }
    public func onAdvance(_ moved: @escaping @Sendable () -> Void) {}
}

/// The real clocks: `CLOCK_MONOTONIC` for ``now`` and `CLOCK_REALTIME` for
/// ``wallMicroseconds``.
public struct SystemClock: IndicatorClock {
    /// Creates a clock reading the system's clocks.
    public init() {}

    /// The current `CLOCK_MONOTONIC` time.
    public var now: Instant {
        Instant(nanoseconds: Clocks.monotonicNanoseconds())
    }

    /// The current `CLOCK_REALTIME` time in microseconds; 0 for a clock set before 1970.
    public var wallMicroseconds: UInt64 {
        Clocks.wallMicroseconds()
    }
}
