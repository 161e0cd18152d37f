import DBus
import NetActivityContract

/// The client's copy of the service's state, kept current one change at a time.
///
/// Pure: it is fed the decoded bodies of `GetAll`, `GetManagedObjects`, `InterfacesAdded`,
/// `InterfacesRemoved` and `PropertiesChanged`, and never asks the bus for anything, so a change
/// to one activity costs one lookup however many are live (contract version 2). A service that
/// predates activity objects (`GetManagedObjects` unknown) is followed through its `Activities`
/// property instead, which such a service sends with every change.
///
/// Signals that arrive before the reply they overlap with are already part of that reply (one
/// sender's messages arrive in order), so the main object's changes count only once `GetAll` is
/// in, and the activities' once `GetManagedObjects` is.
///
/// Every snapshot is consistent in itself: `count` is the shared counter plus the listed
/// activities, `active` is `count > 0`, and `progress` and `rate` are the contract's aggregates
/// over the listed activities. The service throttles its main object's `Count`, `Progress` and
/// `Rate` apart from the activity objects, so taking them as sent would mix two moments. The
/// shared counter is `Count` minus the listed activities when a `Count` arrives: objects come
/// and go in `InterfacesAdded`/`InterfacesRemoved`, which are never throttled and are sent
/// before any `Count` that counts them, so at that moment the list is the one `Count` counted.
struct IndicatorMirror {
    /// Where the activity list comes from.
    enum Source: Equatable {
        /// The activity objects (contract version 2).
        case objects
        /// The main object's `Activities` property (a version 1 service).
        case activitiesProperty
    }

    /// The service's state as sent: `visible` and the activities; the rest is derived.
    private var state = IndicatorSnapshot()
    /// The shared counter (`Push`/`Pop`), as of the last `Count`.
    private var sharedCount: UInt32 = 0
    private(set) var source: Source = .objects

    /// The state as far as it is known; complete once `isComplete`. O(n) in the activities.
    var snapshot: IndicatorSnapshot {
        var snapshot = state
        let (count, overflow) = sharedCount.addingReportingOverflow(UInt32(clamping: state.activities.count))
        snapshot.count = overflow ? .max : count
        snapshot.active = snapshot.count > 0
        snapshot.progress = IndicatorSnapshot.progress(of: state.activities)
        snapshot.rate = IndicatorSnapshot.rate(of: state.activities)
        return snapshot
    }

    /// How many activities are listed.
    var activityCount: Int { state.activities.count }
    private var objectsLoaded = false
    private var mainLoaded = false

    /// Whether both halves of the state (main object and activities) have arrived.
    var isComplete: Bool { objectsLoaded && mainLoaded }

    // MARK: - Replies

    /// Loads the body of `GetManagedObjects` (`a{oa{sa{sv}}}`), replacing every activity.
    mutating func loadObjects(_ managed: Value) {
        loadObjects { entry in for element in managed.elements ?? [] { entry(element) } }
    }

    /// Loads the entries of `GetManagedObjects` (`{oa{sa{sv}}}`), which `entries` hands over one
    /// at a time, replacing every activity: over 65,536 objects the whole reply as values would
    /// take several times the memory of the activities themselves. When `entries` throws, the
    /// activities it handed over before are kept.
    mutating func loadObjects<Failure: Error>(
        _ entries: ((Value) -> Void) throws(Failure) -> Void
    ) throws(Failure) {
        source = .objects
        var activities: [ActivityInfo] = []
        defer {
            activities.sort { $0.id < $1.id }
            state.activities = activities
            objectsLoaded = true
        }
        try entries { entry in
            guard case .dictEntry(let key, let interfaces) = entry, let path = key.string,
                let id = NetActivityBus.activityID(at: path),
                let properties = interfaces.stringKeyedEntries?[NetActivityBus.activityInterface.rawValue]?
                    .stringKeyedEntries
            else { return }
            activities.append(Self.activity(id: id, properties))
        }
    }

    /// The service has no activity objects: follow its `Activities` property instead.
    mutating func useActivitiesProperty() {
        source = .activitiesProperty
        objectsLoaded = true
    }

    /// Loads the body of `GetAll` on the main interface.
    mutating func loadMain(_ properties: [String: Value]) {
        applyMain(properties)
        mainLoaded = true
    }

    // MARK: - Signals

    /// Applies `InterfacesAdded` (`oa{sa{sv}}`). Returns whether the snapshot changed.
    mutating func interfacesAdded(path: String, interfaces: [String: Value]) -> Bool {
        guard objectsLoaded, source == .objects, let id = NetActivityBus.activityID(at: path),
            let properties = interfaces[NetActivityBus.activityInterface.rawValue]?.stringKeyedEntries
        else { return false }
        let activity = Self.activity(id: id, properties)
        switch index(of: id) {
        case .found(let index):
            guard state.activities[index] != activity else { return false }
            state.activities[index] = activity
        case .insertAt(let index):
            state.activities.insert(activity, at: index)
        }
        return true
    }

    /// Applies `InterfacesRemoved` (`oas`). Returns whether the snapshot changed.
    mutating func interfacesRemoved(path: String, interfaces: [String]) -> Bool {
        guard objectsLoaded, source == .objects, let id = NetActivityBus.activityID(at: path),
            interfaces.contains(NetActivityBus.activityInterface.rawValue),
            case .found(let index) = index(of: id)
        else { return false }
        state.activities.remove(at: index)
        return true
    }

    /// Applies `PropertiesChanged` (`sa{sv}as`) sent from `path`. Returns whether the snapshot
    /// changed. Invalidated names carry no value and are ignored: `Activities` is followed
    /// through the objects.
    mutating func propertiesChanged(path: String, interface: String, changed: [String: Value]) -> Bool {
        if path == NetActivityBus.path.rawValue, interface == NetActivityBus.interface.rawValue {
            guard mainLoaded else { return false }
            let before = (state, sharedCount)
            applyMain(changed)
            return state != before.0 || sharedCount != before.1
        }
        guard interface == NetActivityBus.activityInterface.rawValue, objectsLoaded, source == .objects,
            let id = NetActivityBus.activityID(at: path), case .found(let index) = index(of: id)
        else { return false }
        let before = state.activities[index]
        state.activities[index].apply(changed)
        return state.activities[index] != before
    }

    // MARK: - Decoding

    private mutating func applyMain(_ properties: [String: Value]) {
        typealias Main = NetActivityInterface
        var properties = properties
        if source == .objects { properties[Main.activities.name.rawValue] = nil }
        // The list first, then the counter measured against it.
        let count = properties.removeValue(forKey: Main.count.name.rawValue).flatMap(Main.count.decode)
        for name in [Main.active.name, Main.progress.name, Main.rate.name] { properties[name.rawValue] = nil }
        state.apply(properties)
        if let count {
            let listed = UInt32(clamping: state.activities.count)
            sharedCount = count > listed ? count - listed : 0
        }
    }

    /// An activity object's properties as an `ActivityInfo`; missing or mistyped values read as
    /// empty, never trusted.
    static func activity(id: UInt32, _ properties: [String: Value]) -> ActivityInfo {
        var activity = ActivityInfo(id: id, owner: "", label: "", completed: 0, total: 0, started: 0)
        activity.apply(properties)
        return activity
    }

    private enum Position { case found(Int), insertAt(Int) }

    /// Binary search by id; ids usually grow, so a new one is usually appended.
    private func index(of id: UInt32) -> Position {
        let activities = state.activities
        if let last = activities.last, last.id < id { return .insertAt(activities.count) }
        var low = 0
        var high = activities.count
        while low < high {
            let middle = (low + high) / 2
            if activities[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < activities.count && activities[low].id == id ? .found(low) : .insertAt(low)
    }
}
