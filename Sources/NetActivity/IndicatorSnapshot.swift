import DBus
import NetActivityContract
public import NetActivityModel

/// One tracked activity as the service publishes it: the activity object's properties.
///
/// What the activity object declares is kept in ``activity``, the service model's own value
/// type (`NetActivityModel.Activity`; this library's `Activity` is the handle a reporter holds), and read through it as if declared here (`info.label`, `info.completed`): a property
/// the interface declaration binds to a field of `Activity` reaches this client, and
/// `status --json`, with no change to either. The owner's attribution and what only a client
/// knows (its bus, properties of a newer service) are fields of their own.
@dynamicMemberLookup
public struct ActivityInfo: Equatable, Hashable, Sendable {
    /// The activity's declared values, as the service's model holds them.
    public var activity: NetActivityModel.Activity
    /// The owner's process id, or nil until the service has learned it.
    public var processID: UInt32?
    /// The owner's user id, or nil until the service has learned it.
    public var userID: UInt32?
    /// The owner's application (Flatpak app id, systemd app id or executable name); "" until known.
    public var application: String
    /// The bus whose service published it: `.system` in a merged snapshot's system entries.
    public var bus: Bus
    /// The activity object's declared properties this client's `Activity` has no field for,
    /// by name, as sent (one a newer service declares). Read them typed with `self[descriptor]`.
    public var otherProperties: [String: Value] = [:]

    public init(
        id: UInt32, owner: String, label: String, completed: UInt64, total: UInt64, started: UInt64,
        processID: UInt32? = nil, userID: UInt32? = nil, application: String = "", bus: Bus = .session,
        claimedApplication: String = "", icon: String = "", kind: String = "other", reportedFraction: Double? = nil,
        rate: Double = 0
    ) {
        activity = NetActivityModel.Activity(
            id: id, owner: owner, label: label, completed: completed, total: total, started: started,
            reportedFraction: reportedFraction, rate: rate)
        self.processID = processID
        self.userID = userID
        self.application = application
        self.bus = bus
        self.claimedApplication = claimedApplication
        self.icon = icon
        self.kind = kind
    }

    /// A declared value of the activity, read and written in ``activity``.
    public subscript<Field>(dynamicMember path: WritableKeyPath<NetActivityModel.Activity, Field>) -> Field {
        get { activity[keyPath: path] }
        set { activity[keyPath: path] = newValue }
    }

    /// The application the activity is for, as its reporter claims it (a desktop id such as
    /// `org.gnome.Software`); "" without one. Interface version 3.
    public var claimedApplication: String {
        get { activity.hints.application }
        set { activity.hints.application = newValue }
    }
    /// A themed icon name or an absolute path; "" without one. Interface version 3.
    public var icon: String {
        get { activity.hints.icon }
        set { activity.hints.icon = newValue }
    }
    /// What it is for: `download`, `upload`, `sync`, `update` or `other`. Interface version 3.
    public var kind: String {
        get { activity.hints.kind.rawValue }
        set { activity.hints.kind = ActivityKind(rawValue: newValue) ?? .other }
    }

    /// How far along, in 0...1: `completed / total` while the total is known, the reported
    /// fraction in fraction mode; nil when unknown.
    public var fraction: Double? {
        let activity = activity
        return activity.total > 0 ? min(1, Double(activity.completed) / Double(activity.total)) : activity.reportedFraction
    }

    /// Seconds until done at the current rate; nil unless both the total bytes and a rate are
    /// known (a fraction alone says nothing of how many bytes are left).
    public var remainingSeconds: Double? {
        let (total, completed, rate) = (activity.total, activity.completed, activity.rate)
        guard total > 0, rate > 0, rate.isFinite else { return nil }
        return Double(total - min(completed, total)) / rate
    }

    /// The value of a declared activity property kept in `otherProperties`, decoded through its
    /// descriptor; nil while none has arrived (or for one kept in a field: read the field).
    public subscript<Type>(_ property: PropertyDescriptor<Type>) -> Type? {
        otherProperties[property.name.rawValue].flatMap(property.decode)
    }

    /// Where each property of an activity object lands: a property `Activity` holds at its
    /// declared key path (`ActivityObjectInterface.properties`), the attribution and `Fraction`
    /// here. Missing or mistyped values leave a field as it was, never trusted.
    static let properties: PropertyTable<ActivityInfo> = {
        typealias Object = ActivityObjectInterface
        @Sendable func credential(_ number: UInt32) -> UInt32? { number == NetActivityBus.unknownCredential ? nil : number }
        let held = Object.properties.compactMap { $0.field(through: \ActivityInfo.activity) }
        return PropertyTable(
            Object.descriptor,
            fields: held + [
                Object.processID.field { $0.processID = credential($1) },
                Object.userID.field { $0.userID = credential($1) },
                Object.application.field { $0.application = $1 },
                Object.fraction.field { $0.reportedFraction = (0...1).contains($1) ? $1 : nil },
            ],
            others: { $0.otherProperties[$1] = $2 })
    }()

    /// Applies an activity object's property values (from `GetManagedObjects`,
    /// `InterfacesAdded` or `PropertiesChanged`).
    mutating func apply(_ values: [String: Value]) {
        Self.properties.apply(values, to: &self)
        // Fraction is Completed / Total while the bytes are known; only fraction mode needs it.
        if activity.total > 0 { activity.reportedFraction = nil }
        if !(activity.rate.isFinite && activity.rate > 0) { activity.rate = 0 }
    }

    /// Decodes one entry of `Activities`, `(ussttt)`; nil if it has another shape.
    public init?(_ value: Value) {
        guard let entry = ActivityEntry(value) else { return nil }
        self.init(entry: entry)
    }

    /// The activity one entry of `Activities` lists (a version 1 service's only list).
    public init(entry: ActivityEntry) {
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
    /// The main object's other declared properties, by name, as sent: those `properties` keeps
    /// no field for (`Version`, `InterfaceVersion`, one a newer declaration adds). Read them
    /// typed with `self[descriptor]`.
    public var otherProperties: [String: Value] = [:]

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
    public mutating func apply(_ values: [String: Value]) {
        Self.properties.apply(values, to: &self)
    }

    /// The value of a declared main-object property kept in `otherProperties`, decoded through
    /// its descriptor; nil while none has arrived (or for one kept in a field: read the field).
    public subscript<Type>(_ property: PropertyDescriptor<Type>) -> Type? {
        otherProperties[property.name.rawValue].flatMap(property.decode)
    }

    /// Where each property of the main object lands, bound to `NetActivityInterface`'s
    /// descriptors as the service binds its getters to them.
    static let properties: PropertyTable<IndicatorSnapshot> = {
        typealias Main = NetActivityInterface
        return PropertyTable(
            Main.descriptor,
            fields: [
                Main.active.field { $0.active = $1 },
                Main.visible.field { $0.visible = $1 },
                Main.count.field { $0.count = $1 },
                Main.progress.field { $0.progress = $1 >= 0 && $1.isFinite ? min(1, $1) : nil },
                Main.rate.field { $0.rate = $1.isFinite && $1 > 0 ? $1 : 0 },
                Main.activities.field { $0.activities = $1.map(ActivityInfo.init(entry:)) },
            ],
            others: { $0.otherProperties[$1] = $2 })
    }()

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
