import DBus
import NetActivityBridge
import NetActivityContract
import PrivateBusLauncher
#if canImport(Glibc)
import Glibc
#endif

/// What the bridge's `traffic` source costs: one socket dump beside `ss -tinie` dumping the same
/// sockets, and the bridge with the source alone, idle and following a transfer paced at 100 MB/s,
/// in two network namespaces of its own (`NetworkNamespacePair`: nothing else the host moves
/// counts, and nothing leaves them).
struct TrafficFigures {
    struct Dump {
        var sockets: Int
        /// Medians of `rounds` dumps, in milliseconds.
        var ours: Double
        var ss: Double
        var ratio: Double { ours / max(ss, 0.001) }
    }
    var dumps: [Dump]
    var idleSeconds: Int
    var idleSwitches: UInt64
    var idleCPU: UInt64
    var followingCPUShare: Double
    var followingSeconds: Int
    /// Whether the service showed the transfer as an activity while it was followed.
    var followingShown: Bool

    /// The system-side bridge's rows, medians of `SystemTrafficFigures.runs` runs.
    var system: SystemTrafficFigures?

    var idleWakeUpsPerSecond: Double { Double(idleSwitches) / Double(max(idleSeconds, 1)) }
    var idleCPUShare: Double { Double(idleCPU) / (Double(idleSeconds) * 1e9) }
}

/// `netactivity --system bridge`: idle, and following a 100 MB/s transfer of a process in a
/// system unit's cgroup (`/system.slice/na-bench-PID.service`, made and removed by the driver);
/// each figure the median of `runs` runs. And its unit's exposure beside the service's.
struct SystemTrafficFigures {
    static let runs = 3
    var idleWakeUpsPerSecond: Double
    var idleCPUShare: Double
    var followingCPUShare: Double
    var followingShown: Bool
    /// `systemd-analyze security --offline` of the two units; nil where it cannot run.
    var exposure: (bridge: Double, service: Double)?
}

enum TrafficCost {
    /// TCP sockets a dump finds: half of them the driver's ends of loopback connections, half
    /// their peers'.
    static let socketCounts = [1_000, 10_000]
    static let rounds = 5
    // Two full dumps: the source dumps every fifth sample and looks sockets up in between.
    static let followSeconds = 10
    static let rate = 100_000_000

    static func measure(service: String, cli: String, idleSeconds: Int) throws(BenchError) -> TrafficFigures {
        guard getuid() == 0 else { throw BenchError("the traffic row makes network namespaces: run it as root") }
        for tool in ["ip", "nsenter", "ss", "curl", "python3"] where executablePath(for: tool) == nil {
            throw BenchError("the traffic row needs \(tool) (scripts/install-deps.sh installs it)")
        }
        let dumps = try socketCounts.map { count throws(BenchError) in try dump(sockets: count) }
        let seconds = max(idleSeconds, 10)
        var figures = TrafficFigures(
            dumps: dumps, idleSeconds: seconds, idleSwitches: 0, idleCPU: 0, followingCPUShare: 0,
            followingSeconds: followSeconds, followingShown: false)
        let user = try bridgeCost(service: service, cli: cli, idleSeconds: seconds, systemSide: false)
        figures.idleSwitches = user.idleSwitches
        figures.idleCPU = user.idleCPU
        figures.followingCPUShare = user.followingCPUShare
        figures.followingShown = user.shown
        var runs: [BridgeRun] = []
        for _ in 0..<SystemTrafficFigures.runs {
            runs.append(try bridgeCost(service: service, cli: cli, idleSeconds: seconds, systemSide: true))
        }
        figures.system = SystemTrafficFigures(
            idleWakeUpsPerSecond: median(runs.map { Double($0.idleSwitches) / Double(seconds) }),
            idleCPUShare: median(runs.map { Double($0.idleCPU) / (Double(seconds) * 1e9) }),
            followingCPUShare: median(runs.map(\.followingCPUShare)), followingShown: runs.allSatisfy(\.shown),
            exposure: SystemUnits.exposure(cli: cli))
        return figures
    }

    // MARK: - One dump

    /// `sockets` TCP sockets (`sockets / 2` loopback connections, both ends open), dumped by the
    /// source's code and by `ss -tinie`, alternately, `rounds` times each.
    private static func dump(sockets: Int) throws(BenchError) -> TrafficFigures.Dump {
        let count = sockets / 2
        var limit = rlimit(rlim_cur: rlim_t(sockets + 1_024), rlim_max: rlim_t(sockets + 1_024))
        var current = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &current)
        if current.rlim_cur < limit.rlim_cur {
            limit.rlim_max = max(limit.rlim_max, current.rlim_max)
            guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
                throw BenchError("cannot open \(sockets) sockets: RLIMIT_NOFILE is \(current.rlim_cur)")
            }
        }
        let descriptors = try connectionPairs(count)
        defer { for descriptor in descriptors { close(descriptor) } }
        let probe = TrafficDumpProbe()
        var ours: [Double] = []
        var ss: [Double] = []
        var dumped = 0
        for _ in 0..<rounds {
            let start = Clock.now
            do {
                dumped = try probe.dump()
            } catch {
                throw BenchError("the traffic source's dump failed: \(error)")
            }
            ours.append(Double(Clock.now - start) / 1e6)
            ss.append(try timed("ss", ["-tinie"]))
        }
        guard dumped >= sockets else { throw BenchError("the dump found \(dumped) sockets of \(sockets)") }
        return TrafficFigures.Dump(sockets: dumped, ours: median(ours), ss: median(ss))
    }

    /// `count` established connections to a listener on 127.0.0.1, both ends kept open.
    private static func connectionPairs(_ count: Int) throws(BenchError) -> [Int32] {
        let listener: LoopbackListener
        do {
            listener = try LoopbackListener(backlog: 128)
        } catch {
            throw BenchError(error.description)
        }
        defer { close(listener.descriptor) }
        var descriptors: [Int32] = []
        descriptors.reserveCapacity(2 * count)
        do {
            for _ in 0..<count {
                let client = try listener.connect()
                descriptors.append(client)
                let server = accept(listener.descriptor, nil, nil)
                guard server >= 0 else { throw LaunchError("accept: errno \(errno)") }
                descriptors.append(server)
            }
        } catch {
            for descriptor in descriptors { close(descriptor) }
            throw BenchError("cannot open loopback connection \(descriptors.count / 2 + 1): \(error)")
        }
        return descriptors
    }

    /// Milliseconds `executable arguments` takes from start to exit, its output discarded.
    private static func timed(_ executable: String, _ arguments: [String]) throws(BenchError) -> Double {
        let start = Clock.now
        try Child(executable, arguments).wait()
        return Double(Clock.now - start) / 1e6
    }

    // MARK: - The bridge, idle and following

    /// One bridge's idle and following figures.
    struct BridgeRun {
        var idleSwitches: UInt64
        var idleCPU: UInt64
        var followingCPUShare: Double
        var shown: Bool
    }

    /// The bridge with the traffic source alone, `idleSeconds` idle and then following; with
    /// `systemSide`, `netactivity --system bridge` reporting to `netactivityd --system`, and the
    /// transfer's sender in a system unit's cgroup.
    private static func bridgeCost(
        service: String, cli: String, idleSeconds: Int, systemSide: Bool
    ) throws(BenchError) -> BridgeRun {
        var run = BridgeRun(idleSwitches: 0, idleCPU: 0, followingCPUShare: 0, shown: false)
        let network: NetworkNamespacePair
        do {
            network = try NetworkNamespacePair(prefix: "na-bench", tag: "\(getpid())", subnet: "10.214.0", prefix6: "fd00:214:")
        } catch {
            throw BenchError(error.description)
        }
        defer { network.remove() }
        let session = try Bus()
        let daemon = try Contender.service(
            path: service, arguments: ["--throttle-ms", "0"] + (systemSide ? ["--system"] : [])
        ).start(on: session)
        defer { daemon.stop() }
        let unit = systemSide ? try SystemUnitCgroup() : nil
        let bridge = try Child(
            "nsenter",
            network.enter(
                network.client,
                systemSide
                    ? [cli, "--system", "--system-address", session.address, "bridge"]
                    : [cli, "--address", session.address, "bridge", "--only", "traffic"]))
        defer { bridge.stop() }
        // Started: its first sample reads the interfaces; then a second to settle.
        Clock.sleep(milliseconds: 2_000)
        guard bridge.isRunning else { throw BenchError("netactivity bridge --only traffic exited: is \(cli) built?") }

        let idleStart = ProcessStatistics.sample(bridge.pid)
        Clock.sleep(milliseconds: idleSeconds * 1_000)
        let idleEnd = ProcessStatistics.sample(bridge.pid)
        run.idleSwitches = idleEnd.contextSwitches - idleStart.contextSwitches
        run.idleCPU = idleEnd.cpuNanoseconds - idleStart.cpuNanoseconds

        // A TCP sink in the server's namespace, and curl sending to it at 100 MB/s.
        let sink = try Child(
            "nsenter", network.enter(network.server, [
                "python3", "-c",
                "import socket\ns = socket.create_server(('\(network.serverAddress)', 8080))\n"
                    + "while True:\n    c, _ = s.accept()\n    while c.recv(1 << 20): pass\n    c.close()",
            ]))
        defer { sink.stop() }
        // Until the sink listens (python3 starts in 0.1 s on a quiet machine, not on a busy one).
        let probe = "import socket, sys\ntry: socket.create_connection(('\(network.serverAddress)', 8080), 1).close()\n"
            + "except OSError: sys.exit(1)"
        var listening = false
        for _ in 0..<100 where !listening {
            listening = try Child("nsenter", network.enter(network.client, ["python3", "-c", probe])).wait() == 0
            if !listening { Clock.sleep(milliseconds: 100) }
        }
        guard listening else { throw BenchError("the TCP sink in the server's namespace never listened") }
        let send = ["nsenter"] + network.enter(network.client, [
            "curl", "-sS", "--limit-rate", "\(rate)", "-T", "/dev/zero",
            "telnet://\(network.serverAddress):8080",
        ])
        let sender: Child
        if let unit {
            sender = try Child("sh", unit.run(send))
        } else {
            sender = try Child(send[0], Array(send.dropFirst()))
        }
        defer { sender.stop() }
        // Past the begin threshold and the first dumps: the steady state is what is measured.
        Clock.sleep(milliseconds: 4_000)
        let followStart = ProcessStatistics.sample(bridge.pid)
        let start = Clock.now
        Clock.sleep(milliseconds: followSeconds * 1_000)
        let followEnd = ProcessStatistics.sample(bridge.pid)
        let elapsed = Clock.now - start
        run.followingCPUShare =
            Double(followEnd.cpuNanoseconds - followStart.cpuNanoseconds) / Double(max(elapsed, 1))
        run.shown = (try? count(on: session)).map { $0 > 0 } ?? false
        guard sender.isRunning else {
            let status = sender.exitStatus.map { " (wait status \($0))" } ?? ""
            throw BenchError("curl stopped sending before the window ended\(status)")
        }
        return run
    }

    private static func count(on bus: Bus) throws -> UInt32 {
        let reply = try bus.control.call(
            try Message.methodCall(
                destination: NetActivityBus.name, path: NetActivityBus.path, interface: .properties, member: "Get",
                arguments: [.string(NetActivityBus.interface.rawValue), .string(NetActivityInterface.count.name.rawValue)]))
        return try reply.arguments().first?.unwrapped?.uint32 ?? 0
    }
}
