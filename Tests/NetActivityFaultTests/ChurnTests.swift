import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Fifty client processes doing random work at once, a third of them SIGKILLed midway: the
/// service ends exactly the killed clients' activities, keeps every shared push, and never
/// announces a state that did not exist.
@Suite(.system, .tags(.system), .timeLimit(.minutes(10))) struct ChurnTests {
    @Test func killedClientsLeaveExactlyTheSurvivorsActivitiesAndEveryPush() throws {
        let seed = Scale.seed()
        var random = SeededGenerator(seed: seed)
        let service = try ServiceDaemon([], leakChecking: true)  // the default throttle and debounce, as on a desktop
        let recorder = try SignalRecorder(address: service.address)
        let operations = Scale.pick(400, soak: 5_000)
        let clientCount = 50
        var doomed = Set<Int>()
        while doomed.count < clientCount / 3 { doomed.insert(Int(random.next() % UInt64(clientCount))) }

        let executable = try builtProduct("na-testclient")
        let clients = try (0..<clientCount).map { index in
            var arguments = [
                "--address", service.address, "--random", "\(seed &+ UInt64(index))", "--ops", "\(operations)",
            ]
            if doomed.contains(index) { arguments += ["--stop-at", "\(1 + random.next() % UInt64(operations - 1))"] }
            return try ChildProcess(executable, arguments)
        }
        let names = try clients.map { client in
            let line = try client.readLine(timeout: .seconds(60)) ?? ""
            guard line.hasPrefix("ready :") else {
                throw BusTestError("na-testclient said '\(line)': \(client.stderrText)")
            }
            return String(line.dropFirst("ready ".count))
        }

        // Each doomed client is killed the moment it stops, while the others keep going.
        let killed = Killings()
        for index in doomed {
            killed.start {
                let holding = try Holding(reading: clients[index], owner: names[index])
                clients[index].send(signal: SIGKILL)
                return holding.net
            }
        }
        var survivorsActivities: [ActivityInfo] = []
        var sharedCount = try killed.netPushes(within: 120)
        for index in 0..<clientCount where !doomed.contains(index) {
            let holding = try Holding(reading: clients[index], owner: names[index])
            sharedCount += holding.net
            survivorsActivities += holding.activities
        }
        for index in doomed {
            let result = try clients[index].waitForExit(timeout: .seconds(10))
            #expect(result.signal == SIGKILL, "client \(index) was not killed: \(result)")
        }
        survivorsActivities.sort { $0.id < $1.id }

        let context = "seed \(seed), \(clientCount) clients × \(operations) calls, killed \(doomed.sorted())"
        let probe = try service.probe()
        let what = "Activities to hold exactly the survivors' \(survivorsActivities.count) activities"
        try waitUntil(what, timeout: .seconds(30)) {
            try withoutStart(probe.activities()) == survivorsActivities
        }
        #expect(try probe.count() == UInt32(sharedCount + survivorsActivities.count), "\(context)")

        // The throttle sends the last value by the end of its window.
        try recorder.waitForMergedCount(UInt32(sharedCount + survivorsActivities.count))
        #expect(recorder.impossibleSignals.isEmpty, "\(context): \(recorder.impossibleSignals.prefix(5))")
        #expect(recorder.merged["Active"]?.bool == (sharedCount + survivorsActivities.count > 0))

        // The survivors leave too: only the shared counter remains.
        for client in clients where client.isRunning { client.send(signal: SIGKILL) }
        try waitUntil("every activity to end once every client is gone", timeout: .seconds(30)) {
            try probe.activities().isEmpty
        }
        #expect(try probe.count() == UInt32(sharedCount), "\(context)")
        #expect(service.process.isRunning, "netactivityd died: \(service.log)")
        recorder.stop()
        try expectCleanExit(service)
        print("churn \(context): shared \(sharedCount), \(survivorsActivities.count) surviving activities, "
            + "\(recorder.recorded.count) signals")
    }
}

/// Threads that each wait for one client to stop, kill it, and report its net pushes.
private final class Killings: Sendable {
    private let group = DispatchGroup()
    private let outcome = Locked<(net: Int, failures: [String])>((0, []))

    func start(_ kill: @escaping @Sendable () throws -> Int) {
        group.enter()
        let thread = Thread { [self] in
            defer { group.leave() }
            do {
                let pushes = try kill()
                outcome.withLock { $0.net += pushes }
            } catch {
                outcome.withLock { $0.failures.append("\(error)") }
            }
        }
        thread.start()
    }

    /// The killed clients' net pushes, once every one is killed.
    func netPushes(within seconds: Int) throws -> Int {
        guard group.wait(timeout: .now() + .seconds(seconds)) == .success else {
            throw BusTestError("the doomed clients did not all stop within \(seconds) s")
        }
        return try outcome.withLock { outcome in
            if let failure = outcome.failures.first { throw BusTestError(failure) }
            return outcome.net
        }
    }
}

/// What na-testclient printed on its "holding" line: its net pushes and live activities.
private struct Holding {
    var net: Int
    var activities: [ActivityInfo]

    init(reading client: ChildProcess, owner: String) throws {
        guard let line = try client.readLine(timeout: .seconds(120)), line.hasPrefix("holding ") else {
            throw BusTestError("na-testclient did not say what it holds: \(client.stderrText)")
        }
        let fields = line.split(separator: " ").dropFirst()
        guard let net = fields.first.flatMap({ Int($0) }) else { throw BusTestError("bad holding line '\(line)'") }
        self.net = net
        activities = try fields.dropFirst().map { field in
            let parts = field.split(separator: ":", maxSplits: 3)
            guard parts.count == 4, let id = UInt32(parts[0]), let completed = UInt64(parts[1]),
                let total = UInt64(parts[2])
            else { throw BusTestError("bad activity '\(field)' in '\(line)'") }
            return ActivityInfo(
                id: id, owner: owner, label: String(parts[3]), completed: completed, total: total, started: 0)
        }
    }
}
