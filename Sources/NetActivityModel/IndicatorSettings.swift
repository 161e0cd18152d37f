/// The timing of an ``Indicator``: the daemon's `--throttle-ms`, `--activation-delay` and
/// `--completion-delay`.
///
/// Negative durations act as zero.
public struct IndicatorSettings: Sendable, Equatable {
    /// The throttle window for Count, Progress and Activities; zero sends every change.
    public var throttle: Duration
    /// How long Active must stay true before Visible turns true; zero shows at once.
    public var activationDelay: Duration
    /// How long Active must stay false before Visible turns false; zero hides at once.
    public var completionDelay: Duration

    /// Creates settings; the defaults are the contract's (50 ms, 1 s, 170 ms).
    public init(
        throttle: Duration = .milliseconds(50),
        activationDelay: Duration = .seconds(1),
        completionDelay: Duration = .milliseconds(170)
    ) {
        self.throttle = throttle
        self.activationDelay = activationDelay
        self.completionDelay = completionDelay
    }
}
