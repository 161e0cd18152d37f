/// The one kind of clock code with deadlines is given: the event loop's timers, the model's
/// throttle and debounce, the service's `started` stamps. `SystemTime` in a program; a test's
/// clock moved by hand (the model's `ManualClock`) in a test, which then never sleeps.
/// Implementations must be safe to read from any thread.
public protocol TimeSource: Sendable {
    /// The monotonic reading in nanoseconds; never decreases.
    var monotonicNanoseconds: UInt64 { get }

    /// The wall-clock time in microseconds since the Unix epoch.
    var wallMicroseconds: UInt64 { get }

    /// Whether the clock moves by itself. Code that waits for a deadline sleeps until it only
    /// on such a clock; a clock moved by hand wakes it instead, through `onAdvance(_:)`.
    var movesByItself: Bool { get }

    /// Arranges for `moved` to run, on the thread that moves the clock, each time it is moved
    /// by hand; nothing for a clock that moves by itself.
    func onAdvance(_ moved: @escaping @Sendable () -> Void)
}

extension TimeSource {
    public var movesByItself: Bool { true }
    public func onAdvance(_ moved: @escaping @Sendable () -> Void) {}
}

/// The system's clocks (`Clocks`): `CLOCK_MONOTONIC` and `CLOCK_REALTIME`.
public struct SystemTime: TimeSource {
    public init() {}

    public var monotonicNanoseconds: UInt64 { Clocks.monotonicNanoseconds() }
    public var wallMicroseconds: UInt64 { Clocks.wallMicroseconds() }
}
