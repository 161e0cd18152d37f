import DBus
import NetActivity

/// Plasma's job list, both ways (docs/bridges.md, "Plasma's job list"): while another process
/// (plasmashell) owns `org.kde.JobViewServer`, NetActivity's reported activities are mirrored
/// there as jobs (`JobMirror`); while nobody does, the bridge owns it and `org.kde.kuiserver`,
/// and each job a KDE program registers is an activity (`ServedJobs`).
///
/// On a connection of its own to the session bus it follows who owns `org.kde.JobViewServer`
/// and hears the bus's departures (callers leaving, the names freed). The names are held
/// allowing replacement (`YieldingName`), so a plasmashell starting later takes them; the
/// served jobs then end, and the mirror begins with the new owner.
final class PlasmaJobsSource: BridgeSource {
    private let context: BridgeContext
    private let services: FollowedServices
    /// The clients whose activities are the bridge's own, never mirrored: the traffic source's
    /// (observed, not reported) and this source's served jobs (KDE's own jobs).
    private let ownClients: [NetActivityClient]
    private let servedClient: NetActivityClient
    private var attached: AttachedConnection?
    private var connection: Connection? { attached?.connection }
    private var server: ObjectServer?
    private var names: [YieldingName] = []
    private var follower: NameOwnerFollower?
    private var served: ServedJobs?
    private var mirror: JobMirror?
    /// The system-side bridge's process, followed while the mirror runs.
    private var systemBridge: SystemBridgeProcess?
    private let systemService: Bus?

    private let problems: @Sendable (String) -> Void

    /// - Parameter problems: as `context.problems`, for the clients' threads.
    init(
        _ context: BridgeContext, report: Bus, system: Bus?, observedBy observing: NetActivityClient?,
        problems: @escaping @Sendable (String) -> Void
    ) {
        self.context = context
        self.problems = problems
        services = FollowedServices(session: report, system: system)
        systemService = system
        servedClient = NetActivityClient(bus: report, sharing: context.loop, problems: problems)
        ownClients = [servedClient] + (observing.map { [$0] } ?? [])
    }

    func start() throws(BusError) {
        let connection = try Connection(context.sessionBus)
        let server = ObjectServer(connection: connection)
        let served = ServedJobs(server: server, client: servedClient, processes: context.processes)
        server.export(makeServerInterfaces(served), at: JobViewInterfaces.serverPath)
        let names = [JobViewInterfaces.serverName, JobViewInterfaces.kuiserverName].map {
            YieldingName($0, connection: connection, problems: context.problems)
        }
        var follower: NameOwnerFollower?
        // Closed in stop(): the filter holds the names and the jobs, which hold the connection.
        let attached = AttachedConnection(connection, on: context.loop) { message in
            if let change = NameOwnerChange(message), change.newOwner == nil {
                if change.name.isUnique {
                    served.callerLeft(change.name)
                } else if let name = names.first(where: { $0.name == change.name }) {
                    name.nameFreed()
                }
                follower?.handle(message)
                return true
            }
            if follower?.handle(message) == true { return true }
            return names.contains { $0.handle(message) }
        }
        do {
            try connection.addMatch(NameOwnerChange.departuresMatchRule)
            follower = try NameOwnerFollower(JobViewInterfaces.serverName, on: connection) { [weak self] owner in
                self?.ownerChanged(owner)
            }
            for name in names { try name.start() }
        } catch {
            attached.close()
            throw error
        }
        self.attached = attached
        self.server = server
        self.names = names
        self.follower = follower
        self.served = served
    }

    func stop() {
        stopMirror(terminating: true)
        served?.removeAll()
        for name in names { name.stop() }
        // The terminations owed to the mirrored views go out before the connection closes.
        attached?.close(flushing: true)
        attached = nil
        names = []
        follower = nil
        served = nil
        server = nil
    }

    // MARK: - Who shows jobs

    /// `org.kde.JobViewServer` changed hands: serve while this source holds it, mirror while
    /// another does.
    private func ownerChanged(_ owner: BusName?) {
        guard let connection else { return }
        if let owner, owner != connection.uniqueName {
            served?.removeAll()
            guard mirror?.owner != owner else { return }
            stopMirror(terminating: false)
            let systemBridge = systemService.map {
                SystemBridgeProcess(bus: $0.busAddress, loop: context.loop) { [weak self] in self?.mirror?.ownershipChanged() }
            }
            self.systemBridge = systemBridge
            mirror = JobMirror(
                loop: context.loop, connection: connection, owner: owner, services: services,
                processes: context.processes, problems: problems, isOwn: Self.isOwn(clients: ownClients, systemBridge: systemBridge))
        } else {
            // The old owner's jobs went with it.
            stopMirror(terminating: false)
        }
    }

    private func stopMirror(terminating: Bool) {
        mirror?.stop(terminating: terminating)
        mirror = nil
        systemBridge?.stop()
        systemBridge = nil
    }

    /// Whether an activity is a bridge's own: observed by this bridge's traffic source or by
    /// the system-side bridge, or one of the jobs this source served. Told by the connection
    /// or process that reports it, never by its label.
    private static func isOwn(clients: [NetActivityClient], systemBridge: SystemBridgeProcess?) -> (ActivityInfo) -> Bool {
        { activity in
            switch activity.bus {
            case .session: clients.contains { $0.connectionName == activity.owner }
            case .system: activity.processID != nil && activity.processID == systemBridge?.processID
            }
        }
    }

    // MARK: - The server's object

    private func makeServerInterfaces(_ served: ServedJobs) -> [Interface] {
        typealias Views = JobViewInterfaces
        let kf5 = Views.server.bind(
            methods: [
                Views.requestView.bind { call throws(BusError) in
                    guard let (appName, icon, _) = try? Views.requestView.decode(call.arguments) else {
                        throw BusError(.invalidArgs, "requestView takes (ssi)")
                    }
                    return try served.request(from: call.sender, desktopEntry: appName, icon: icon.isEmpty ? nil : icon, hints: nil)
                }
            ],
            properties: [])
        let kf6 = Views.serverV2.bind(
            methods: [
                Views.requestViewV2.bind { call throws(BusError) in
                    guard let (desktopEntry, _, hints) = try? Views.requestViewV2.decode(call.arguments) else {
                        throw BusError(.invalidArgs, "requestView takes (sia{sv})")
                    }
                    return try served.request(from: call.sender, desktopEntry: desktopEntry, icon: nil, hints: hints)
                }
            ],
            properties: [])
        let kuiserver = Views.kuiserver.bind(
            methods: [
                Views.registerService.bind { _ in NoReply() },
                Views.emitJobUrlsChanged.bind { _ in NoReply() },
                // The bridge shows every job as an activity: no program needs a window of its own.
                Views.requiresJobTracker.bind { _ in false },
                Views.registeredJobContacts.bind { _ in [] },
            ],
            properties: [])
        return [kf5, kf6, kuiserver]
    }
}
