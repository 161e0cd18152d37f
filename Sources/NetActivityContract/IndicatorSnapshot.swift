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

    public init(
        id: UInt32, owner: String, label: String, completed: UInt64, total: UInt64, started: UInt64,
        processID: UInt32? = nil, userID: UInt32? = nil, application: String = "", bus: Bus = .session
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
    }

    /// `completed / total` in 0...1, or nil when the total is unknown.
    public var fraction: Double? {
        total > 0 ? min(1, Double(completed) / Double(total)) : nil
    }

    /// Decodes one `(ussttt)` struct; nil if it has another shape.
    public init?(_ value: Value) {
        guard let fields = value.fields, fields.count == 6,
            let id = fields[0].uint32, case .string(let owner) = fields[1], case .string(let label) = fields[2],
            let completed = fields[3].uint64, let total = fields[4].uint64, let started = fields[5].uint64
        else { return nil }
        self.init(id: id, owner: owner, label: label, completed: completed, total: total, started: started)
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

    public init(
        active: Bool = false, visible: Bool = false, count: UInt32 = 0, progress: Double? = nil,
        activities: [ActivityInfo] = [], serviceAvailable: Bool = true
    ) {
        self.active = active
        self.visible = visible
        self.count = count
        self.progress = progress
        self.activities = activities
        self.serviceAvailable = serviceAvailable
    }

    /// The state shown while the service is gone.
    public static let unavailable = IndicatorSnapshot(serviceAvailable: false)

    /// Applies property values (from `GetAll` or `PropertiesChanged`, variants unwrapped or
    /// not); values of an unexpected type are ignored, never trusted.
    public mutating func apply(_ properties: [String: Value]) {
        for (name, wrapped) in properties {
            let value = wrapped.unwrapped ?? wrapped
            switch name {
            case "Active": if let flag = value.bool { active = flag }
            case "Visible": if let flag = value.bool { visible = flag }
            case "Count": if let number = value.uint32 { count = number }
            case "Progress":
                if let fraction = value.double { progress = fraction >= 0 && fraction.isFinite ? min(1, fraction) : nil }
            case "Activities":
                if let elements = value.elements { activities = elements.compactMap(ActivityInfo.init) }
            default: break
            }
        }
    }
}
