/// Keeps the drawn ring from changing more than once per `interval`, whatever the rate of
/// progress updates, so that hosts re-read the pixmaps (after each `NewIcon`) a few times a
/// second at most. Pure: the caller passes the time and runs the retry itself.
public struct RingPacer: Sendable {
    /// The shortest time between two drawings.
    public let interval: Duration
    private var lastDrawing: ContinuousClock.Instant?

    /// A pacer allowing one new drawing per `interval`.
    public init(interval: Duration) {
        self.interval = interval
    }

    /// What to show now of `wanted`, `current` being on show: `wanted` itself, or, when a new
    /// percent comes too soon after the last drawing, `wanted` with `current`'s ring kept and
    /// the instant at which to offer the latest state again. Everything but a new drawing
    /// (status, tooltip, the ring going away) passes at once.
    public mutating func pace(
        _ wanted: TrayAppearance, replacing current: TrayAppearance, at now: ContinuousClock.Instant
    ) -> (show: TrayAppearance, retryAt: ContinuousClock.Instant?) {
        guard wanted.ring != nil, wanted.ring != current.ring else { return (wanted, nil) }
        if let lastDrawing, now < lastDrawing + interval {
            var held = wanted
            held.ring = current.ring
            return (held, lastDrawing + interval)
        }
        lastDrawing = now
        return (wanted, nil)
    }
}
