import Platform

/// The model's time is the platform's one kind of clock (`TimeSource`): `SystemTime` in the
/// service, ``ManualClock`` in tests. The model reads its monotonic side as an ``Instant`` for
/// deadlines, and its wall clock for the `started` timestamps of activities.
extension TimeSource {
    /// The current monotonic instant; never decreases.
    public var now: Instant {
        Instant(nanoseconds: monotonicNanoseconds)
    }
}
