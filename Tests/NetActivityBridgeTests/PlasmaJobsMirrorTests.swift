import BusTestSupport
import DBus
import Foundation
import NetActivityTestSupport
import Platform
import StackTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The plasma-jobs source on Plasma, against a job server of the test's own that takes
/// `org.kde.JobViewServer` from the bridge as plasmashell does (`FakeJobViewServer`), on a
/// private session bus with the real netactivityd. (The real plasmashell is checked in the
/// desktop matrix: desktops/plasma/jobs_test.py.)
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .serialized) struct PlasmaJobsMirrorTests {
    typealias Installed = LauncherBridge

    /// The bridge with plasma-jobs, once the fake plasmashell has taken the server's name.
    private static func start(_ sources: String = "plasma-jobs") throws -> (LauncherBridge, ChildProcess, FakeJobViewServer) {
        let harness = try LauncherBridge()
        let bridge = try harness.startBridge(only: sources, waitForName: sources.contains("plasma-jobs"), name: "org.kde.JobViewServer")
        let shell = try FakeJobViewServer(address: harness.address)
        try waitUntil("the fake plasmashell to own org.kde.JobViewServer") {
            try harness.ownerPID(of: "org.kde.JobViewServer") == UInt32(getpid())
        }
        return (harness, bridge, shell)
    }

    @Test func aReportedActivityBecomesAJobAfterThreeSecondsWithItsNameProgressAndEnd() throws {
        let (harness, _, shell) = try Self.start()
        let reporter = try ServiceProbe(address: harness.address)
        let short = try reporter.begin("Short")
        let began = ContinuousClock.now
        let activity = try reporter.begin("Backup")
        try reporter.call("UpdateActivity", [.uint32(activity), .uint64(250), .uint64(1_000)])
        try reporter.call("EndActivity", [.uint32(short)])
        try waitUntil("a view for Backup", timeout: .seconds(10)) { !shell.calls.filter { $0.member == "requestView" }.isEmpty }
        #expect(ContinuousClock.now - began >= .milliseconds(2_900), "a job only after 3 s")
        let path = try #require(shell.calls.first { $0.member == "requestView" }?.path)
        let request = try #require(shell.calls(on: path).first)
        #expect(request.arguments.count == 3 && request.arguments[1] == .int32(0), "capabilities 0: no cancel")
        try waitUntil("the first update") { shell.calls(on: path).contains { $0.member == "update" } }
        let first = try #require(shell.calls(on: path).first { $0.member == "update" }).entries
        #expect(first["title"] == .string("Backup"))
        #expect(first["percent"] == .uint32(25))
        #expect(first["processedBytes"] == .uint64(250) && first["totalBytes"] == .uint64(1_000))

        // Progress: at most one update a second, with what changed alone.
        for completed in stride(from: 300, through: 700, by: 100) {
            try reporter.call("UpdateActivity", [.uint32(activity), .uint64(UInt64(completed)), .uint64(1_000)])
            usleep(100_000)
        }
        try waitUntil("an update at 700 bytes") {
            shell.calls(on: path).contains { $0.member == "update" && $0.entries["processedBytes"] == .uint64(700) }
        }
        let updates = shell.calls(on: path).filter { $0.member == "update" }
        #expect(updates.count <= 3, "five reports in half a second are at most two updates after the first: \(updates.count)")
        #expect(updates.last?.entries["title"] == nil && updates.last?.entries["totalBytes"] == nil)

        try reporter.call("EndActivity", [.uint32(activity)])
        try waitUntil("terminate") { shell.calls(on: path).contains { $0.member == "terminate" } }
        // The short one, ended within a second, never became a job, though Backup did.
        #expect(shell.calls.filter { $0.member == "requestView" }.count == 1)
    }

    @Test func theBridgesExitTerminatesItsJobs() throws {
        let (harness, bridge, shell) = try Self.start()
        let reporter = try ServiceProbe(address: harness.address)
        _ = try reporter.begin("Sync")
        try waitUntil("a view for Sync", timeout: .seconds(10)) { shell.calls.contains { $0.member == "update" } }
        let path = try #require(shell.calls.first { $0.member == "requestView" }?.path)
        bridge.send(signal: SIGTERM)
        let exit = try bridge.waitForExit(timeout: .seconds(10))
        #expect(exit.exitStatus == 0)
        // Sent before the bridge left; the stand-in reads it on its own thread, maybe a moment later.
        try waitUntil("the terminate the bridge sent before it left", timeout: .seconds(5)) {
            shell.calls(on: path).contains { $0.member == "terminate" }
        }
    }

    @Test func whenPlasmashellRestartsTheMirrorBeginsAgainWithTheNewOwner() throws {
        let (harness, bridge, shell) = try Self.start()
        let reporter = try ServiceProbe(address: harness.address)
        _ = try reporter.begin("Sync")
        try waitUntil("a job for Sync", timeout: .seconds(10)) { shell.calls.contains { $0.entries["title"] == .string("Sync") } }
        try shell.leave()
        try waitUntil("the bridge to serve again") { try harness.ownerPID(of: "org.kde.JobViewServer") == UInt32(bridge.pid) }
        let restarted = try FakeJobViewServer(address: harness.address)
        // Sync is older than 3 s: a job at once.
        try waitUntil("a job for Sync in the new plasmashell", timeout: .seconds(2)) {
            restarted.calls.contains { $0.entries["title"] == .string("Sync") }
        }
        #expect(restarted.calls.filter { $0.member == "requestView" }.count == 1)
    }

    @Test func withoutPlasmaJobsNoJobIsMade() throws {
        let (harness, _, shell) = try Self.start("launcher")
        let reporter = try ServiceProbe(address: harness.address)
        let activity = try reporter.begin("Download")
        // Past the age at which a mirroring bridge asks for a view (3 s; MirrorPlan's tests time
        // it exactly), as the service itself tells the activity's age.
        try waitUntil("the activity to be 4 s old", timeout: .seconds(10)) {
            guard let started = try reporter.activities().first(where: { $0.id == activity })?.started else { return false }
            return Clocks.wallMicroseconds() >= started + 4_000_000
        }
        #expect(shell.calls.isEmpty)
    }

    // MARK: - Observed traffic

    /// The bridge's traffic source observes a real download (curl between two network
    /// namespaces, `TrafficBridgeTests.Setup`) while somebody reports an activity: the reported
    /// one becomes a job, the observed one, older, never does.
    @Test(.enabled(if: TrafficNetwork.unavailable == nil, Comment(rawValue: TrafficNetwork.unavailable ?? "")))
    func observedTrafficIsNeverAJob() throws {
        let setup = try TrafficBridgeTests.Setup(only: "traffic,plasma-jobs")
        let shell = try FakeJobViewServer(address: setup.service.address)
        let probe = try setup.service.probe()
        try waitUntil("the fake plasmashell to own org.kde.JobViewServer") {
            try probe.connection.owner(of: "org.kde.JobViewServer")?.rawValue == shell.uniqueName
        }
        let curl = try setup.curl([PacingServer.url(bytes: 8_000_000, rate: 1_000_000)])
        try waitUntil("an activity for the download", timeout: .seconds(10)) {
            setup.activities.contains { $0.claimedApplication == TrafficBridgeTests.Setup.desktopID }
        }
        let reporter = try ServiceProbe(address: setup.service.address)
        _ = try reporter.begin("Reported")
        try waitUntil("a job for the reported activity", timeout: .seconds(10)) {
            shell.calls.contains { $0.member == "update" && $0.entries["title"] == .string("Reported") }
        }
        #expect(try setup.live.contains { $0.label == "Fetcher" }, "the download still runs")
        #expect(shell.calls.filter { $0.member == "requestView" }.count == 1, "\(shell.calls.map(\.member))")
        #expect(!shell.calls.contains { $0.entries["title"] == .string("Fetcher") })
        curl.send(signal: SIGTERM)
        _ = try? curl.waitForExit(timeout: .seconds(10))
    }

    /// The system-side bridge (`netactivity --system bridge`) reports only what it observed: a
    /// process of the test's own stands in for it, owning `io.github.netactivity.Bridge` on the
    /// system bus and reporting an activity to the system service, while a system daemon
    /// reports another. The daemon's becomes a job; the observed one never does.
    @Test func theSystemSideBridgesObservedTrafficIsNeverAJob() throws {
        let services = try TwoServices()
        let shell = try FakeJobViewServer(address: services.session.address)
        let script = """
            import sys, time
            from gi.repository import Gio, GLib
            flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
            bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
            def call(name, path, interface, method, arguments):
                bus.call_sync(name, path, interface, method, arguments, None, 0, -1, None)
            call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                 GLib.Variant("(su)", ("io.github.netactivity.Bridge", 4)))
            call("io.github.netactivity.NetActivity1", "/io/github/netactivity/NetActivity1",
                 "io.github.netactivity.NetActivity1", "BeginActivity", GLib.Variant("(s)", ("Daily apt download",)))
            print("ready", flush=True)
            time.sleep(60)
            """
        let systemBridge = try ChildProcess("/usr/bin/python3", ["-c", script, services.system.address])
        #expect(try systemBridge.readLine(timeout: .seconds(10)) == "ready")
        let bridge = try services.startNetactivity(["bridge", "--only", "plasma-jobs"])
        let daemon = try ServiceProbe(address: services.system.address)
        _ = try daemon.begin("Firmware update")
        try waitUntil("a job for the system daemon's activity", timeout: .seconds(10)) {
            shell.calls.contains { $0.entries["title"] == .string("Firmware update") }
        }
        #expect(!shell.calls.contains { $0.entries["title"] == .string("Daily apt download") })
        #expect(shell.calls.filter { $0.member == "requestView" }.count == 1)
        #expect(bridge.isRunning)
    }
}
