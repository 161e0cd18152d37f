import DBus

/// One tracked activity as the service publishes it in `Activities`.
public struct ActivityInfo: Equatable, Hashable, Sendable {
    /// The service's id for it; never 0.
    public var id: UInt32
    /// The unique bus name of the connection that owns it.
    public var owner: String
    public var label: String
    /// Bytes done so far.
    public var completed: UInt64
    /// Bytes expected; 0 when unknown.
    public var total: UInt64
    /// When it began, in microseconds since the Unix epoch.
    public var started: UInt64
    /// The owner's process id, or nil until the service has learned it.
    public var processID: UInt32?
    /// The owner's user id, or nil until the service has learned it.
    public var userID: UInt32?
    /// The owner's application (Flatpak app id, systemd app id or executable name); "" until known.
    public var application: String
    /// The bus whose service published it: `.system` in a merged snapshot's system entries.
    public var bus: Bus
    /// The application the activity is for, as its reporter claims it (a desktop id such as
    /// `org.gnome.Software`); "" without one. Interface version 3.
    public var claimedApplication: String
    /// A themed icon name or an absolute path; "" without one. Interface version 3.
    public var icon: String
    /// What it is for: `download`, `upload`, `sync`, `update` or `other`. Interface version 3.
    public var kind: String
    /// The service's `Fraction` while the activity reports progress only as a fraction
    /// (fraction mode), in 0...1; nil otherwise.
    public var reportedFraction: Double?
    /// Bytes per second, as the service smooths it; 0 when unknown or stalled.
    public var rate: Double

    public init(
        id: UInt32, owner: String, label: String, completed: UInt64, total: UInt64, started: UInt64,
        processID: UInt32? = nil, userID: UInt32? = nil, application: String = "", bus: Bus = .session,
        claimedApplication: String = "", icon: String = "", kind: String = "other", reportedFraction: Double? = nil,
        rate: Double = 0
    ) {
        self.id = id
        self.owner = owner
        self.label = label
        self.completed = completed
        self.total = total
        self.started = started
        self.processID = processID
        self.userID = userID
        self.application = application
        self.bus = bus
        self.claimedApplication = claimedApplication
        self.icon = icon
        self.kind = kind
        self.reportedFraction = reportedFraction
        self.rate = rate
    }

    /// How far along, in 0...1: `completed / total` while the total is known, the reported
    /// fraction in fraction mode; nil when unknown.
    public var fraction: Double? {
        total > 0 ? min(1, Double(completed) / Double(total)) : reportedFraction
    }

    /// Seconds until done at the current rate; nil unless both the total bytes and a rate are
    /// known (a fraction alone says nothing of how many bytes are left).
    public var remainingSeconds: Double? {
        guard total > 0, rate > 0, rate.isFinite else { return nil }
        return Double(total - min(completed, total)) / rate
    }

    /// Decodes one entry of `Activities`, `(ussttt)`; nil if it has another shape.
    public init?(_ value: Value) {
        guard let entry = ActivityEntry(value) else { return nil }
        self.init(
            id: entry.id, owner: entry.owner, label: entry.label, completed: entry.completed, total: entry.total,
            started: entry.started)
    }
}

/// The service's published state at one moment: what a panel shows.
public struct IndicatorSnapshot: Equatable, Sendable {
    /// `Count > 0`.
    public var active: Bool
    /// The debounced state a panel should show.
    public var visible: Bool
    /// Shared counter plus live tracked activities.
    public var count: UInt32
    /// Overall byte progress in 0...1, or nil when no activity knows its total.
    public var progress: Double?
    /// Live tracked activities, sorted by id.
    public var activities: [ActivityInfo]
    /// Whether the service was reachable when this was taken; an unreachable service reads as idle.
    public var serviceAvailable: Bool
    /// Bytes per second over every activity; 0 when none has a rate.
    public var rate: Double

    public init(
        active: Bool = false, visible: Bool = false, count: UInt32 = 0, progress: Double? = nil,
        activities: [ActivityInfo] = [], serviceAvailable: Bool = true, rate: Double = 0
    ) {
        self.active = active
        self.visible = visible
        self.count = count
        self.progress = progress
        self.activities = activities
        self.serviceAvailable = serviceAvailable
        self.rate = rate
    }

    /// Seconds until the last activity whose time left is known is done: the longest of their
    /// `remainingSeconds` (transfers run side by side, so the slowest one decides); nil when
    /// none is known.
    public var remainingSeconds: Double? {
        activities.lazy.compactMap(\.remainingSeconds).max()
    }

    /// The activity moving the most bytes per second (else the first listed), whose kind a
    /// panel shows.
    public var busiestActivity: ActivityInfo? {
        activities.max { $0.rate < $1.rate } .flatMap { $0.rate > 0 ? $0 : nil } ?? activities.first
    }

    /// The state shown while the service is gone.
    public static let unavailable = IndicatorSnapshot(serviceAvailable: false)

    /// Applies property values (from `GetAll` or `PropertiesChanged`, variants unwrapped or
    /// not); values of an unexpected type are ignored, never trusted.
    public mutating func apply(_ properties: [String: Value]) {
        typealias Main = NetActivityInterface
        for (name, value) in properties {
            switch name {
            case Main.active.name.rawValue: if let flag = Main.active.decode(value) { active = flag }
            case Main.visible.name.rawValue: if let flag = Main.visible.decode(value) { visible = flag }
            case Main.count.name.rawValue: if let number = Main.count.decode(value) { count = number }
            case Main.progress.name.rawValue:
                if let fraction = Main.progress.decode(value) {
                    progress = fraction >= 0 && fraction.isFinite ? min(1, fraction) : nil
                }
            case Main.rate.name.rawValue:
                if let number = Main.rate.decode(value) { rate = number.isFinite && number > 0 ? number : 0 }
            case Main.activities.name.rawValue:
                // Entry by entry: one of another shape is left out, the others kept.
                if let elements = (value.unwrapped ?? value).elements {
                    activities = elements.compactMap(ActivityInfo.init)
                }
            default: break
            }
        }
    }

    /// The contract's aggregate `Progress` (version 3) over `activities`: byte activities weigh
    /// by their total, each fraction-mode one as much as the mean total of the byte activities
    /// (1 when there are none); nil when none knows how far it is.
    public static func progress<Activities: Sequence<ActivityInfo>>(of activities: Activities) -> Double? {
        // Doubles: a sum of UInt64 byte counts from two services may overflow UInt64.
        var completed = 0.0
        var total = 0.0
        var byteActivities = 0
        var fractions = 0.0
        var fractionActivities = 0
        for activity in activities {
            if activity.total > 0 {
                completed += Double(min(activity.completed, activity.total))
                total += Double(activity.total)
                byteActivities += 1
            } else if let fraction = activity.reportedFraction {
                fractions += fraction
                fractionActivities += 1
            }
        }
        guard byteActivities + fractionActivities > 0 else { return nil }
        let weight = byteActivities > 0 ? total / Double(byteActivities) : 1
        return min(1, max(0, (completed + weight * fractions) / (total + weight * Double(fractionActivities))))
    }

    /// The sum of `activities`' rates.
    public static func rate<Activities: Sequence<ActivityInfo>>(of activities: Activities) -> Double {
        activities.reduce(0) { $0 + $1.rate }
    }
}
