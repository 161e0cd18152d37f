import BusTestSupport
import DBus
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
/// appearing after the app, and going away under it. Each start is a `PrivateBus` listening on
/// that path, with the service on it.
final class FixedPathBus: Sendable {
    let address: String
    private let socket: String
    private let running = Locked<(bus: PrivateBus, service: ServiceDaemon)?>(nil)

    init(directory: String) {
        socket = directory + "/bus"
        address = "unix:path=\(socket)"
    }

    deinit { stop() }

    /// Starts dbus-daemon on the path and netactivityd on it.
    func start() throws {
        let address = address
        let bus = try PrivateBus { _ in privateBusConfiguration(listen: address) }
        let service = try ServiceDaemon(address: address)
        running.withLock { $0 = (bus, service) }
    }

    /// Kills both: the bus is gone.
    func stop() {
        let stopped = running.withLock { running in
            defer { running = nil }
            return running
        }
        if let (bus, service) = stopped {
            if service.isRunning { try? service.kill() }
            bus.kill()
        }
        unlink(socket)
    }
}

@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ClientReconnectTests {
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

    /// An idle client schedules no retry when its bus goes (it must not wake up for nothing);
    /// what it reports later still reaches the bus that came back, and an observer added later
    /// sees it.
    @Test func anIdleClientThatLostItsBusReportsALaterActivity() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bus = FixedPathBus(directory: directory)
        try await onThread { try bus.start() }
        let problems = ProblemLog()
        let client = NetActivityClient(bus: .address(bus.address), problems: problems.handler)
        let first = client.begin("first")
        await client.flush()
        first.end()
        await client.flush()

        bus.stop()
        try await waitUntil("the idle client to notice its bus gone") {
            problems.all.contains { $0.contains("lost the connection") }
        }
        try await onThread { try bus.start() }
        let probe = try ServiceProbe(address: bus.address)
        let late = client.begin("late")
        await client.flush()
        try await waitUntil("the late activity on the bus that came back", timeout: .seconds(10)) {
            (try? probe.activity("late")) ?? nil != nil
        }
        let recorder = StateRecorder(client)
        try await recorder.wait(for: "an observer added later to see it") {
            $0.last?.activities.map(\.label) == ["late"]
        }
        late.end()
        await client.flush()
        #expect(try probe.count() == 0)
    }
}
