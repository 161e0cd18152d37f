import DBus
import DesktopApplications
import NetActivity
import NetActivityContract
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity bridge`: reports the transfers other programs already announce on D-Bus
/// (PackageKit's transactions, the Unity launcher API's progress), and those it observes in the
/// kernel's socket counters (the traffic source), to the session's service,
/// through the client library, so everything it reports ends the moment it dies.
///
/// One process per session: it owns `io.github.netactivity.Bridge` on the session bus, and a
/// second one (an XDG autostart entry beside a systemd user unit) leaves at once. With
/// `systemSide` (`bridge --system`) it is the machine's one system-side bridge instead: it owns
/// that name on the system bus and reports the system services' traffic to the system service. Each source
/// starts on its own; one that cannot (no system bus, no PackageKit, a name taken) is said once
/// and the others go on. Runs on one `EventLoop`, the client library's too, so it sleeps while
/// nothing happens and a report costs no thread hand-off.
public final class Bridge {
    public let options: BridgeOptions
    private let loop: EventLoop
    private var sources: [any BridgeSource] = []
    private var connection: Connection?
    /// Whether the loop stopped because the bus connection was lost.
    private var lostBus = false

    /// The bus name that keeps a session to one bridge.
    public static let busName: BusName = "io.github.netactivity.Bridge"

    public init(options: BridgeOptions) throws(BusError) {
        self.options = options
        loop = try EventLoop()
    }

    /// Runs until SIGTERM or SIGINT (0); 0 at once when another bridge runs; 1 when the
    /// session bus cannot be reached, or when it is lost: a failure, so that systemd's
    /// `Restart=on-failure` starts the bridge again when the bus comes back.
    public func run() -> Int32 {
        let problems = options.problems
        let home = options.systemSide ? options.system : options.session
        let busName = options.systemSide ? "the system bus" : "the session bus"
        do {
            let connection = try Connection(home)
            loop.attach(connection)
            self.connection = connection
            guard try connection.requestName(Self.busName, options: [.doNotQueue]) == .primaryOwner else {
                problems("bridge: another bridge already runs on \(busName) (\(Self.busName)); leaving it to that one")
                return 0
            }
            connection.addFilter(for: .signal) { [weak self, loop] message in
                guard message.isSignal(.local, "Disconnected") else { return false }
                problems("bridge: lost \(busName); exiting")
                self?.lostBus = true
                loop.stop()
                return true
            }
        } catch {
            problems("bridge: cannot connect to \(home): \(error.message)")
            return 1
        }
        // On the bridge's own loop: a report made while handling a signal goes out in the next turn.
        let client = NetActivityClient(bus: options.report, sharing: loop, problems: { problems("bridge: " + $0) })
        // The traffic source reports on a connection of its own, so that what it observed is
        // told apart, by its owner, from what others reported (plasma-jobs mirrors only those).
        let observing = NetActivityClient(bus: options.report, sharing: loop, problems: { problems("bridge: " + $0) })
        // One reading of /proc and of the desktop entries for every source, so each entry is read once.
        let processes = Processes()
        let chosen = options.systemSide ? options.sources.intersection(BridgeOptions.systemSources) : options.sources
        for name in BridgeSourceName.allCases where chosen.contains(name) {
            let context = BridgeContext(
                loop: loop, client: name == .traffic ? observing : client, sessionBus: options.session,
                systemBus: options.system, processes: processes, problems: { problems("bridge: \(name.rawValue): " + $0) })
            let source = name.makeSource(context, options: options, observing: chosen.contains(.traffic) ? observing : nil)
            do {
                try source.start()
                sources.append(source)
            } catch {
                context.problems(error.message)
            }
        }
        loop.onSignal(SIGTERM) { [loop] in loop.stop() }
        loop.onSignal(SIGINT) { [loop] in loop.stop() }
        loop.run()
        for source in sources { source.stop() }
        sources.removeAll()
        withExtendedLifetime((client, observing)) {}
        return lostBus ? 1 : 0
    }
}

/// What `netactivity bridge` follows, and where it reports.
public struct BridgeOptions: Sendable {
    public var sources: Set<BridgeSourceName>
    /// The session bus: the launcher API's, and the one the bridge's name is taken on.
    public var session: BusAddress
    /// The system bus, PackageKit's.
    public var system: BusAddress
    /// The system service whose activities the plasma-jobs source shows in Plasma with the
    /// session's, as every indicator merges them; nil for the session's alone.
    public var systemService: Bus?
    /// The service the bridge reports to: the session's.
    public var report: Bus
    /// One line per problem; the default writes it to standard error.
    public var problems: @Sendable (String) -> Void
    /// The traffic source's begin threshold: bytes an application moves within 2 s
    /// (`--traffic-threshold`).
    public var trafficThreshold: UInt64
    /// Desktop ids and program names the traffic source never shows (`--traffic-ignore`); on
    /// the system side, unit names.
    public var trafficIgnored: Set<String>
    /// Whether this is the system-side bridge (`bridge --system`): only the traffic source, the
    /// system services' sockets, reported to `report` (the system service); its name is taken
    /// on `system`.
    public var systemSide: Bool

    /// The traffic source's default threshold: 256 kB within 2 s.
    public static let defaultTrafficThreshold: UInt64 = 256 * 1024

    /// The units the system side never shows: they report their transfers themselves
    /// (PackageKit's come through the `packagekit` source of each user's bridge).
    public static let systemUnitsIgnored: Set<String> = ["packagekit.service"]

    /// The sources the system-side bridge can run: the others follow a session's programs.
    public static let systemSources: Set<BridgeSourceName> = [.traffic]

    public init(
        sources: Set<BridgeSourceName> = Set(BridgeSourceName.allCases), session: BusAddress = .session,
        system: BusAddress = .system, report: Bus = .session,
        problems: @escaping @Sendable (String) -> Void = NetActivityClient.logToStandardError,
        trafficThreshold: UInt64 = BridgeOptions.defaultTrafficThreshold, trafficIgnored: Set<String> = [],
        systemSide: Bool = false, systemService: Bus? = .system
    ) {
        self.systemService = systemService
        self.systemSide = systemSide
        self.sources = sources
        self.session = session
        self.system = system
        self.report = report
        self.problems = problems
        self.trafficThreshold = trafficThreshold
        self.trafficIgnored = trafficIgnored
    }
}

/// The sources a bridge can follow, by the names `--only` and `--without` take.
public enum BridgeSourceName: String, Sendable, CaseIterable {
    /// PackageKit's transactions on the system bus (GNOME Software, KDE Discover, `pkcon`).
    case packagekit
    /// The Unity launcher API's progress on the session bus (Electron apps, libunity apps).
    case launcher
    /// What this user's applications move over TCP (and QUIC), observed with sock_diag.
    case traffic
    /// Plasma's job list: reported activities shown there on Plasma, KDE programs' jobs
    /// reported everywhere else.
    case plasmaJobs = "plasma-jobs"

    /// The source; `observing` is the client the traffic source reports through, when it runs.
    func makeSource(_ context: BridgeContext, options: BridgeOptions, observing: NetActivityClient?) -> any BridgeSource {
        switch self {
        case .plasmaJobs:
            PlasmaJobsSource(
                context, report: options.report, system: options.systemService, observedBy: observing,
                problems: { [problems = options.problems] in problems("bridge: plasma-jobs: " + $0) })
        case .packagekit: PackageKitSource(context)
        case .launcher: LauncherSource(context)
        case .traffic:
            TrafficSource(
                context,
                settings: TrafficSettings(
                    threshold: max(1, options.trafficThreshold),
                    ignored: options.trafficIgnored.union(options.systemSide ? BridgeOptions.systemUnitsIgnored : []),
                    uid: UInt32(getuid()), systemSide: options.systemSide))
        }
    }
}

/// What a source is given: the bridge's loop (every source runs on it), the client it reports
/// through, the buses, and where its problems go (once each, prefixed with its name).
public struct BridgeContext {
    public let loop: EventLoop
    public let client: NetActivityClient
    public let sessionBus: BusAddress
    public let systemBus: BusAddress
    /// Where sources learn a process's program and application, and an application's desktop entry.
    public let processes: Processes
    public let problems: (String) -> Void
}

/// One source of transfers: follows its program on its bus and holds an activity per transfer.
protocol BridgeSource: AnyObject {
    /// Starts following. Throws when the source cannot work at all (its bus is missing); a
    /// program that is simply not running yet is no error: the source waits for it.
    func start() throws(BusError)
    /// Ends every activity it holds and stops following.
    func stop()
}
