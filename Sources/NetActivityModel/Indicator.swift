import Platform

/// Ledger + debounce + throttle: every mutation returns what must be announced right now
/// (before the reply to the call that caused it).
///
/// Keeps the last announced value of every property and announces a property only when its
/// value differs from that. `Active` and `Visible` go out on every transition; `Count`,
/// `Progress`, `Rate` and `Activities` go through the ``Throttle``, except that an announcement
/// carrying `Active` also carries `Count`, `Progress` and `Rate` when they differ from what was last
/// announced, so a watcher never holds an `Active` that disagrees with its `Count`. Each
/// activity's own progress goes through the ``ProgressThrottle``. A call that throws changes
/// nothing, throttle and debounce included.
///
/// While ``holdsThrottled`` is set (the bus is backed up) nothing throttled goes out: changes
/// wait, merged, for a window's end when it is no longer set.
///
/// The owner arms one timer for ``nextDeadline`` (none when it is nil, so an idle service
/// never wakes) and calls ``advance()`` when it fires. Not thread-safe by itself: a value
/// type meant to live inside one actor or event loop.
public struct Indicator: Sendable {
    /// The ledger behind the properties, for reading.
    public private(set) var ledger = Ledger()

    private let clock: any TimeSource
    private var throttle: Throttle
    private var progressThrottle: ProgressThrottle
    private var debounce: VisibilityDebounce
    private var announcedActive = false
    private var announcedVisible = false
    private var announcedCount: UInt32 = 0
    private var announcedProgress = -1.0
    private var announcedRate = 0.0
    // The ledger revision of the activities last announced (invalidated).
    private var announcedRevision: UInt64 = 0

    /// Set while throttled values must not go out (the service's outgoing queue is full).
    public var holdsThrottled = false

    /// Creates an idle indicator reading time from `clock`.
    public init(settings: IndicatorSettings = .init(), clock: any TimeSource) {
        self.clock = clock
        throttle = Throttle(window: settings.throttle)
        progressThrottle = ProgressThrottle(window: settings.throttle)
        debounce = VisibilityDebounce(
            activationDelay: settings.activationDelay,
            completionDelay: settings.completionDelay
        )
    }

    /// The debounced state a panel should show, without building the whole ``state``.
    public var isVisible: Bool { debounce.isVisible }

    /// The true current values (`visible` is the debounce state), whether announced yet or not.
    public var state: IndicatorState {
        IndicatorState(
            active: ledger.isActive,
            visible: debounce.isVisible,
            count: ledger.count,
            progress: ledger.progress,
            activities: ledger.activities,
            rate: ledger.rate
        )
    }

    /// When ``advance()`` is next due: the earliest of the throttles', the debounce's and the
    /// next rate's fall to 0; nil when nothing is pending.
    public var nextDeadline: Instant? {
        [throttle.deadline, progressThrottle.deadline, debounce.deadline, ledger.nextStall].lazy.compactMap { $0 }.min()
    }

    /// The throttle window, for a caller that postpones throttled values.
    public var throttleWindow: Duration { throttle.window }

    // MARK: - Mutations

    /// Adds one to the shared counter.
    ///
    /// - Throws: ``LedgerError/counterLimit(limit:)``.
    public mutating func push() throws(LedgerError) -> Announcement {
        try ledger.push()
        return settle()
    }

    /// Takes one from the shared counter.
    ///
    /// - Throws: ``LedgerError/notActive``.
    public mutating func pop() throws(LedgerError) -> Announcement {
        try ledger.pop()
        return settle()
    }

    /// Sets the byte progress of an activity.
    ///
    /// - Throws: as ``Ledger/update(_:by:completed:total:)``.
    public mutating func update(_ id: ActivityID, by owner: String, completed: UInt64, total: UInt64) throws(LedgerError) -> Announcement {
        let now = clock.now
        guard try ledger.update(id, by: owner, completed: completed, total: total, at: now) else { return Announcement() }
        return progressChanged(id, at: now)
    }

    /// Sets the progress of an activity as a fraction (fraction mode).
    ///
    /// - Throws: as ``Ledger/updateFraction(_:by:fraction:)``.
    public mutating func updateFraction(_ id: ActivityID, by owner: String, fraction: Double) throws(LedgerError) -> Announcement {
        guard try ledger.updateFraction(id, by: owner, fraction: fraction) else { return Announcement() }
        return progressChanged(id, at: clock.now)
    }

    /// An activity's progress changed: the main object's values, and the activity's own
    /// progress through its throttle.
    private mutating func progressChanged(_ id: ActivityID, at now: Instant) -> Announcement {
        var announcement = settle()
        if holdsThrottled {
            progressThrottle.hold(id, at: now)
        } else if progressThrottle.changed(id, at: now) {
            announcement.progressOf = [id]
        }
        return announcement
    }

    /// Ends an activity.
    ///
    /// - Throws: as ``Ledger/end(_:by:)``.
    public mutating func end(_ id: ActivityID, by owner: String) throws(LedgerError) -> Announcement {
        try ledger.end(id, by: owner)
        progressThrottle.forget(id)
        return settle()
    }

    /// Ends every activity of `owner` (it left the bus): one announcement however many ended.
    /// Returns the ended activities' ids, in order.
    public mutating func release(owner: String) -> (ended: [ActivityID], announcement: Announcement) {
        let ended = ledger.release(owner: owner)
        for id in ended { progressThrottle.forget(id) }
        return (ended, settle())
    }

    /// Begins a tracked activity started now (the clock's `wallMicroseconds`). Where the
    /// owner's user id is given (the system bus), the per-user limit holds too.
    ///
    /// - Throws: as ``Ledger/begin(owner:label:started:userID:)``.
    public mutating func begin(
        owner: String, label: String, userID: UInt32? = nil, hints: ActivityHints = ActivityHints()
    ) throws(LedgerError) -> (id: ActivityID, announcement: Announcement) {
        let id = try ledger.begin(
            owner: owner, label: label, started: clock.wallMicroseconds, userID: userID, hints: hints)
        return (id, settle())
    }

    /// The clock reached (or passed) nextDeadline: returns due announcements (Visible flips,
    /// throttled values at the window end, rates that fell to 0). Calling it early returns an
    /// empty announcement.
    public mutating func advance() -> Announcement {
        let now = clock.now
        var announcement = Announcement()
        if debounce.advance(to: now) {
            announceVisible(into: &announcement)
        }
        // A rate that falls to 0 is a progress change of its activity and of the main `Rate`.
        let stalled = ledger.stallRates(at: now)
        if holdsThrottled {
            for id in stalled { progressThrottle.hold(id, at: now) }
            // Keep every window open, so the changes stay merged until the bus drains.
            if throttle.closeIfDue(at: now) || (!stalled.isEmpty && !throttle.isOpen) { throttle.reopen(at: now) }
            progressThrottle.postpone(to: now)
            return announcement
        }
        let leading = stalled.filter { progressThrottle.changed($0, at: now) }
        let closed = throttle.closeIfDue(at: now)
        if closed || (!stalled.isEmpty && !throttle.isOpen), announceThrottled(into: &announcement) {
            throttle.reopen(at: now)
        }
        announcement.progressOf = progressThrottle.takeDue(at: now) + leading
        return announcement
    }

    // MARK: - Announcing

    /// Brings announcements up to date after a successful ledger change.
    private mutating func settle() -> Announcement {
        let now = clock.now
        var announcement = Announcement()
        // Deadlines that passed before this change still count: a flip that fell due goes
        // out, and an expired window is closed so this change is a leading edge.
        if debounce.advance(to: now) {
            announceVisible(into: &announcement)
        }
        _ = throttle.closeIfDue(at: now)

        let active = ledger.isActive
        if active != announcedActive {
            announcement.active = active
            announcedActive = active
            // Consistency: Count and Progress travel with Active whatever their throttle says.
            announceCountAndProgress(into: &announcement)
        }
        if debounce.activeChanged(to: active, at: now) {
            announceVisible(into: &announcement)
        }
        if holdsThrottled {
            if !throttle.isOpen { throttle.reopen(at: now) }
        } else if !throttle.isOpen, announceThrottled(into: &announcement) {
            // Leading edge: a quiet throttle lets the values out at once and opens a window if
            // anything went. An open window holds them for its end, so they need no comparing.
            throttle.reopen(at: now)
        }
        return announcement
    }

    private mutating func announceVisible(into announcement: inout Announcement) {
        guard debounce.isVisible != announcedVisible else { return }
        announcement.visible = debounce.isVisible
        announcedVisible = debounce.isVisible
    }

    /// Adds every throttled value that differs from its announced value and records it as
    /// announced; returns whether any did.
    private mutating func announceThrottled(into announcement: inout Announcement) -> Bool {
        announceCountAndProgress(into: &announcement)
        // Only the revision is compared: a changed list goes out by name, never by value.
        if ledger.activitiesRevision != announcedRevision {
            announcedRevision = ledger.activitiesRevision
            announcement.activitiesChanged = true
        }
        return announcement.count != nil || announcement.progress != nil || announcement.rate != nil
            || announcement.activitiesChanged
    }

    private mutating func announceCountAndProgress(into announcement: inout Announcement) {
        let count = ledger.count
        if count != announcedCount {
            announcement.count = count
            announcedCount = count
        }
        let progress = ledger.progress
        if progress != announcedProgress {
            announcement.progress = progress
            announcedProgress = progress
        }
        let rate = ledger.rate
        if rate != announcedRate {
            announcement.rate = rate
            announcedRate = rate
        }
    }
}
