/// When `netactivity top` draws, worked out from the times it is told alone (no clock, no
/// timer), so its pacing is a unit test.
///
/// A change draws at once if the last frame is an interval old, else when it is: at most a
/// frame an interval, however often the services signal. While something is active, a tick
/// draws every interval (rates, time left and the sparkline move on); while nothing is, no
/// frame is due and nothing needs to wake.
struct RedrawSchedule: Equatable {
    /// The least time between two frames, and the tick while something is active, in the
    /// caller's time unit (nanoseconds for `top`).
    let interval: UInt64
    /// When the last frame was drawn; nil before the first.
    private(set) var lastDrawn: UInt64?
    /// When the next frame is due; nil while none is (idle, or before the first change).
    private(set) var due: UInt64?

    init(interval: UInt64) {
        self.interval = interval
    }

    /// What to do about a change.
    enum Decision: Equatable {
        /// Draw now.
        case drawNow
        /// Draw at this time: set a timer for it.
        case drawAt(UInt64)
        /// A frame is due already and will show the change: nothing to do.
        case alreadyDue
    }

    /// Something changed at `now` (a state arrived, a notice).
    mutating func changed(at now: UInt64) -> Decision {
        if due != nil { return .alreadyDue }
        guard let lastDrawn, now &- lastDrawn < interval else { return .drawNow }
        let next = lastDrawn + interval
        due = next
        return .drawAt(next)
    }

    /// A frame was drawn at `now`, showing a state that is `active` or not. Returns when the
    /// next tick is due (set a timer for it), or nil while nothing is active: then nothing is
    /// due until the next change.
    mutating func drew(at now: UInt64, active: Bool) -> UInt64? {
        lastDrawn = now
        due = active ? now + interval : nil
        return due
    }

    /// The frame that was due is not coming (its timer was cancelled): a frame drawn out of
    /// turn, on a resize, follows with `drew`.
    mutating func cancel() {
        due = nil
    }
}
