import DBus
import NetActivityContract

/// The service's state as the client's observers see it: a mirror read afresh with
/// `GetManagedObjects` and `GetAll`, kept current by the service's signals, and handed to every
/// observer when it changes.
///
/// Confined to the client's loop thread. Reads through the `ServiceLink`; an app that only
/// reports never has a follower at work.
final class StateFollower {
    /// Each state hands every activity to the observers (a copy, which they compare, merge and
    /// drop): with thousands of activities under a busy service's updates, a state at most this
    /// often per live activity keeps following them to a few percent of a core, where a state
    /// per signal took most of one. With a few activities states still go out at once.
    static let publishSpacingPerActivity: Duration = .microseconds(2)

    private let link: ServiceLink
    private let loop: EventLoop
    private let clock = ContinuousClock()

    private var observers: [Int: StateObserver] = [:]
    /// Observers held back while the client's own calls are in flight (`hold`).
    private var held: [Int: StateObserver] = [:]
    private var mirror: IndicatorMirror?
    private var published: IndicatorSnapshot?
    /// Bumped by every refresh, so replies to an abandoned one are ignored.
    private var refreshGeneration = 0
    private var publishPending = false
    /// When `publishSoon` last handed a state out.
    private var lastPublished: ContinuousClock.Instant?

    init(link: ServiceLink, loop: EventLoop) {
        self.link = link
        self.loop = loop
    }

    /// Whether anyone is following (observers held back do not count yet).
    var hasObservers: Bool { !observers.isEmpty }

    // MARK: - Observers

    /// Starts `observer`: it gets the state at once (the one known, or `.unavailable` without a
    /// bus), then every change.
    func add(_ id: Int, _ observer: StateObserver) {
        observers[id] = observer
        if publishPending, let mirror, mirror.isComplete {
            // A state waiting out its spacing is newer than the last published: a new observer
            // (`snapshot()` after `flush()`) gets what the client already knows.
            observer.deliver(mirror.snapshot)
        } else if let published {
            observer.deliver(published)
        } else if !link.connect() {
            observer.deliver(.unavailable)
        }
        followChanges()
        if mirror == nil { refreshSnapshot() }
    }

    /// Keeps `observer` back until `admitHeld()`: its first state must include the client's
    /// calls still in flight.
    func hold(_ id: Int, _ observer: StateObserver) {
        held[id] = observer
    }

    /// Starts the observers held back, in the order of their ids.
    func admitHeld() {
        let waiting = held
        held.removeAll()
        for (id, observer) in waiting.sorted(by: { $0.key < $1.key }) { add(id, observer) }
    }

    func remove(_ id: Int) {
        held[id] = nil
        observers[id] = nil
        // Nobody keeps the snapshot current once the last observer is gone: the next one asks afresh.
        if observers.isEmpty {
            mirror = nil
            published = nil
            refreshGeneration += 1
        }
    }

    /// Tells every observer, held back or not, that no state follows.
    func finishAll() {
        let finished = Array(observers.values) + Array(held.values)
        observers.removeAll()
        held.removeAll()
        for observer in finished { observer.finish() }
    }

    // MARK: - What the link says

    /// A new connection after none: the signals are subscribed to again and the state read afresh.
    func reconnected() {
        guard !observers.isEmpty else { return }
        followChanges()
        refreshSnapshot()
    }

    func serviceAppeared() {
        if !observers.isEmpty { refreshSnapshot() }
    }

    func serviceLeft() {
        if !observers.isEmpty {
            refreshGeneration += 1
            mirror = IndicatorMirror()  // filled again when the service is back
        }
        publish(.unavailable)
    }

    /// Applies a signal of the service instance in use to the mirror.
    func received(_ message: Message, path: String) {
        guard mirror != nil else { return }
        var changed = false
        if let (interface, values, _) = PropertiesInterface.propertiesChanged.decode(message) {
            guard let values = values.value.stringKeyedEntries else { return }
            changed = mirror?.propertiesChanged(path: path, interface: interface, changed: values) ?? false
        } else if path == NetActivityBus.path.rawValue,
            let (object, added) = ObjectManagerInterface.interfacesAdded.decode(message)
        {
            guard let interfaces = added.byInterface else { return }
            changed = mirror?.interfacesAdded(path: object.rawValue, interfaces: interfaces) ?? false
        } else if path == NetActivityBus.path.rawValue,
            let (object, removed) = ObjectManagerInterface.interfacesRemoved.decode(message)
        {
            changed = mirror?.interfacesRemoved(path: object.rawValue, interfaces: removed) ?? false
        }
        if changed { publishSoon() }
    }

    // MARK: - Reading the state

    /// Subscribes to the service's changes when someone follows them.
    private func followChanges() {
        guard !observers.isEmpty else { return }
        link.followChanges()
    }

    /// Rebuilds the state from `GetManagedObjects` and `GetAll`, sent in that order so the
    /// replies come in that order too. A service without activity objects is followed through
    /// its `Activities` property.
    private func refreshSnapshot() {
        guard !observers.isEmpty else { return }
        refreshGeneration += 1
        let generation = refreshGeneration
        mirror = IndicatorMirror()
        guard link.connect() else {
            mirror = nil
            publish(.unavailable)
            return
        }
        link.call(.getManagedObjects, interface: .objectManager, isReport: false) { [self] result in
            guard generation == refreshGeneration, mirror != nil else { return }
            switch result {
            case .success(let reply):
                // Decoded entry by entry; a malformed reply keeps what came before the fault.
                try? mirror?.loadObjects { (entry) throws(BusError) in try reply.forEachElementOfFirstArgument(entry) }
            case .failure(let error) where ServiceLink.meansUnavailable(error):
                mirror = nil
                publish(.unavailable)
            case .failure:
                mirror?.useActivitiesProperty()
            }
            publishMirror()
        }
        link.call(.getAll, [.string(NetActivityBus.interface.rawValue)], interface: .properties, isReport: false) {
            [self] result in
            guard generation == refreshGeneration, mirror != nil else { return }
            switch result {
            case .success(let reply):
                mirror?.loadMain((try? reply.arguments())?.first?.stringKeyedEntries ?? [:])
                publishMirror()
            case .failure:
                mirror = nil
                publish(.unavailable)
            }
        }
    }

    // MARK: - Publishing

    private func publish(_ new: IndicatorSnapshot) {
        guard new != published else { return }
        published = new
        for observer in observers.values { observer.deliver(new) }
    }

    private func publishMirror() {
        if let mirror, mirror.isComplete { publish(mirror.snapshot) }
    }

    /// Publishes once the messages that arrived together have all been applied: the service
    /// announces an activity's progress and the overall `Progress` in separate signals, and a
    /// watcher should not see one without the other when both were already here.
    private func publishSoon() {
        guard !publishPending else { return }
        publishPending = true
        let spacing = Self.publishSpacingPerActivity * (mirror?.activityCount ?? 0)
        let wait = lastPublished.map { max(.zero, spacing - (clock.now - $0)) } ?? .zero
        loop.schedule(after: wait) { [self] in
            publishPending = false
            lastPublished = clock.now
            publishMirror()
        }
    }
}

extension MemberName {
    fileprivate static let getAll: MemberName = "GetAll"
    fileprivate static let getManagedObjects: MemberName = "GetManagedObjects"
}
