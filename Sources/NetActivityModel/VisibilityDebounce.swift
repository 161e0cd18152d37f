/// AFNetworking's anti-flicker rule: Visible becomes true only after Active has stayed true
/// for activationDelay, and false only after Active has stayed false for completionDelay.
/// Activity shorter than the activation delay never shows; a gap shorter than the completion
/// delay never hides it. A zero delay flips at once.
///
/// A flip falls due exactly when Active has held for the whole delay (`start + delay`, not
/// later). The owner arms a timer for ``deadline`` and calls ``advance(to:)`` when it fires.
public struct VisibilityDebounce: Sendable {
    /// How long Active must stay true before Visible turns true. Zero or negative: at once.
    public let activationDelay: Duration
    /// How long Active must stay false before Visible turns false. Zero or negative: at once.
    public let completionDelay: Duration

    /// The debounced state: what a panel should show.
    public private(set) var isVisible = false

    /// When a pending flip falls due; nil when Visible already matches Active.
    public private(set) var deadline: Instant?

    // The last Active value reported; Visible chases it.
    private var isActive = false

    /// Creates a debounce with Active and Visible both false.
    public init(activationDelay: Duration, completionDelay: Duration) {
        self.activationDelay = activationDelay
        self.completionDelay = completionDelay
    }

    /// Active changed at `now`. Returns true if isVisible flipped at once (zero delay).
    ///
    /// Reporting the value Active already has does nothing (it does not restart a pending
    /// delay). Call ``advance(to:)`` first if a deadline may already be due, so a flip that
    /// fell due before this change still happens.
    public mutating func activeChanged(to active: Bool, at now: Instant) -> Bool {
        guard active != isActive else { return false }
        isActive = active
        guard active != isVisible else {
            // Active returned to what is shown before the delay ran out: nothing to flip.
            deadline = nil
            return false
        }
        let delay = active ? activationDelay : completionDelay
        guard delay > .zero else {
            isVisible = active
            deadline = nil
            return true
        }
        deadline = now + delay
        return false
    }

    /// Returns true if isVisible flipped because a pending deadline <= now passed.
    public mutating func advance(to now: Instant) -> Bool {
        guard let deadline, deadline <= now else { return false }
        self.deadline = nil
        isVisible = isActive
        return true
    }
}
