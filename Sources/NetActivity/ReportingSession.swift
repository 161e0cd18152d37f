import DBus
import NetActivityContract

/// What one app has told the indicator, and the work of keeping the service in step with it.
///
/// Confined to the library's loop thread. The app's view (its live activities with label and
/// last progress) is the truth; the service's view is brought in line by `reconcile()`, which
/// runs after every change, reply and service restart. Each reply names the service instance
/// (unique name) that answered, so after a restart the session knows exactly what the new
/// instance holds and re-asserts the rest.
final class ReportingSession {
    private struct Tracked {
        var label: String
        var hints: ActivityHints
        var progress = Activity.Progress.bytes(0, 0)
        /// The service's id, and the instance that holds it.
        var remote: (id: UInt32, owner: String)?
        var beginInFlight = false
        /// Progress the service has not been sent yet.
        var progressDirty = false
        /// An `UpdateActivity` is on its way: the next waits for its reply.
        var updateInFlight = false
        var lastUpdate: ContinuousClock.Instant?
        /// Set while an update waits out `minimumUpdateSpacing`.
        var updateTimer: EventLoop.TimerID?
        var ended = false
        /// The service refused it for good (e.g. LimitsExceeded); it stays local only.
        var refused = false
    }

    /// The least time between two `UpdateActivity` calls for one activity. The service merges
    /// progress over its own 50 ms throttle window anyway; more calls would only cost.
    static let minimumUpdateSpacing: Duration = .milliseconds(25)
    /// The first wait before trying the bus again, doubled after each failure up to the maximum.
    static let firstRetryDelay: Duration = .milliseconds(250)
    static let maximumRetryDelay: Duration = .seconds(30)

    private let bus: BusAddress
    private let loop: EventLoop
    private let problems: @Sendable (String) -> Void
    private let clock = ContinuousClock()

    private var connection: Connection?
    /// The service instance (unique name) that holds this app's state; every activity is
    /// looked at again when it changes.
    private var serviceOwner: String? {
        didSet { if serviceOwner != oldValue { needsAttention.formUnion(activities.keys) } }
    }
    /// True after a call found no service: nothing is re-sent until the service appears.
    private var waitingForService = false
    /// The service instance that answered `UnknownMethod` to a version 3 method: it predates
    /// interface version 3, so activities begin without hints and fractions go as bytes.
    private var versionTwoService: String?
    /// Once per client: the problem of an old service is no news after the first time.
    private var reportedVersionTwo = false
    /// A fraction sent to a version 2 service is this many bytes' worth.
    static let fractionScale: UInt64 = 10_000
    /// One line to `problems` per outage: reset when the service is back.
    private var reportedUnavailable = false
    private var closed = false
    private var retryTimer: EventLoop.TimerID?
    private var retryDelay = ReportingSession.firstRetryDelay

    private var activities: [Int: Tracked] = [:]
    /// Activities whose state changed since `reconcile()` last looked at them, so a change to
    /// one of many live activities costs one, not all.
    private var needsAttention: Set<Int> = []
    private var callsInFlight = 0
    /// Updates waiting out their spacing: `flush()` waits for them too.
    private var spacedUpdates = 0
    private var flushWaiters: [@Sendable () -> Void] = []

    private var observers: [Int: StateObserver] = [:]
    /// Observers added while calls were in flight: they start once those are answered.
    private var waitingObservers: [Int: StateObserver] = [:]
    private var mirror: IndicatorMirror?
    private var published: IndicatorSnapshot?
    /// Bumped by every refresh, so replies to an abandoned one are ignored.
    private var refreshGeneration = 0
    private var watchingSignals = false
    private var publishPending = false
    /// When `publishSoon` last handed a state out.
    private var lastPublished: ContinuousClock.Instant?
    /// Each state hands every activity to the observers (a copy, which they compare, merge and
    /// drop): with thousands of activities under a busy service's updates, a state at most this
    /// often per live activity keeps following them to a few percent of a core, where a state
    /// per signal took most of one. With a few activities states still go out at once.
    static let publishSpacingPerActivity: Duration = .microseconds(2)

    init(bus: BusAddress, loop: EventLoop, problems: @escaping @Sendable (String) -> Void) {
        self.bus = bus
        self.loop = loop
        self.problems = problems
    }

    // MARK: - What the app says

    func begin(_ localID: Int, label: String, hints: ActivityHints = ActivityHints()) {
        activities[localID] = Tracked(label: label, hints: hints)
        needsAttention.insert(localID)
        reconcile()
    }

    func update(_ localID: Int, _ progress: Activity.Progress) {
        guard var activity = activities[localID], !activity.ended else { return }
        guard activity.progress != progress else { return }
        activity.progress = progress
        activity.progressDirty = true
        activities[localID] = activity
        needsAttention.insert(localID)
        reconcile()
    }

    func end(_ localID: Int) {
        activities[localID]?.ended = true
        needsAttention.insert(localID)
        reconcile()
    }

    /// Calls `done` once every call sent so far has been answered and nothing is left to send.
    func flush(_ done: @escaping @Sendable () -> Void) {
        flushWaiters.append(done)
        resumeFlushWaitersIfIdle()
    }

    func close() {
        closed = true
        let finished = Array(observers.values) + Array(waitingObservers.values)
        observers.removeAll()
        waitingObservers.removeAll()
        for observer in finished { observer.finish() }
        if let retryTimer { loop.cancel(retryTimer) }
        if let connection { loop.detach(connection) }
        connection = nil
        resumeFlushWaiters()
    }

    // MARK: - Observing

    func addObserver(_ id: Int, _ observer: StateObserver) {
        guard !closed else {
            observer.finish()
            return
        }
        // A client reads its own writes: a new observer's first state waits until every call
        // made so far is answered (an EndActivity may still wait for its BeginActivity's reply,
        // and a GetManagedObjects sent before it would list the ended activity).
        if !isIdle, connection != nil, !waitingForService {
            waitingObservers[id] = observer
            return
        }
        observers[id] = observer
        if publishPending, let mirror, mirror.isComplete {
            // A state waiting out its spacing is newer than the last published: a new observer
            // (`snapshot()` after `flush()`) gets what the client already knows.
            observer.deliver(mirror.snapshot)
        } else if let published {
            observer.deliver(published)
        } else if connect() == nil {
            observer.deliver(.unavailable)
        }
        watchSignals()
        if mirror == nil { refreshSnapshot() }
    }

    func removeObserver(_ id: Int) {
        waitingObservers[id] = nil
        observers[id] = nil
        // Nobody keeps the snapshot current once the last observer is gone: the next one asks afresh.
        if observers.isEmpty {
            mirror = nil
            published = nil
            refreshGeneration += 1
        }
    }

    /// Subscribes to the service's changes, once per connection, when the first observer
    /// arrives: an app that only reports never wakes up for them. Property changes of the main
    /// object and of every activity object (`path_namespace`), and the ObjectManager's
    /// InterfacesAdded/InterfacesRemoved.
    private func watchSignals() {
        guard !watchingSignals, !observers.isEmpty, let connection = connect() else { return }
        do {
            let sender = "type='signal',sender='\(NetActivityBus.name)'"
            try connection.addMatch(
                sender + ",interface='\(InterfaceName.properties)',member='PropertiesChanged',"
                    + "path_namespace='\(NetActivityBus.path)'")
            try connection.addMatch(
                sender + ",interface='\(InterfaceName.objectManager)',path='\(NetActivityBus.path)'")
            watchingSignals = true
        } catch {
            problems("cannot watch the indicator: \(error.message)")
        }
    }

    private func publish(_ new: IndicatorSnapshot) {
        guard new != published else { return }
        published = new
        for observer in observers.values { observer.deliver(new) }
    }

    private func publishMirror() {
        if let mirror, mirror.isComplete { publish(mirror.snapshot) }
    }

    /// Rebuilds the state from `GetManagedObjects` and `GetAll`, sent in that order so the
    /// replies come in that order too. A service without activity objects is followed through
    /// its `Activities` property.
    private func refreshSnapshot() {
        guard !observers.isEmpty else { return }
        refreshGeneration += 1
        let generation = refreshGeneration
        mirror = IndicatorMirror()
        guard connect() != nil else {
            mirror = nil
            publish(.unavailable)
            return
        }
        call(.getManagedObjects, interface: .objectManager, isReport: false) { [self] result in
            guard generation == refreshGeneration, mirror != nil else { return }
            switch result {
            case .success(let reply):
                // Decoded entry by entry; a malformed reply keeps what came before the fault.
                try? mirror?.loadObjects { (entry) throws(BusError) in try reply.forEachElementOfFirstArgument(entry) }
            case .failure(let error) where Self.meansUnavailable(error):
                mirror = nil
                publish(.unavailable)
            case .failure:
                mirror?.useActivitiesProperty()
            }
            publishMirror()
        }
        call(.getAll, [.string(NetActivityBus.interface.rawValue)], interface: .properties, isReport: false) {
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

    // MARK: - Keeping the service in step

    /// Sends whatever brings the service in line with the app's view.
    private func reconcile() {
        guard !closed, !waitingForService, connect() != nil else {
            resumeFlushWaitersIfIdle()
            return
        }
        let due = needsAttention
        needsAttention.removeAll()
        for localID in due {
            if let activity = activities[localID] { reconcileActivity(localID, activity) }
        }
        resumeFlushWaitersIfIdle()
    }

    private func reconcileActivity(_ localID: Int, _ activity: Tracked) {
        var activity = activity
        guard !activity.beginInFlight else { return }
        if let remote = activity.remote, remote.owner != serviceOwner {
            activity.remote = nil  // that instance is gone, and its activities with it
            activity.updateInFlight = false
        }
        if activity.ended || activity.refused {
            if activity.ended, let remote = activity.remote {
                // A report made before the end reaches the service before it: one connection's
                // calls are answered in order, so the update needs no waiting for.
                if activity.progressDirty { sendProgress(of: activity, to: remote.id) { _ in } }
                let method = NetActivityInterface.endActivity
                call(method.name, method.arguments(remote.id)) { _ in }
            }
            if let timer = activity.updateTimer {
                loop.cancel(timer)
                spacedUpdates -= 1
            }
            activities[localID] = nil
            return
        }
        if let remote = activity.remote {
            if activity.progressDirty, !activity.updateInFlight, activity.updateTimer == nil {
                let now = clock.now
                if let last = activity.lastUpdate, now - last < Self.minimumUpdateSpacing {
                    spacedUpdates += 1
                    activity.updateTimer = loop.schedule(after: Self.minimumUpdateSpacing - (now - last)) {
                        [self] in
                        spacedUpdates -= 1
                        activities[localID]?.updateTimer = nil
                        needsAttention.insert(localID)
                        reconcile()
                    }
                } else {
                    activity.progressDirty = false
                    activity.updateInFlight = true
                    activity.lastUpdate = now
                    sendProgress(of: activity, to: remote.id) { [self] result in
                        guard activities[localID] != nil else { return }
                        activities[localID]?.updateInFlight = false
                        if case .failure(let error) = result, error.name == .unknownMethod, noteVersionTwo(result) {
                            activities[localID]?.progressDirty = true  // again, as bytes
                        }
                        needsAttention.insert(localID)
                        reconcile()
                    }
                }
            }
        } else {
            activity.beginInFlight = true
            let withHints = !activity.hints.isEmpty && !speaksVersionTwo
            if withHints {
                let method = NetActivityInterface.beginActivityWithHints
                call(method.name, method.arguments(activity.label, activity.hints.dictionary)) {
                    [self] result in beginAnswered(localID, result, withHints: true)
                }
            } else {
                let method = NetActivityInterface.beginActivity
                call(method.name, method.arguments(activity.label)) { [self] result in
                    beginAnswered(localID, result, withHints: false)
                }
            }
            activity.progressDirty = activity.progress != .bytes(0, 0)
        }
        activities[localID] = activity
    }

    /// `UpdateActivityFraction` for a fraction (as bytes to a version 2 service), else
    /// `UpdateActivity`.
    private func sendProgress(of activity: Tracked, to id: UInt32, _ handler: @escaping (ReplyResult) -> Void) {
        switch activity.progress {
        case .bytes(let completed, let total):
            let method = NetActivityInterface.updateActivity
            call(method.name, method.arguments(id, completed, total), handler)
        case .fraction(let fraction) where speaksVersionTwo:
            let completed = UInt64((fraction * Double(Self.fractionScale)).rounded())
            let method = NetActivityInterface.updateActivity
            call(method.name, method.arguments(id, completed, Self.fractionScale), handler)
        case .fraction(let fraction):
            let method = NetActivityInterface.updateActivityFraction
            call(method.name, method.arguments(id, fraction), handler)
        }
    }

    /// Whether the service instance in use predates interface version 3.
    private var speaksVersionTwo: Bool { versionTwoService != nil && versionTwoService == serviceOwner }

    /// A version 3 call got `UnknownMethod`: its sender predates version 3. Says so once;
    /// returns whether the call is worth making again the version 2 way.
    private func noteVersionTwo(_ result: ReplyResult) -> Bool {
        guard case .failure(let error) = result, error.name == .unknownMethod, let owner = serviceOwner else {
            return false
        }
        versionTwoService = owner
        if !reportedVersionTwo {
            reportedVersionTwo = true
            problems("the network activity service predates interface version 3 (\(error.message)); "
                + "activities are shown without their hints, and fractions as byte counts")
        }
        return true
    }

    private func beginAnswered(_ localID: Int, _ result: ReplyResult, withHints: Bool) {
        guard var activity = activities[localID] else { return }
        activity.beginInFlight = false
        if withHints, noteVersionTwo(result) {
            // Begun again, without hints.
            activities[localID] = activity
            needsAttention.insert(localID)
            reconcile()
            return
        }
        switch result {
        case .success(let reply):
            if let id = (try? reply.arguments()).flatMap(NetActivityInterface.beginActivity.reply),
                let owner = reply.sender?.rawValue
            {
                if serviceOwner == nil { serviceOwner = owner }
                activity.remote = (id, owner)
            }
        case .failure(let error) where Self.meansUnavailable(error):
            break
        case .failure(let error):
            problems("cannot track '\(activity.label)': \(error.message)")
            activity.refused = true
        }
        activities[localID] = activity
        needsAttention.insert(localID)
        reconcile()
    }

    // MARK: - Calls

    private func call(
        _ member: MemberName, _ arguments: [Value] = [], interface: InterfaceName = NetActivityBus.interface,
        isReport: Bool = true, _ handler: @escaping (ReplyResult) -> Void
    ) {
        guard let connection = connect() else {
            handler(.failure(BusError(.disconnected, "no bus connection")))
            return
        }
        let message: Message
        do {
            message = try Message.methodCall(
                destination: NetActivityBus.name, path: NetActivityBus.path, interface: interface,
                member: member, arguments: arguments)
        } catch {
            problems("cannot build \(member): \(error.message)")
            return
        }
        if isReport { callsInFlight += 1 }
        connection.send(message) { [self] result in
            if isReport { callsInFlight -= 1 }
            if isReport, case .failure(let error) = result, Self.meansUnavailable(error) {
                serviceUnavailable(error)
            }
            handler(result)
            resumeFlushWaitersIfIdle()
        }
    }

    /// Errors that say "no service here right now" rather than "the service said no".
    private static func meansUnavailable(_ error: BusError) -> Bool {
        [.serviceUnknown, .nameHasNoOwner, .noReply, .disconnected, .noServer, .timeout, .noMemory]
            .contains(error.name) || error.name.rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }

    private func serviceUnavailable(_ error: BusError) {
        waitingForService = true
        reportOutage("the network activity service is unavailable (\(error.message)); "
            + "activity is kept and reported when it returns")
    }

    private func reportOutage(_ message: String) {
        guard !reportedUnavailable else { return }
        reportedUnavailable = true
        problems(message)
    }

    // MARK: - The bus connection and the service's comings and goings

    /// Whether anything needs the bus: live activities or someone watching. Retries stop
    /// without it, so an idle app never wakes up.
    private var needsBus: Bool { !activities.isEmpty || !observers.isEmpty }

    private func connect() -> Connection? {
        if let connection { return connection }
        // While a retry is scheduled, calls wait for it instead of hammering a missing bus.
        guard !closed, retryTimer == nil else { return nil }
        // The connection attached to the loop so far, detached again if a later step fails.
        var attached: Connection?
        do {
            let connection = try Connection(bus)
            connection.addFilter(for: .signal) { [unowned self] message in handle(message) }
            loop.attach(connection)
            attached = connection
            try connection.addMatch(
                "type='signal',sender='\(BusName.bus)',interface='\(InterfaceName.bus)',"
                    + "member='NameOwnerChanged',arg0='\(NetActivityBus.name)'")
            self.connection = connection
            retryDelay = Self.firstRetryDelay
            serviceOwner = try connection.owner(of: NetActivityBus.name)?.rawValue
            return connection
        } catch {
            if let attached {
                loop.detach(attached)
                self.connection = nil
            }
            reportOutage("cannot connect to \(bus): \(error.message); retrying")
            waitingForService = true
            scheduleRetry()
            return nil
        }
    }

    /// Tries the bus again after the current backoff, doubling it for next time.
    private func scheduleRetry() {
        guard retryTimer == nil, !closed, needsBus else { return }
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, Self.maximumRetryDelay)
        retryTimer = loop.schedule(after: delay) { [self] in
            retryTimer = nil
            guard connection == nil, needsBus, connect() != nil else { return }
            reconnected()
        }
    }

    /// A new connection after none: everything the app holds is asserted again (an activatable
    /// service is started by the first call), and watchers get a fresh state.
    private func reconnected() {
        waitingForService = false
        if serviceOwner != nil { reportedUnavailable = false }
        needsAttention.formUnion(activities.keys)
        if !observers.isEmpty {
            watchSignals()
            refreshSnapshot()
        }
        reconcile()
    }

    private func handle(_ message: Message) -> Bool {
        if message.isSignal(.local, "Disconnected") {
            connectionLost()
            return true
        }
        if message.isSignal(.bus, "NameOwnerChanged"), message.sender == .bus {
            let arguments = (try? message.arguments()) ?? []
            guard arguments.count == 3, arguments[0].string == NetActivityBus.name.rawValue,
                let newOwner = arguments[2].string
            else { return false }
            if newOwner.isEmpty { serviceLeft() } else { serviceAppeared(newOwner) }
            return false
        }
        guard let sender = message.sender?.rawValue, sender == serviceOwner, let path = message.path?.rawValue,
            mirror != nil
        else { return false }
        let arguments = (try? message.arguments()) ?? []
        var changed = false
        if message.isSignal(.properties, "PropertiesChanged") {
            guard arguments.count == 3, let interface = arguments[0].string,
                let values = arguments[1].stringKeyedEntries
            else { return false }
            changed = mirror?.propertiesChanged(path: path, interface: interface, changed: values) ?? false
        } else if message.isSignal(.objectManager, "InterfacesAdded"), path == NetActivityBus.path.rawValue {
            guard arguments.count == 2, let object = arguments[0].string,
                let interfaces = arguments[1].stringKeyedEntries
            else { return false }
            changed = mirror?.interfacesAdded(path: object, interfaces: interfaces) ?? false
        } else if message.isSignal(.objectManager, "InterfacesRemoved"), path == NetActivityBus.path.rawValue {
            guard arguments.count == 2, let object = arguments[0].string, let names = arguments[1].elements
            else { return false }
            changed = mirror?.interfacesRemoved(path: object, interfaces: names.compactMap(\.string)) ?? false
        }
        if changed { publishSoon() }
        return false
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

    private func serviceAppeared(_ owner: String) {
        serviceOwner = owner
        waitingForService = false
        reportedUnavailable = false
        if !observers.isEmpty { refreshSnapshot() }
        reconcile()
    }

    private func serviceLeft() {
        serviceOwner = nil
        if !observers.isEmpty {
            refreshGeneration += 1
            mirror = IndicatorMirror()  // filled again when the service is back
        }
        publish(.unavailable)
    }

    private func connectionLost() {
        guard let lost = connection else { return }
        connection = nil
        watchingSignals = false
        // A new connection may reach a new bus whose service has the same unique name and
        // counts ids from 1 again: nothing held on the old one can be trusted.
        for localID in activities.keys {
            activities[localID]?.remote = nil
            activities[localID]?.beginInFlight = false
            activities[localID]?.updateInFlight = false
        }
        serviceLeft()
        waitingForService = true
        reportOutage("lost the connection to \(bus); reconnecting")
        // Detach on the next turn: this runs inside the lost connection's own dispatch.
        loop.schedule(after: .zero) { [loop] in loop.detach(lost) }
        resumeFlushWaiters()
        scheduleRetry()
    }

    // MARK: - Flush

    private var isIdle: Bool {
        callsInFlight == 0 && spacedUpdates == 0
    }

    private func resumeFlushWaitersIfIdle() {
        if isIdle || waitingForService || connection == nil { resumeFlushWaiters() }
    }

    private func resumeFlushWaiters() {
        let waiters = flushWaiters
        flushWaiters.removeAll()
        for waiter in waiters { waiter() }
        let waiting = waitingObservers
        waitingObservers.removeAll()
        for (id, observer) in waiting.sorted(by: { $0.key < $1.key }) { addObserver(id, observer) }
    }
}

extension MemberName {
    fileprivate static let getAll: MemberName = "GetAll"
    fileprivate static let getManagedObjects: MemberName = "GetManagedObjects"
}
