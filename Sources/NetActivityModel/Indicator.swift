/// Ledger + debounce + throttle: every mutation returns what must be announced right now
/// (before the reply to the call that caused it).
///
/// Keeps the last announced value of every property and announces a property only when its
/// value differs from that. `Active` and `Visible` go out on every transition; `Count`,
/// `Progress` and `Activities` go through the ``Throttle``. A call that throws changes
/// nothing, throttle and debounce included.
///
/// The owner arms one timer for ``nextDeadline`` (none when it is nil, so an idle service
/// never wakes) and calls ``advance()`` when it fires. Not thread-safe by itself: a value
/// type meant to live inside one actor or event loop.
public struct Indicator: Sendable {
    /// The ledger behind the properties, for reading.
    public private(set) var ledger = Ledger()

    private let clock: any IndicatorClock
    private var throttle: Throttle
    private var debounce: VisibilityDebounce
    private var announced = IndicatorState.idle
    // The ledger revision that `announced.activities` reflects; lets most checks skip
    // building and comparing the array.
    private var announcedRevision: UInt64 = 0

    /// Creates an idle indicator reading time from `clock`.
    public init(settings: IndicatorSettings = .init(), clock: any IndicatorClock) {
        self.clock = clock
        throttle = Throttle(window: settings.throttle)
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
            activities: ledger.activities
        )
    }

    /// When ``advance()`` is next due: the earlier of the throttle's and the debounce's
    /// deadlines; nil when nothing is pending.
    public var nextDeadline: Instant? {
        switch (throttle.deadline, debounce.deadline) {
        case let (throttle?, debounce?): min(throttle, debounce)
        case let (throttle, debounce): throttle ?? debounce
        }
    }

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

    /// Begins a tracked activity started now (``IndicatorClock/wallMicroseconds``).
    ///
    /// - Throws: as ``Ledger/begin(owner:label:started:)``.
    public mutating func begin(owner: String, label: String) throws(LedgerError) -> (id: ActivityID, announcement: Announcement) {
        let id = try ledger.begin(owner: owner, label: label, started: clock.wallMicroseconds)
        return (id, settle())
    }

    /// Sets the byte progress of an activity.
    ///
    /// - Throws: as ``Ledger/update(_:by:completed:total:)``.
    public mutating func update(_ id: ActivityID, by owner: String, completed: UInt64, total: UInt64) throws(LedgerError) -> Announcement {
        try ledger.update(id, by: owner, completed: completed, total: total)
        return settle()
    }

    /// Ends an activity.
    ///
    /// - Throws: as ``Ledger/end(_:by:)``.
    public mutating func end(_ id: ActivityID, by owner: String) throws(LedgerError) -> Announcement {
        try ledger.end(id, by: owner)
        return settle()
    }

    /// Ends every activity of `owner` (it left the bus): one announcement however many ended.
    public mutating func release(owner: String) -> Announcement {
        ledger.release(owner: owner)
        return settle()
    }

    /// The clock reached (or passed) nextDeadline: returns due announcements (Visible flips,
    /// throttled values at the window end). Calling it early returns an empty announcement.
    public mutating func advance() -> Announcement {
        let now = clock.now
        var announcement = Announcement()
        if debounce.advance(to: now) {
            announceVisible(into: &announcement)
        }
        if throttle.closeIfDue(at: now), announceThrottled(into: &announcement) {
            throttle.reopen(at: now)
        }
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
        if active != announced.active {
            announcement.active = active
            announced.active = active
        }
        if debounce.activeChanged(to: active, at: now) {
            announceVisible(into: &announcement)
        }
        // Leading edge: a quiet throttle lets the values out at once and opens a window if
        // anything went. An open window holds them for its end, so they need no comparing.
        if !throttle.isOpen, announceThrottled(into: &announcement) {
            throttle.reopen(at: now)
        }
        return announcement
    }

    private mutating func announceVisible(into announcement: inout Announcement) {
        guard debounce.isVisible != announced.visible else { return }
        announcement.visible = debounce.isVisible
        announced.visible = debounce.isVisible
    }

    /// Adds every throttled value that differs from its announced value and records it as
    /// announced; returns whether any did.
    private mutating func announceThrottled(into announcement: inout Announcement) -> Bool {
        let count = ledger.count
        if count != announced.count {
            announcement.count = count
            announced.count = count
        }
        let progress = ledger.progress
        if progress != announced.progress {
            announcement.progress = progress
            announced.progress = progress
        }
        announcement.activities = takeActivitiesIfChanged()
        return announcement.count != nil || announcement.progress != nil || announcement.activities != nil
    }

    /// The live activities if they differ from the announced ones, now recorded as announced.
    private mutating func takeActivitiesIfChanged() -> [Activity]? {
        // An unchanged revision means nothing changed since the last look: skip building
        // and comparing what may be thousands of activities.
        guard ledger.activitiesRevision != announcedRevision else { return nil }
        announcedRevision = ledger.activitiesRevision
        let activities = ledger.activities
        guard activities != announced.activities else { return nil }
        announced.activities = activities
        return activities
    }
}
