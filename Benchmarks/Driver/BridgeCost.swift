import DBus
import NetActivityContract
import PrivateBusLauncher
#if canImport(Glibc)
import Glibc
#endif

/// What `netactivity bridge` costs: idle, and while it follows a PackageKit transaction
/// downloading (its remaining size twice a second, as the apt backend sends it) and a launcher
/// entry's progress 100 times a second, each mirrored to a stand-in plasmashell's job list.
struct BridgeFigures {
    /// After start-up, nothing happening: RSS, context switches and CPU over the idle window.
    var idleRSSKiB: UInt64
    var idleSwitches: UInt64
    var idleCPU: UInt64
    var idleSeconds: Int
    /// Following both streams: CPU over the window's length, context switches, RSS at its end.
    var followingCPUShare: Double
    var followingSwitches: UInt64
    var followingRSSKiB: UInt64
    var launcherUpdates: Int
    var packageKitUpdates: Int
    /// The calls the stand-in plasmashell received: views, updates, terminates.
    var jobCalls: Int
}

enum BridgeCost {
    static let followSeconds = 5
    /// How long both streams run before the window opens: past the 3 s after which the mirror
    /// makes each a job, so the window measures them mirrored.
    static let warmUpSeconds = 4

    static func measure(service: String, cli: String, idleSeconds: Int) throws(BenchError) -> BridgeFigures {
        let session = try Bus()
        let system = try Bus()
        let daemon = try Contender.service(path: service, arguments: []).start(on: session)
        defer { daemon.stop() }
        // PackageKit is there from the start, with no transaction.
        let packageKit = try StandInPackageKit(bus: system)
        defer { packageKit.stop() }
        // plasmashell's job server is there too: plasma-jobs mirrors what the bridge follows.
        let jobServer = try StandInJobServer(bus: session)
        defer { jobServer.stop() }
        // The D-Bus sources this row is about; the traffic source reads the host's network and
        // would measure whatever else the machine moves.
        let bridge = try Child(
            cli,
            ["--address", session.address, "--system-address", system.address, "bridge", "--only",
             "packagekit,launcher,plasma-jobs"])
        defer { bridge.stop() }
        // Until it owns the launcher API's name, and then a second to settle.
        let deadline = Clock.now + 10_000_000_000
        while (try? session.control.owner(of: "com.canonical.Unity")) == nil {
            guard bridge.isRunning, Clock.now < deadline else { throw BenchError("netactivity bridge did not start: is \(cli) built?") }
            Clock.sleep(milliseconds: 20)
        }
        Clock.sleep(milliseconds: 1_000)

        let idleStart = ProcessStatistics.sample(bridge.pid)
        Clock.sleep(milliseconds: idleSeconds * 1_000)
        let idleEnd = ProcessStatistics.sample(bridge.pid)
        let idleRSS = ProcessMemory.sample(bridge.pid).rss

        // Following: a transaction downloading, and a launcher entry's progress.
        packageKit.startTransaction()
        let sender = try session.connect()
        let start = Clock.now
        let windowStart = start + UInt64(warmUpSeconds) * 1_000_000_000
        let end = windowStart + UInt64(followSeconds) * 1_000_000_000
        var followStart: ProcessStatistics?
        var sent = 0
        var launcherUpdates = 0
        while Clock.now < end {
            if followStart == nil, Clock.now >= windowStart { followStart = ProcessStatistics.sample(bridge.pid) }
            if followStart != nil { launcherUpdates += 1 }
            let progress = Double(sent % 1_000) / 1_000
            do {
                try sender.send(
                    .signal(
                        path: "/com/canonical/unity/launcherentry/4242", interface: "com.canonical.Unity.LauncherEntry",
                        member: "Update",
                        arguments: [
                            .string("application://bench-app.desktop"),
                            .properties([("progress", .double(progress)), ("progress-visible", .boolean(true))]),
                        ]))
            } catch {
                throw BenchError("sending a launcher update failed: \(error)")
            }
            sender.flush()
            sent += 1
            // 100 a second, on schedule whatever the sends took.
            let next = start + UInt64(sent) * 10_000_000
            if next > Clock.now { Clock.sleep(milliseconds: Int((next - Clock.now) / 1_000_000)) }
        }
        let followEnd = ProcessStatistics.sample(bridge.pid)
        let elapsed = Clock.now - windowStart
        let opened = followStart ?? followEnd
        let cpu = followEnd.cpuNanoseconds - opened.cpuNanoseconds
        let packageKitUpdates = packageKit.stopTransaction()
        return BridgeFigures(
            idleRSSKiB: idleRSS, idleSwitches: idleEnd.contextSwitches - idleStart.contextSwitches,
            idleCPU: idleEnd.cpuNanoseconds - idleStart.cpuNanoseconds, idleSeconds: idleSeconds,
            followingCPUShare: Double(cpu) / Double(max(elapsed, 1)),
            followingSwitches: followEnd.contextSwitches - opened.contextSwitches, followingRSSKiB: ProcessMemory.sample(bridge.pid).rss,
            launcherUpdates: launcherUpdates, packageKitUpdates: packageKitUpdates, jobCalls: jobServer.calls)
    }
}

/// `org.freedesktop.PackageKit` for the benchmark: the daemon object's `GetTransactionList`,
/// and, while started, one transaction downloading, its `DownloadSizeRemaining` announced twice
/// a second. Answered on an event loop of its own thread.
private final class StandInPackageKit: @unchecked Sendable {
    private let connection: Connection
    private let server: ObjectServer
    private let loop: EventLoop
    private var running: LoopOnThread?
    // Touched on the loop's thread only.
    private var transaction: ObjectPath?
    private var remaining: UInt64 = 400_000_000
    private var updates = 0
    private var timer: EventLoop.TimerID?

    static let daemonPath: ObjectPath = "/org/freedesktop/PackageKit"
    static let transactionPath: ObjectPath = "/org/freedesktop/PackageKit/bench_1"
    static let transactionListChanged = SignalDescriptor<[String]>(
        "TransactionListChanged", of: "org.freedesktop.PackageKit", "transactions", doc: "The transactions now running.")
    static let transactionInterface: InterfaceName = "org.freedesktop.PackageKit.Transaction"

    init(bus: Bus) throws(BenchError) {
        do {
            connection = try bus.connect()
            server = ObjectServer(connection: connection)
            loop = try EventLoop()
        } catch {
            throw BenchError("the PackageKit stand-in: \(error)")
        }
        server.export(
            [
                Interface(
                    "org.freedesktop.PackageKit",
                    methods: [
                        Method("GetTransactionList", outputs: [Argument("transactions", "ao")]) { [unowned self] _ in
                            [.array(element: "o", transaction.map { [.objectPath($0)] } ?? [])]
                        }
                    ])
            ], at: Self.daemonPath)
        let sender = connection.uniqueName.rawValue
        server.export(
            [
                Interface(
                    Self.transactionInterface,
                    properties: [
                        Property("Role", "u") { .uint32(10) },  // update-packages
                        Property("Status", "u") { .uint32(8) },  // download
                        Property("Percentage", "u") { .uint32(101) },
                        Property("Sender", "s") { .string(sender) },
                        Property("DownloadSizeRemaining", "t") { [unowned self] in .uint64(remaining) },
                    ])
            ], at: Self.transactionPath)
        loop.attach(connection)
        running = try LoopOnThread(loop, owning: "org.freedesktop.PackageKit", on: connection, for: "PackageKit")
    }

    /// Lists the transaction and starts its progress.
    func startTransaction() {
        loop.post { [self] in
            transaction = Self.transactionPath
            try? server.emit(Self.transactionListChanged, [Self.transactionPath.rawValue], at: Self.daemonPath)
            tick()
        }
    }

    private func tick() {
        remaining -= min(remaining, 1_000_000)
        updates += 1
        try? server.emitPropertiesChanged(["DownloadSizeRemaining"], of: Self.transactionInterface, at: Self.transactionPath)
        timer = loop.schedule(after: .milliseconds(500)) { [self] in tick() }
    }

    /// Stops the progress; returns how many updates went out.
    func stopTransaction() -> Int {
        let done = Locked(0)
        let semaphore = Locked(false)
        loop.post { [self] in
            if let timer { loop.cancel(timer) }
            timer = nil
            done.withLock { $0 = updates }
            semaphore.withLock { $0 = true }
        }
        let deadline = Clock.now + 5_000_000_000
        while !semaphore.withLock({ $0 }), Clock.now < deadline { Clock.sleep(milliseconds: 5) }
        return done.withLock { $0 }
    }

    func stop() {
        running?.stop()
        loop.detach(connection)
    }
}
