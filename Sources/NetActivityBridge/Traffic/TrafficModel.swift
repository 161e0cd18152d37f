/// The values the traffic source's decisions work on, free of any I/O: who owns a socket, what
/// someone else reports, the settings, and what the tracker decides.

/// The application a socket belongs to, as far as `/proc` and the cgroup tree told.
struct SocketOwner: Equatable, Sendable {
    /// The key activities are kept by and the `application` hint: the desktop id when known,
    /// else the program name.
    var application: String
    var desktopID: String?
    var program: String?
    /// The desktop entry's `Name`, else the program name.
    var label: String
    var icon: String?
    /// The socket's cgroup v2 path (`/user.slice/…/app-….scope`), when known.
    var cgroup: String?
    /// The process holding the socket and its ancestors, when found.
    var processes: Set<UInt32> = []

    /// The owner of the bytes no socket explains when no single application can take them.
    static let otherTraffic = SocketOwner(application: " other", label: "Other traffic")

    /// Whether `--traffic-ignore` names it (by desktop id or program name).
    func isIgnored(by ignored: Set<String>) -> Bool {
        ignored.contains(application) || desktopID.map(ignored.contains) == true
            || program.map(ignored.contains) == true
    }
}

/// An activity someone else reports on the bus: `netactivity run`, the launcher source, a
/// browser's downloads. Applications it covers get no observed activity.
struct ReportedActivity: Equatable, Sendable {
    var processID: UInt32?
    /// The cgroup of `processID`, read by the source.
    var cgroup: String?
    var claimedApplication: String

    /// Whether this activity already tells of `owner`'s traffic: its process is one of the
    /// socket's process tree, its cgroup is the socket's, or it claims the same application.
    func covers(_ owner: SocketOwner) -> Bool {
        if !claimedApplication.isEmpty,
            claimedApplication == owner.application || claimedApplication == owner.desktopID
        {
            return true
        }
        if let processID, owner.processes.contains(processID) { return true }
        if let cgroup, cgroup != "/", cgroup == owner.cgroup { return true }
        return false
    }
}

/// When the traffic source shows an application, and what it costs to find out.
struct TrafficSettings: Sendable {
    /// Bytes an application must move within `window` to begin an activity (`--traffic-threshold`).
    var threshold: UInt64 = 256 * 1024
    var window: Duration = .seconds(2)
    /// An activity ends after this long below a tenth of the threshold.
    var endAfter: Duration = .seconds(5)
    /// Sockets are followed until the interfaces have been below a tenth of the threshold this long.
    var quietAfter: Duration = .seconds(10)
    /// How often interface counters are read while nothing moves, and sockets while something does.
    var counterInterval: Duration = .seconds(2)
    var socketInterval: Duration = .seconds(1)
    /// What the interfaces carry on top of TCP's payload (IP and TCP headers, ACKs), as a
    /// fraction of the payload: bytes beyond it are UDP's.
    var headerAllowance: Double = 0.05
    /// Desktop ids and program names never shown (`--traffic-ignore`).
    var ignored: Set<String> = []
    /// The user whose sockets are shown: the bridge's.
    var uid: UInt32 = 0
    /// Whether the system services' sockets are shown instead (`bridge --system`).
    var systemSide = false

    /// Whose sockets count.
    var audience: TrafficAudience { systemSide ? .system : .user(uid) }

    /// A tenth of the threshold: below it an application is quiet, above it the interfaces are
    /// busy enough to follow sockets (below the begin threshold, or a begin would wait a period).
    var quietBytes: UInt64 { max(1, threshold / 10) }
}

/// What one application's sockets moved in one sample, as the ledger credits it.
struct ApplicationBytes {
    var owner: SocketOwner
    var received: UInt64 = 0
    var sent: UInt64 = 0
    /// What its sockets had moved before the ledger first read them, credited once with each
    /// socket's first move: an activity counts from the socket's first byte.
    var earlier = InterfaceCounters.Bytes(received: 0, sent: 0)
}

/// An activity the tracker begins.
struct ObservedActivity: Equatable, Sendable {
    var key: String
    var label: String
    /// The `application` hint; nil for "Other traffic".
    var application: String?
    var icon: String?
    var download: Bool
    var completed: UInt64
}

/// What the tracker decided in one sample.
enum TrafficEvent: Equatable, Sendable {
    case began(ObservedActivity)
    case progressed(key: String, completed: UInt64)
    case ended(key: String)
}

/// One reading: the interface counters always; the sockets while they are followed. Not
/// `Sendable`: made and taken on the bridge's loop, its readers ask the source's own sockets
/// within the sample that carries them.
struct TrafficSample {
    var interfaces: [String: InterfaceCounters.Bytes]
    var sockets: Sockets?

    struct Sockets {
        /// Every TCP socket of the namespace, every user's; or, with `lookedUp`, those of them
        /// still there.
        var tcp: [SocketRecord]
        /// The cookies of the sockets looked up one by one, when `tcp` is no full dump: only
        /// these are known to have gone when missing.
        var lookedUp: Set<UInt64>? = nil
        /// A full dump, read when the lookups leave the interfaces' bytes unexplained (a socket
        /// opened since the last dump moves them); nil when it fails.
        var readAllTCP: (() -> [SocketRecord]?)? = nil
        /// Destroy broadcasts since the last reading.
        var destroyed: [SocketRecord] = []
        /// Connected UDP sockets to remote port 443 (QUIC), every user's.
        var udp: [SocketRecord] = []
        /// Reads the connected UDP sockets when `udp` was not read with the rest: only a sample
        /// whose interfaces carried more than TCP explains needs them, and a dump costs the
        /// kernel a walk of the whole hash table, however few sockets the namespace has.
        var readUDP: (() -> [SocketRecord])?
        /// What others report on the bus now.
        var reported: [ReportedActivity] = []

        /// `udp`, read now if it was left for later.
        var udpSockets: [SocketRecord] { readUDP?() ?? udp }
    }
}

/// Finds who owns sockets: the seam between the tracker and `/proc`.
protocol SocketOwnerLookup: AnyObject {
    /// The owners of `sockets` (all the audience's), by cookie; a socket whose owner is
    /// gone or unknown is left out.
    func owners(of sockets: [SocketRecord]) -> [UInt64: SocketOwner]
    /// The cgroup paths of the cgroup ids that exist; the root cgroup's is `/`.
    func cgroupPaths(of ids: Set<UInt64>) -> [UInt64: String]
}

extension SocketOwnerLookup {
    func cgroupPaths(of ids: Set<UInt64>) -> [UInt64: String] { [:] }
}

/// What the traffic source reads of the kernel: the seam tests replace.
protocol TrafficSystem: AnyObject {
    /// The default-route interfaces' counters.
    func interfaces() -> [String: InterfaceCounters.Bytes]
    /// Every TCP socket (with `tcp_info`), and every connected UDP socket or, where the system
    /// reads those only on demand, none.
    func sockets() throws(TrafficProblem) -> (tcp: [SocketRecord], udp: [SocketRecord])
    /// The sockets among `known` still there, with fresh counters, each found by its address
    /// and cookie: what following a transfer costs, where a dump walks every socket.
    func lookUp(_ known: [SocketRecord]) throws(TrafficProblem) -> [SocketRecord]
    /// A full TCP dump on demand; nil where a sample needs none.
    var tcpReader: (() -> [SocketRecord]?)? { get }
    /// Every connected UDP socket, read on demand; nil where `sockets()` reads them with the rest.
    var udpReader: (() -> [SocketRecord])? { get }
    /// The TCP sockets destroyed since the last call, while following.
    func destroyed() -> [SocketRecord]
    /// Subscribes the destroy broadcasts (idempotent).
    func startFollowing()
    /// Unsubscribes them.
    func stopFollowing()
    var owners: SocketOwnerLookup { get }
}

extension TrafficSystem {
    var udpReader: (() -> [SocketRecord])? { nil }
    var tcpReader: (() -> [SocketRecord]?)? { nil }

    func lookUp(_ known: [SocketRecord]) throws(TrafficProblem) -> [SocketRecord] {
        let cookies = Set(known.map(\.cookie))
        return try sockets().tcp.filter { cookies.contains($0.cookie) }
    }
}
