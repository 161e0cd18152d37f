import DBus
import NetActivityContract

/// What one app has told the indicator, and the work of keeping the service in step with it.
///
/// Confined to the library's loop thread. The app's view (its outstanding pushes, its live
/// activities with label and last progress) is the truth; the service's view is brought in
/// line by `reconcile()`, which runs after every change, reply and service restart. Each reply
/// names the service instance (unique name) that answered, so after a restart the session
/// knows exactly what the new instance holds and re-asserts the rest.
final class ReportingSession {
    private struct Tracked {
        var label: String
        var completed: UInt64 = 0
        var total: UInt64 = 0
        /// The service's id, and the instance that holds it.
        var remote: (id: UInt32, owner: String)?
        var beginInFlight = false
        var progressDirty = false
        var ended = false
        /// The service refused it for good (e.g. LimitsExceeded); it stays local only.
        var refused = false
    }

    private let bus: BusAddress
    private let loop: EventLoop
    private let problems: @Sendable (String) -> Void

    private var connection: Connection?
    /// The service instance (unique name) that holds this app's state; every activity is
    /// looked at again when it changes.
    private var serviceOwner: String? {
        didSet { if serviceOwner != oldValue { needsAttention.formUnion(activities.keys) } }
    }
    /// True after a call found no service: nothing is re-sent until the service appears.
    private var waitingForService = false
    private var reportedUnavailable = false
    private var closed = false

    private var outstandingPushes = 0
    private var pushesHeld: [String: Int] = [:]
    private var counterCallsInFlight = 0
    private var activities: [Int: Tracked] = [:]
    /// Activities whose state changed since `reconcile()` last looked at them, so a change to
    /// one of many live activities costs one, not all.
    private var needsAttention: Set<Int> = []
    private var callsInFlight = 0
    private var flushWaiters: [@Sendable () -> Void] = []

    private var observers: [Int: AsyncStream<IndicatorSnapshot>.Continuation] = [:]
    private var snapshot: IndicatorSnapshot?
    private var snapshotRequested = false
    private var watchingProperties = false

    init(bus: BusAddress, loop: EventLoop, problems: @escaping @Sendable (String) -> Void) {
        self.bus = bus
        self.loop = loop
        self.problems = problems
    }

    // MARK: - What the app says

    func push() {
        outstandingPushes += 1
        reconcile()
    }

    func pop() {
        guard outstandingPushes > 0 else {
            // More pops than pushes: pass it through, so the shared counter behaves as the
            // service's own Pop would (NotActive is reported).
            call("Pop") { [self] result in
                if case .failure(let error) = result, !Self.meansUnavailable(error) {
                    problems("Pop failed: \(error.message)")
                }
            }
            return
        }
        outstandingPushes -= 1
        reconcile()
    }

    func begin(_ localID: Int, label: String) {
        activities[localID] = Tracked(label: label)
        needsAttention.insert(localID)
        reconcile()
    }

    func update(_ localID: Int, completed: UInt64, total: UInt64) {
        guard var activity = activities[localID], !activity.ended else { return }
        guard activity.completed != completed || activity.total != total else { return }
        activity.completed = completed
        activity.total = total
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
        for observer in observers.values { observer.finish() }
        observers.removeAll()
        if let connection { loop.detach(connection) }
        connection = nil
        resumeFlushWaiters()
    }

    // MARK: - Observing

    func addObserver(_ id: Int, _ continuation: AsyncStream<IndicatorSnapshot>.Continuation) {
        guard !closed else {
            continuation.finish()
            return
        }
        observers[id] = continuation
        watchProperties()
        if let snapshot {
            continuation.yield(snapshot)
        } else {
            refreshSnapshot()
        }
    }

    func removeObserver(_ id: Int) {
        observers[id] = nil
        // Nobody keeps the snapshot current once the last observer is gone: the next one asks afresh.
        if observers.isEmpty { snapshot = nil }
    }

    /// Subscribes to the service's property changes, once, when the first observer arrives:
    /// an app that only reports never wakes up for them.
    private func watchProperties() {
        guard !watchingProperties, let connection = connect() else { return }
        do {
            try connection.addMatch(
                "type='signal',sender='\(NetActivityBus.name)',interface='org.freedesktop.DBus.Properties',"
                    + "member='PropertiesChanged',path='\(NetActivityBus.path)'")
            watchingProperties = true
        } catch {
            problems("cannot watch the indicator: \(error.message)")
        }
    }

    private func publish(_ new: IndicatorSnapshot) {
        guard new != snapshot else { return }
        snapshot = new
        for observer in observers.values { observer.yield(new) }
    }

    private func refreshSnapshot() {
        guard !snapshotRequested, connect() != nil else {
            if connection == nil { publish(.unavailable) }
            return
        }
        snapshotRequested = true
        call("GetAll", [.string(NetActivityBus.interface.rawValue)], interface: .properties, isReport: false) {
            [self] result in
            snapshotRequested = false
            switch result {
            case .success(let reply):
                var fresh = IndicatorSnapshot()
                fresh.apply((try? reply.arguments())?.first?.stringKeyedEntries ?? [:])
                publish(fresh)
            case .failure:
                publish(.unavailable)
            }
        }
    }

    // MARK: - Keeping the service in step

    /// Sends whatever brings the service in line with the app's view. Counter changes wait
    /// until earlier counter calls are answered, so the count held by each instance is known.
    private func reconcile() {
        guard !closed, !waitingForService, connect() != nil else {
            resumeFlushWaitersIfIdle()
            return
        }
        if counterCallsInFlight == 0 {
            let held = serviceOwner.map { pushesHeld[$0, default: 0] } ?? 0
            let difference = outstandingPushes - held
            for _ in 0..<abs(difference) { sendCounterCall(difference > 0 ? "Push" : "Pop") }
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
        }
        if activity.ended || activity.refused {
            if activity.ended, let remote = activity.remote {
                call("EndActivity", [.uint32(remote.id)]) { _ in }
            }
            activities[localID] = nil
            return
        }
        if let remote = activity.remote {
            if activity.progressDirty {
                activity.progressDirty = false
                call("UpdateActivity", [.uint32(remote.id), .uint64(activity.completed), .uint64(activity.total)]) { _ in }
            }
        } else {
            activity.beginInFlight = true
            call("BeginActivity", [.string(activity.label)]) { [self] result in
                beginAnswered(localID, result)
            }
            activity.progressDirty = activity.completed != 0 || activity.total != 0
        }
        activities[localID] = activity
    }

    private func beginAnswered(_ localID: Int, _ result: ReplyResult) {
        guard var activity = activities[localID] else { return }
        activity.beginInFlight = false
        switch result {
        case .success(let reply):
            if let id = (try? reply.arguments())?.first?.uint32, let owner = reply.sender?.rawValue {
                noteServiceOwner(owner)
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

    private func sendCounterCall(_ member: MemberName) {
        counterCallsInFlight += 1
        call(member) { [self] result in
            counterCallsInFlight -= 1
            if case .success(let reply) = result, let owner = reply.sender?.rawValue {
                noteServiceOwner(owner)
                pushesHeld[owner, default: 0] += member == "Push" ? 1 : -1
            } else if case .failure(let error) = result, !Self.meansUnavailable(error) {
                // The service refused (LimitsExceeded, or NotActive after someone else popped
                // the shared counter): give up on this change instead of retrying for ever.
                problems("\(member) failed: \(error.message)")
                if member == "Push" { outstandingPushes = max(0, outstandingPushes - 1) }
                if member == "Pop", let owner = serviceOwner { pushesHeld[owner, default: 0] -= 1 }
            }
            reconcile()
        }
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
        [.serviceUnknown, .nameHasNoOwner, .noReply, .disconnected, .noServer, .timeout, .unknownObject,
         .noMemory, ErrorName(unchecked: "org.freedesktop.DBus.Error.Spawn.ChildExited"),
         ErrorName(unchecked: "org.freedesktop.DBus.Error.Spawn.Failed"),
         ErrorName(unchecked: "org.freedesktop.DBus.Error.Spawn.ExecFailed")]
            .contains(error.name) || error.name.rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }

    private func serviceUnavailable(_ error: BusError) {
        waitingForService = true
        if !reportedUnavailable {
            reportedUnavailable = true
            problems("the network activity service is unavailable (\(error.message)); "
                + "activity is kept and reported when it returns")
        }
    }

    // MARK: - The bus connection and the service's comings and goings

    private func connect() -> Connection? {
        if let connection { return connection }
        guard !closed else { return nil }
        do {
            let connection = try Connection(bus)
            connection.addFilter(for: .signal) { [unowned self] message in handle(message) }
            loop.attach(connection)
            try connection.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                    + "member='NameOwnerChanged',arg0='\(NetActivityBus.name)'")
            self.connection = connection
            serviceOwner = try connection.owner(of: NetActivityBus.name)?.rawValue
            return connection
        } catch {
            if !reportedUnavailable {
                reportedUnavailable = true
                problems("cannot connect to \(bus): \(error.message)")
            }
            waitingForService = true
            return nil
        }
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
        if message.isSignal(.properties, "PropertiesChanged"), message.path == NetActivityBus.path,
            let sender = message.sender?.rawValue, sender == serviceOwner
        {
            let arguments = (try? message.arguments()) ?? []
            guard arguments.count == 3, arguments[0].string == NetActivityBus.interface.rawValue,
                let changed = arguments[1].stringKeyedEntries, var next = snapshot
            else { return false }
            next.apply(changed)
            publish(next)
            // Activities comes by name only; until the client follows the activity objects,
            // it reads the whole state again.
            if arguments[2].elements?.contains(.string(NetActivityBus.Property.activities.rawValue)) == true {
                refreshSnapshot()
            }
        }
        return false
    }

    private func noteServiceOwner(_ owner: String) {
        if serviceOwner == nil { serviceOwner = owner }
    }

    private func serviceAppeared(_ owner: String) {
        serviceOwner = owner
        waitingForService = false
        reportedUnavailable = false
        pushesHeld = pushesHeld.filter { $0.key == owner }
        snapshot = nil
        if !observers.isEmpty { refreshSnapshot() }
        reconcile()
    }

    private func serviceLeft() {
        serviceOwner = nil
        pushesHeld.removeAll()
        publish(.unavailable)
    }

    private func connectionLost() {
        guard let lost = connection else { return }
        connection = nil
        watchingProperties = false
        serviceLeft()
        waitingForService = true
        // Detach on the next turn: this runs inside the lost connection's own dispatch.
        loop.schedule(after: .zero) { [loop] in loop.detach(lost) }
        resumeFlushWaiters()
    }

    // MARK: - Flush

    private var isIdle: Bool {
        callsInFlight == 0 && counterCallsInFlight == 0
    }

    private func resumeFlushWaitersIfIdle() {
        if isIdle || waitingForService || connection == nil { resumeFlushWaiters() }
    }

    private func resumeFlushWaiters() {
        let waiters = flushWaiters
        flushWaiters.removeAll()
        for waiter in waiters { waiter() }
    }
}
