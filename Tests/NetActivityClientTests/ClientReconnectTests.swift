import BusTestSupport
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport
import PrivateBusLauncher
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A bus at a fixed socket path that a test can start, kill and start again: the session bus
/// appearing after the app, and going away under it.
final class FixedPathBus: @unchecked Sendable {
    let address: String
    private let directory: String
    private var daemon: ChildProcess?
    private var service: ServiceDaemon?

    init(directory: String) {
        self.directory = directory
        address = "unix:path=\(directory)/bus"
    }

    deinit { stop() }

    /// Starts dbus-daemon on the path and netactivityd on it.
    func start() throws {
        let configuration = directory + "/bus.conf"
        try privateBusConfiguration(listen: address).write(toFile: configuration, atomically: true, encoding: .utf8)
        let daemon = try ChildProcess("dbus-daemon", ["--nofork", "--config-file=\(configuration)", "--print-address=1"])
        self.daemon = daemon
        guard try daemon.readLine(timeout: .seconds(10)) != nil else { throw BusTestError("dbus-daemon printed no address") }
        service = try ServiceDaemon(address: address)
    }

    /// Kills both: the bus is gone.
    func stop() {
        if let service, service.isRunning { try? service.kill() }
        if let daemon, daemon.isRunning {
            daemon.send(signal: SIGKILL)
            _ = try? daemon.waitForExit(timeout: .seconds(10))
        }
        service = nil
        daemon = nil
        unlink(directory + "/bus")
    }
}

@Suite struct ClientReconnectTests {
    @Test func theClientConnectsWhenTheBusAppearsAndAgainAfterLosingIt() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bus = FixedPathBus(directory: directory)
        let problems = ProblemLog()
        let client = NetActivityClient(bus: .address(bus.address), problems: problems.handler)
        let activity = client.begin("patient")
        activity.report(completed: 5, total: 10)
        await client.flush()
        #expect(problems.all.count == 1, "\(problems.all)")

        try await onThread { try bus.start() }
        let probe = try await onThread { () -> ServiceProbe in
            var probe: ServiceProbe?
            try waitUntil("the bus to accept connections") {
                probe = try? ServiceProbe(address: bus.address)
                return probe != nil
            }
            return probe!
        }
        try await waitUntil("the activity on the bus that appeared", timeout: .seconds(15)) {
            (try? probe.activity("patient"))??.completed == 5
        }

        bus.stop()
        try await onThread { try bus.start() }
        let again = try ServiceProbe(address: bus.address)
        try await waitUntil("the activity on the bus after it came back", timeout: .seconds(15)) {
            (try? again.activity("patient"))??.completed == 5
        }
        #expect(problems.all.count == 2, "one line per outage: \(problems.all)")
        activity.end()
        await client.flush()
        #expect(try again.count() == 0)
    }
}
