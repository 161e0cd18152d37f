import DBus
import NetActivityContract
import PrivateBusLauncher
#if canImport(Glibc)
import Glibc
#endif

/// Memory, the release of a departing client, and the idle cost of one service binary.
struct FootprintFigures {
    var idle: ProcessMemory
    var loaded: ProcessMemory
    /// After every client left and the debounce settled.
    var drained: ProcessMemory
    /// From closing the client's connection to the watcher receiving the PropertiesChanged.
    var releaseNanoseconds: UInt64
    /// PropertiesChanged signals the release caused (watched for 300 ms).
    var releaseSignals: Int
    /// The Count that signal carried.
    var countAfterRelease: UInt32?
    /// CPU nanoseconds the service spent on the release (measured over the 300 ms watch).
    var releaseCPU: UInt64
    /// Context switches and CPU nanoseconds of the idle service over `idleSeconds`.
    var idleSwitches: UInt64?
    var idleCPU: UInt64?
}

enum Footprint {
    static let connections = 10
    static let activitiesPerConnection = 1_024

    /// Runs the whole sequence on a fresh `netactivityd` (default flags).
    static func measure(
        service path: String, on bus: Bus, idleSeconds: Int?, wrapper: [String] = []
    ) throws(BenchError) -> FootprintFigures {
        let contender = Contender.service(path: path, arguments: [])
        let child = try contender.start(on: bus, wrapper: wrapper)
        defer { try? Contender.stop(child, on: bus) }
        Clock.sleep(milliseconds: 300)
        let idle = ProcessMemory.sample(child.pid)

        var clients: [Connection] = []
        for _ in 0..<connections { clients.append(try bus.connect()) }
        for client in clients { try beginAll(on: client) }
        // Past the 1 s activation delay (Visible flips) and the 50 ms throttle window, so the
        // release below is a leading edge of its own.
        Clock.sleep(milliseconds: 1_300)
        let loaded = ProcessMemory.sample(child.pid)

        var watcher: Connection? = try bus.connect()
        do {
            try watcher?.addMatch(Calls.propertiesChangedRule)
        } catch {
            throw BenchError("AddMatch failed: \(error)")
        }
        Clock.sleep(milliseconds: 100)
        while watcher?.readMessage(timeout: .zero) != nil {}

        let cpuBefore = ProcessStatistics.sample(child.pid).cpuNanoseconds
        let start = Clock.now
        clients.removeFirst()  // closes the connection: the bus tells the service it left
        var releaseNanoseconds: UInt64 = 0
        var signals = 0
        var count: UInt32?
        let watchUntil = start + 300_000_000
        while true {
            let now = Clock.now
            guard now < watchUntil else { break }
            guard let message = watcher?.readMessage(timeout: .nanoseconds(Int64(watchUntil - now))) else { break }
            guard message.kind == .signal, message.member?.rawValue == "PropertiesChanged" else { continue }
            if signals == 0 {
                releaseNanoseconds = Clock.now - start
                count = Calls.count(in: message)
            }
            signals += 1
        }
        guard signals > 0 else { throw BenchError("no PropertiesChanged after a client with activities left") }
        let releaseCPU = ProcessStatistics.sample(child.pid).cpuNanoseconds - cpuBefore

        clients.removeAll()
        watcher = nil
        // The completion delay (0.17 s) and a throttle window pass; then nothing is pending.
        Clock.sleep(milliseconds: 600)
        let drained = ProcessMemory.sample(child.pid)

        var idleSwitches: UInt64?
        var idleCPU: UInt64?
        if let idleSeconds {
            let before = ProcessStatistics.sample(child.pid)
            Clock.sleep(milliseconds: idleSeconds * 1_000)
            let after = ProcessStatistics.sample(child.pid)
            idleSwitches = after.contextSwitches - before.contextSwitches
            idleCPU = after.cpuNanoseconds - before.cpuNanoseconds
        }
        return FootprintFigures(
            idle: idle, loaded: loaded, drained: drained, releaseNanoseconds: releaseNanoseconds,
            releaseSignals: signals, countAfterRelease: count, releaseCPU: releaseCPU, idleSwitches: idleSwitches, idleCPU: idleCPU)
    }

    /// BeginActivity × 1,024 on one connection, all in flight at once.
    private static func beginAll(on client: Connection) throws(BenchError) {
        let begins = try (0..<activitiesPerConnection).map { index throws(BenchError) in
            try Calls.checked(NetActivityBus.Member.beginActivity, [.string("downloads.example.org/images/file-\(index).iso")])
        }
        _ = try Calls.pipeline(client, begins)
    }
}
