import Locking
import Platform

/// A clock that moves only when told to, so tests control time exactly and never sleep.
///
/// Both readings advance together: the wall clock moves by the same amount as the monotonic
/// one. Safe to share between threads (every access takes a lock); hand the same instance to
/// the code under test and to the test that advances it.
public final class ManualClock: TimeSource, Sendable {
    private let start: Instant
    private let startWallMicroseconds: UInt64
    private let current: Locked<Instant>
    private let observers = Locked<[@Sendable () -> Void]>([])

    /// Creates a clock reading `now` and `wallMicroseconds`.
    public init(
        now: Instant = Instant(nanoseconds: 1_000_000_000),
        wallMicroseconds: UInt64 = 1_700_000_000_000_000
    ) {
        start = now
        current = Locked(now)
        startWallMicroseconds = wallMicroseconds
    }

    /// The current monotonic reading.
    public var now: Instant {
        current.withLock { $0 }
    }

    public var monotonicNanoseconds: UInt64 { now.nanoseconds }

    /// The wall-clock reading: the initial one plus the time advanced so far, saturating.
    public var wallMicroseconds: UInt64 {
        current.withLock { current in
            // Derived from the total elapsed nanoseconds so that many sub-microsecond steps
            // still add up on the wall clock.
            let elapsed = (current.nanoseconds - start.nanoseconds) / 1_000
            let (sum, overflow) = startWallMicroseconds.addingReportingOverflow(elapsed)
            return overflow ? .max : sum
        }
    }

    /// Never: it moves only by `advance(by:)`.
    public var movesByItself: Bool { false }

    /// Runs `moved` after every `advance(by:)`, on the advancing thread: an event loop waiting
    /// for a deadline on this clock wakes up to look at it.
    public func onAdvance(_ moved: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(moved) }
    }

    /// Moves both readings forward by `duration`; a negative duration does nothing.
    public func advance(by duration: Duration) {
        // The observers run outside the lock: they read the clock.
        current.withLock { $0 = $0 + duration }
        for moved in observers.withLock({ $0 }) { moved() }
    }
}
