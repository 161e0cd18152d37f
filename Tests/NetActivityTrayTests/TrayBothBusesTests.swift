import BusTestSupport
import DBus
import NetActivityTestSupport
import NetActivityContract
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `netactivity tray --system-address B`: one item for the session's and the system's service.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrayBothBusesTests {
    /// No system bus at all (its socket does not exist, as in most containers) is no problem to
    /// report: the tray shows the session and says nothing.
    @Test func noSystemBusAtAllIsSilent() throws {
        let session = try TrayOnBus()
        let watcher = try session.startWatcher()
        defer { withExtendedLifetime(watcher) {} }
        let missing = "/nonexistent/netactivity-tests/system_bus_socket"
        let tray = try session.startTray(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(missing)"])
        let item = try session.observeItem()
        try session.callService("Push")
        // The merged state waits for the system side's first (failed) attempt, or a grace period.
        try item.wait(for: "Status Active") { try $0.string("Status") == "Active" }
        tray.send(signal: SIGTERM)
        let result = try tray.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test func theTooltipListsSystemEntriesWithTheirPrefix() throws {
        let session = try TrayOnBus()
        // The system side: a private bus of its own with `netactivityd --system --address B`,
        // standing in for the machine's system bus.
        let system = try ServiceDaemon(["--system"] + TrayOnBus.quick)
        let watcher = try session.startWatcher()
        defer { withExtendedLifetime(watcher) {} }
        let tray = try session.startTray(["--system-address", system.address])
        let item = try session.observeItem()
        let app = try testProcessApplicationPrefix()

        let owner = try system.probe()
        _ = try owner.begin("apt upgrade")
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
        let newOwner = try system.probe()
        _ = try newOwner.begin("firmware")
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
