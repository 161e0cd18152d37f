/// Throttle for the throttled properties (Count, Progress, Activities): the first change
/// after a quiet period goes out at once; later changes within the window are merged; the
/// last value goes out by the end of the window. A zero window sends every change.
///
/// The throttle knows nothing of values; its owner compares them. The calls pair up so:
/// - on a change: `closeIfDue(at: now)` first (an expired window counts as closed), then, if
///   the throttle is not ``isOpen``, send the values that differ and, if anything was sent,
///   call ``reopen(at:)``; while it is open the change waits for the window's end;
/// - at ``deadline``: `if throttle.closeIfDue(at: now)`, send what differs from the values
///   last sent and, only if something was sent, call ``reopen(at:)`` so a sustained flood
///   goes out at most once per window. Sending nothing leaves the throttle quiet.
public struct Throttle: Sendable {
    /// The window length; zero (or negative) means every change goes out at once.
    public let window: Duration

    /// The end of the open window; nil when quiet. Never set when the window is zero.
    public private(set) var deadline: Instant?

    /// Creates a quiet throttle. A negative `window` acts as zero.
    public init(window: Duration) {
        self.window = window
    }

    /// Whether a window is open, that is, whether a change now would have to wait.
    public var isOpen: Bool {
        deadline != nil
    }

    /// Closes the window if its deadline is at or before `now`; returns whether it did.
    ///
    /// After a true result the caller sends what differs from the last sent values and, if it
    /// sent anything, calls ``reopen(at:)``.
    public mutating func closeIfDue(at now: Instant) -> Bool {
        guard let deadline, deadline <= now else { return false }
        self.deadline = nil
        return true
    }

    /// Values were just sent at `now` (the trailing edge): opens a new window from `now`.
    /// Does nothing when the window is zero.
    public mutating func reopen(at now: Instant) {
        deadline = window > .zero ? now + window : nil
    }
}
