/// Identifies a tracked activity; never 0 and never reused while the service runs.
public typealias ActivityID = UInt32

/// A tracked activity: one entry of the `Activities` property, `(ussttt)` on the bus, and one
/// activity object.
public struct Activity: Equatable, Hashable, Sendable {
    /// The activity's id, assigned by ``Ledger/begin(owner:label:started:userID:hints:)``.
    public var id: ActivityID
    /// The unique bus name of the connection that began it (for example `:1.42`).
    public var owner: String
    /// The caller's description, at most ``Ledger/maximumLabelBytes`` UTF-8 bytes.
    public var label: String
    /// Bytes transferred so far; 0 in fraction mode.
    public var completed: UInt64
    /// Bytes expected in all; 0 means unknown (and in fraction mode).
    public var total: UInt64
    /// When it began, in microseconds since the Unix epoch.
    public var started: UInt64
    /// What the caller said the activity is for, at its beginning.
    public var hints: ActivityHints
    /// The last fraction reported while progress is known only as a fraction (fraction mode);
    /// nil while the activity reports bytes, or nothing.
    public var reportedFraction: Double?
    /// Bytes per second, smoothed (``RateMeter``); 0 in fraction mode, before two byte updates
    /// and once no bytes have moved for ``RateMeter/stallTimeout``.
    public var rate: Double
    /// How ``rate`` is worked out: bookkeeping, not part of the activity's value.
    var meter = RateMeter()

    /// Creates an activity from its fields.
    public init(
        id: ActivityID,
        owner: String,
        label: String,
        completed: UInt64,
        total: UInt64,
        started: UInt64,
        hints: ActivityHints = ActivityHints(),
        reportedFraction: Double? = nil,
        rate: Double = 0
    ) {
        self.id = id
        self.owner = owner
        self.label = label
        self.completed = completed
        self.total = total
        self.started = started
        self.hints = hints
        self.reportedFraction = reportedFraction
        self.rate = rate
    }

    /// The `Fraction` property: `completed / total` while bytes are known, the reported fraction
    /// in fraction mode, -1.0 when unknown.
    public var fraction: Double {
        if total > 0 { return Double(completed) / Double(total) }
        return reportedFraction ?? -1.0
    }

    /// Whether it takes part in `Progress` by its bytes (version 3: `total > 0`).
    var isByteActivity: Bool { total > 0 }
}

/// What an activity is for: the `kind` hint.
public enum ActivityKind: String, Equatable, Hashable, Sendable, CaseIterable {
    case download, upload, sync, update, other
}

/// The hints `BeginActivityWithHints` gives: who the activity is for, its icon and its kind.
public struct ActivityHints: Equatable, Hashable, Sendable {
    /// The desktop application id the activity is for, as the caller claims it; "" without one.
    public var application: String
    /// A themed icon name or an absolute path; "" without one.
    public var icon: String
    /// What it is for; ``ActivityKind/other`` without the hint.
    public var kind: ActivityKind

    /// The longest `application` and `icon`, in UTF-8 bytes.
    public static let maximumBytes = 255

    public init(application: String = "", icon: String = "", kind: ActivityKind = .other) {
        self.application = application
        self.icon = icon
        self.kind = kind
    }
}

/// The smoothing behind an activity's `Rate`: the bytes moved since a checkpoint one to two
/// windows old, divided by the time since it (two checkpoints, the older dropped once the newer
/// is a window old). Constant memory per activity, and it answers within two windows, as
/// curl's average over its last few seconds does, without a sample ring per activity.
///
/// Only updates that move bytes forward count: a repeated `completed` leaves the rate as it
/// was, and the rate falls to 0 only once ``stallTimeout`` has passed without bytes (the
/// ledger's stall queue), so a transfer that pauses for a moment keeps showing its speed.
struct RateMeter: Sendable {
    /// How long one checkpoint serves before the next takes over.
    static let window: Duration = .milliseconds(1_500)
    /// How long without bytes before the rate is 0.
    static let stallTimeout: Duration = .seconds(5)

    private var older: (bytes: UInt64, at: Instant)?
    private var newer: (bytes: UInt64, at: Instant)?
    private var lastBytes: UInt64 = 0
    /// The last update that moved bytes forward.
    private(set) var lastMoved: Instant?
    /// Whether the activity has an entry in the ledger's stall queue.
    var queuedForStall = false

    init() {}

    /// A byte update: `completed` at `now`. Returns the new rate, or nil to keep the current one.
    mutating func sample(_ completed: UInt64, at now: Instant) -> Double? {
        guard let older, let newer, completed >= lastBytes else {
            // The first byte update, or the count went back (a retry, a new file): start here.
            restart(completed, at: now)
            return 0
        }
        guard completed > lastBytes else { return nil }
        lastBytes = completed
        lastMoved = now
        var from = older
        if newer.at.duration(to: now) >= Self.window {
            from = newer
            self.older = newer
            self.newer = (completed, now)
        }
        let seconds = Double(from.at.duration(to: now).saturatingNanoseconds) / 1e9
        guard seconds > 0 else { return nil }
        return Double(completed - from.bytes) / seconds
    }

    /// Fraction mode: no rate until bytes are reported twice again.
    mutating func reset() {
        older = nil
        newer = nil
        lastBytes = 0
        lastMoved = nil
    }

    private mutating func restart(_ completed: UInt64, at now: Instant) {
        older = (completed, now)
        newer = (completed, now)
        lastBytes = completed
        lastMoved = nil
    }
}

extension RateMeter: Equatable, Hashable {
    // Bookkeeping: two activities with the same values are equal whatever their meters hold.
    static func == (lhs: RateMeter, rhs: RateMeter) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
