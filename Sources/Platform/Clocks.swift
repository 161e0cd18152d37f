#if canImport(Glibc)
import Glibc
#endif

/// The system's clocks, read in one place. The corresponding C function is `clock_gettime`.
public enum Clocks {
    /// `CLOCK_MONOTONIC` in nanoseconds: never goes back, the time base of timers and rates.
    public static func monotonicNanoseconds() -> UInt64 {
        read(CLOCK_MONOTONIC, unit: 1)
    }

    /// `CLOCK_REALTIME` in microseconds since the Unix epoch; 0 for a clock set before 1970.
    public static func wallMicroseconds() -> UInt64 {
        read(CLOCK_REALTIME, unit: 1_000)
    }

    private static func read(_ clock: clockid_t, unit: UInt64) -> UInt64 {
        var time = timespec()
        system_clock_gettime(clock, &time)
        guard time.tv_sec >= 0 else { return 0 }
        return UInt64(time.tv_sec) &* (1_000_000_000 / unit) &+ UInt64(time.tv_nsec) / unit
    }
}
