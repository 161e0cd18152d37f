/// The throttle for each activity's own progress (`Completed` and `Total` on its object): per
/// activity, the first change after a quiet window goes out at once, later changes within the
/// window are merged, and the last value goes out by the window's end.
///
/// One timer serves every activity: sends are logged in the order they happen, so the oldest
/// logged send is always the next window to end. Each change and each due activity costs O(1)
/// amortised, however many activities are live; nothing is pending (and ``deadline`` is nil)
/// once every merged change has gone out.
public struct ProgressThrottle: Sendable {
    /// The window length; zero (or negative) sends every change at once.
    public let window: Duration

    // When each activity's progress last went out, for activities sent within a window.
    private var lastSent: [ActivityID: Instant] = [:]
    // Every send within the last window, oldest first; `head` is the oldest not yet looked at.
    private var log: [(id: ActivityID, at: Instant)] = []
    private var head = 0
    // Activities whose latest change waits for the end of their window.
    private var pending: Set<ActivityID> = []

    /// Creates a throttle with nothing sent and nothing pending.
    public init(window: Duration) {
        self.window = window
    }

    /// Whether any activity's change is waiting.
    public var hasPending: Bool { !pending.isEmpty }

    /// When ``takeDue(at:)`` next has something to do; nil when nothing is pending.
    public var deadline: Instant? {
        guard !pending.isEmpty, head < log.count else { return nil }
        return log[head].at + window
    }

    /// Activity `id`'s progress changed at `now`. Returns true when it may go out now (its
    /// window is quiet); false when it was merged into its open window.
    public mutating func changed(_ id: ActivityID, at now: Instant) -> Bool {
        guard window > .zero else { return true }
        if let sent = lastSent[id], now < sent + window {
            pending.insert(id)
            return false
        }
        record(id, at: now)
        return true
    }

    /// Activity `id`'s progress changed at `now`, but nothing may go out now (the bus is
    /// backed up): it waits for a window's end like a merged change.
    public mutating func hold(_ id: ActivityID, at now: Instant) {
        guard window > .zero else { return }
        if lastSent[id] == nil { record(id, at: now) }
        pending.insert(id)
    }

    /// Activity `id` ended: whatever it had pending is dropped.
    public mutating func forget(_ id: ActivityID) {
        pending.remove(id)
        lastSent.removeValue(forKey: id)
    }

    /// The activities whose windows ended by `now` with a change pending, oldest window
    /// first; each counts as sent at `now`, opening a new window.
    public mutating func takeDue(at now: Instant) -> [ActivityID] {
        var due: [ActivityID] = []
        while head < log.count, log[head].at + window <= now {
            let (id, at) = log[head]
            head += 1
            // A later send of the same activity has its own entry further on.
            guard lastSent[id] == at else { continue }
            if pending.remove(id) != nil {
                due.append(id)
            } else {
                lastSent.removeValue(forKey: id)
            }
        }
        compactLog()
        for id in due { record(id, at: now) }
        return due
    }

    /// Postpones every due window to `now` (the bus is backed up): what is pending stays
    /// pending, to go out merged once ``takeDue(at:)`` runs again.
    public mutating func postpone(to now: Instant) {
        var kept: [ActivityID] = []
        while head < log.count, log[head].at + window <= now {
            let (id, at) = log[head]
            head += 1
            guard lastSent[id] == at else { continue }
            if pending.contains(id) { kept.append(id) } else { lastSent.removeValue(forKey: id) }
        }
        compactLog()
        for id in kept { record(id, at: now) }
    }

    private mutating func record(_ id: ActivityID, at now: Instant) {
        lastSent[id] = now
        log.append((id, now))
    }

    /// Drops the looked-at entries once they are the larger part, so the log holds about one
    /// window's sends.
    private mutating func compactLog() {
        if head == log.count {
            log.removeAll(keepingCapacity: log.count <= 4_096)
            head = 0
        } else if head > 1_024, head * 2 > log.count {
            log.removeSubrange(..<head)
            head = 0
        }
    }
}
