import BusTestSupport
import DBus
import NetActivityContract
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The system side for a tray test: a private bus of its own with `netactivityd --system
/// --address B` on it, standing in for the machine's system bus.
final class SystemServiceOnBus: @unchecked Sendable {
    let bus: PrivateBus
    let probe: Connection
    private(set) var service: ChildProcess?

    init() throws {
        bus = try PrivateBus()
        probe = try Connection(.address(bus.address))
        try start()
    }

    deinit {
        if let service, service.isRunning {
            service.send(signal: SIGTERM)
            _ = try? service.waitForExit(timeout: .seconds(10))
        }
        bus.stop()
    }

    var address: String { bus.address }

    func start() throws {
        let process = try ChildProcess(
            try builtProduct("netactivityd"), ["--system", "--address", address] + TrayOnBus.quick)
        service = process
        try waitUntil("netactivityd --system (pid \(process.pid)) to own \(NetActivityBus.name)") {
            guard process.isRunning else { throw BusTestError("netactivityd exited early: \(process.stderrText)") }
            return try probe.owner(of: NetActivityBus.name) != nil
        }
    }

    func kill() throws {
        guard let service else { return }
        service.send(signal: SIGKILL)
        _ = try service.waitForExit(timeout: .seconds(10))
        self.service = nil
    }

    /// Begins an activity owned by `connection` (which must stay open to keep it).
    func begin(_ label: String, on connection: Connection) throws {
        let message = try Message.methodCall(
            destination: NetActivityBus.name, path: NetActivityBus.path, interface: NetActivityBus.interface,
            member: NetActivityBus.Member.beginActivity, arguments: [.string(label)])
        _ = try connection.call(message, timeout: .seconds(10))
    }
}

/// `netactivity tray --system-address B`: one item for the session's and the system's service.
@Suite struct TrayBothBusesTests {
    @Test func theTooltipListsSystemEntriesWithTheirPrefix() throws {
        let session = try TrayOnBus()
        let system = try SystemServiceOnBus()
        let watcher = try session.startWatcher()
        defer { withExtendedLifetime(watcher) {} }
        let tray = try session.startTray(["--system-address", system.address])
        let item = try session.observeItem()
        let app = try testProcessApplicationPrefix()

        let owner = try Connection(.address(system.address))
        try system.begin("apt upgrade", on: owner)
        try item.wait(for: "the tooltip to list the system's activity") {
            try $0.toolTip().description == "system: \(app)apt upgrade"
        }
        try item.wait(for: "Status Active") { try $0.string("Status") == "Active" }

        try session.callService("BeginActivity", [.string("Sync feeds")])
        let both = "\(app)Sync feeds\nsystem: \(app)apt upgrade"
        try item.wait(for: "the tooltip to list both, the session's first") { try $0.toolTip().description == both }

        // The system service gone: the session's activity alone, within 1 s.
        let killed = ContinuousClock.now
        try system.kill()
        try item.wait(for: "the tooltip to list the session's activity alone", timeout: .milliseconds(1_300) - (.now - killed)) {
            try $0.toolTip().description == "\(app)Sync feeds"
        }

        // Back: the union again.
        try system.start()
        let newOwner = try Connection(.address(system.address))
        try system.begin("firmware", on: newOwner)
        try item.wait(for: "the tooltip to list both again") {
            try $0.toolTip().description == "\(app)Sync feeds\nsystem: \(app)firmware"
        }
        #expect(tray.isRunning)
        #expect(tray.stderrText.isEmpty, "\(tray.stderrText)")
    }

    @Test func aMissingSystemBusIsNoSystemEntries() throws {
        let session = try TrayOnBus()
        let watcher = try session.startWatcher()
        defer { withExtendedLifetime(watcher) {} }
        let tray = try session.startTray(["--system-address", "unix:path=/nonexistent/netactivity-test/system_bus_socket"])
        let item = try session.observeItem()
        try session.callService("Push")
        try item.wait(for: "the tooltip to count the push") { try $0.toolTip().description == "1 other connection" }
        #expect(tray.isRunning)
        let stderr = tray.stderrText
        #expect(stderr.filter { $0 == "\n" }.count <= 1, "\(stderr)")
        #expect(stderr.isEmpty || stderr.hasPrefix("netactivity: system side: "), "\(stderr)")
    }
}
