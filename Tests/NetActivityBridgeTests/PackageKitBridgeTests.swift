import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import StackTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `netactivity bridge --only packagekit` against the real packagekitd (dummy backend), driven
/// by the real pkcon, reporting to the real netactivityd on a private session bus.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .serialized, .enabled(if: PackageKitDaemon.unavailable == nil, "\(PackageKitDaemon.unavailable ?? "")"))
struct PackageKitBridgeTests {
    /// A refresh is one "Refreshing package lists" activity for the program that asked, mapped
    /// through its desktop entry, with the percentage as a fraction; it ends with the refresh.
    /// The bridge starts before packagekitd and waits for it.
    @Test func aRefreshIsOneActivityForTheProgramThatAsked() throws {
        let packageKit = try PackageKitDaemon(startDaemon: false)
        let bridge = try BridgeUnderTest(packageKit, desktopEntries: [
            "org.example.PackageTool.desktop": "[Desktop Entry]\nType=Application\nName=Package Tool\nExec=pkcon %U\n",
            "org.example.Hidden.desktop": "[Desktop Entry]\nType=Application\nNoDisplay=true\nExec=/usr/bin/pkcon\n",
        ])
        let monitor = try MethodCallMonitor(packageKit.bus.address)
        try packageKit.start()
        let pkcon = try packageKit.pkcon(["refresh", "force"])
        let activity = try bridge.waitForActivity("a refresh with a fraction") { $0.fraction > 0 }
        #expect(activity.label == "Refreshing package lists")
        #expect(activity.kind == "update")
        #expect(activity.claimedApplication == "org.example.PackageTool")
        #expect(activity.total == 0)
        let result = try pkcon.waitForExit(timeout: .seconds(30))
        #expect(result.exitStatus == 0, "\(result)")
        try bridge.waitUntilNoActivity("the refresh's activity to end")
        #expect(bridge.process.isRunning, "\(bridge.process.stderrText)")
        // Read-only: nothing but the bus's own methods, GetTransactionList and GetAll.
        let calls = try monitor.calls(fromProcess: bridge.process.pid)
        #expect(calls.contains("org.freedesktop.PackageKit.GetTransactionList"), "\(calls)")
        #expect(calls.contains("org.freedesktop.DBus.Properties.GetAll"), "\(calls)")
        let allowed: Set<String> = [
            "org.freedesktop.DBus.Hello", "org.freedesktop.DBus.AddMatch", "org.freedesktop.DBus.GetNameOwner",
            "org.freedesktop.DBus.GetConnectionUnixProcessID", "org.freedesktop.PackageKit.GetTransactionList",
            "org.freedesktop.DBus.Properties.GetAll",
        ]
        #expect(calls.isSubset(of: allowed), "\(calls.subtracting(allowed))")
    }

    /// An install's download phase is one "Downloading packages" activity of kind download,
    /// claimed for the program's name where no desktop entry runs it; it ends when the
    /// transaction goes on to install, before pkcon is done.
    @Test func anInstallsDownloadIsAnActivityUntilInstallingBegins() throws {
        let packageKit = try PackageKitDaemon()
        let bridge = try BridgeUnderTest(packageKit)
        let pkcon = try packageKit.pkcon(["-y", "install", "foobar"])
        let activity = try bridge.waitForActivity("the install's download") { _ in true }
        #expect(activity.label == "Downloading packages")
        #expect(activity.kind == "download")
        #expect(activity.claimedApplication == "pkcon")
        try bridge.waitUntilNoActivity("the download to end as installing begins", timeout: .seconds(15))
        #expect(pkcon.isRunning, "the download ended only with the whole install")
    }

    /// packagekitd killed in the middle of an update: its activity ends. A new packagekitd is
    /// followed from the start.
    @Test func packagekitdDyingEndsItsActivities() throws {
        let packageKit = try PackageKitDaemon()
        let bridge = try BridgeUnderTest(packageKit)
        let pkcon = try packageKit.pkcon(["-y", "update"])
        let activity = try bridge.waitForActivity("the update's download, under way") { $0.fraction > 0 }
        #expect(activity.label == "Downloading updates")
        #expect(activity.kind == "update")
        try packageKit.kill()
        try bridge.waitUntilNoActivity("the update's activity to end with packagekitd")
        _ = try? pkcon.waitForExit(timeout: .seconds(10))

        try packageKit.start()
        let refresh = try packageKit.pkcon(["refresh", "force"])
        let next = try bridge.waitForActivity("a refresh by the new packagekitd") { _ in true }
        #expect(next.label == "Refreshing package lists")
        refresh.send(signal: SIGTERM)
        #expect(bridge.process.isRunning, "\(bridge.process.stderrText)")
    }

    /// The system bus gone: the source's activities end, it says so once, and the bridge (whose
    /// other sources may go on) keeps running.
    @Test func losingTheSystemBusEndsItsActivitiesAndNotTheBridge() throws {
        let packageKit = try PackageKitDaemon()
        let bridge = try BridgeUnderTest(packageKit)
        let pkcon = try packageKit.pkcon(["refresh", "force"])
        _ = try bridge.waitForActivity("the refresh") { _ in true }
        packageKit.bus.kill()
        try bridge.waitUntilNoActivity("the refresh's activity to end with the bus")
        #expect(bridge.process.isRunning, "\(bridge.process.stderrText)")
        // The bridge writes the line before it ends the activity, but the test reads the pipe
        // on a thread of its own, which may not have caught up yet.
        func lost() -> Int {
            bridge.process.stderrText.split(separator: "\n").filter { $0.contains("lost the system bus") }.count
        }
        try waitUntil("the bridge to say it lost the system bus: \(bridge.process.stderrText)") { lost() > 0 }
        _ = try? pkcon.waitForExit(timeout: .seconds(10))
        #expect(lost() == 1, "\(bridge.process.stderrText)")
    }

    /// Following an idle packagekitd costs nothing: no wake-up, no CPU time.
    @Test func theBridgeSleepsWhilePackageKitIsIdle() throws {
        let packageKit = try PackageKitDaemon()
        let monitor = try MethodCallMonitor(packageKit.bus.address)
        let bridge = try BridgeUnderTest(packageKit)
        try waitUntil("the bridge to ask for PackageKit's transactions") {
            try monitor.calls(fromProcess: bridge.process.pid).contains("org.freedesktop.PackageKit.GetTransactionList")
        }
        // The reply to that call, and the client's first steps, are still on their way.
        try waitUntil("the bridge to settle") {
            try wakeUps(of: bridge.process.pid, over: 0.2).isEmpty
        }
        let before = ProcessStatistics.sample(bridge.process.pid)
        Thread.sleep(forTimeInterval: 2)
        let after = ProcessStatistics.sample(bridge.process.pid)
        #expect(!before.threads.isEmpty)
        #expect(ProcessStatistics.wakeUps(from: before, to: after).isEmpty, "woke up while idle: \(ProcessStatistics.wakeUps(from: before, to: after))")
        #expect(after.cpuTicks == before.cpuTicks, "used CPU while idle: \(before.cpuTicks) → \(after.cpuTicks) ticks")
    }

    /// The bridge killed with SIGKILL: the service ends everything it reported.
    @Test func theBridgeKilledEndsItsActivities() throws {
        let packageKit = try PackageKitDaemon()
        let bridge = try BridgeUnderTest(packageKit)
        let pkcon = try packageKit.pkcon(["refresh", "force"])
        _ = try bridge.waitForActivity("the refresh") { _ in true }
        bridge.process.send(signal: SIGKILL)
        _ = try bridge.process.waitForExit(timeout: .seconds(10))
        try bridge.waitUntilNoActivity("the killed bridge's activity to end")
        pkcon.send(signal: SIGTERM)
    }
}

// MARK: - The bridge and what it reported

/// `dbus-monitor --profile` of every method call on a bus, for what one process called.
struct MethodCallMonitor {
    let address: String
    let process: ChildProcess

    init(_ address: String) throws {
        self.address = address
        process = try ChildProcess("dbus-monitor", ["--address", address, "--profile", "type='method_call'"])
        // Its own NameLost comes once it monitors.
        try waitUntil("dbus-monitor to monitor") { process.stdoutText.contains("NameLost") }
    }

    /// `interface.member` of every call sent by a connection of process `pid` still on the bus.
    func calls(fromProcess pid: Int32) throws -> Set<String> {
        let bus = try Connection(.address(address))
        var calls = Set<String>()
        var senders: [String: Bool] = [:]
        for line in process.stdoutText.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 8, fields[0] == "mc" else { continue }
            let sender = fields[3]
            if senders[sender] == nil {
                senders[sender] = (try? bus.processID(of: BusName(unchecked: sender))) == UInt32(pid)
            }
            if senders[sender] == true { calls.insert(fields[6] + "." + fields[7]) }
        }
        return calls
    }
}

/// `netactivity bridge --only packagekit` between a private session bus with the real service
/// and the PackageKit bus; desktop entries, when given, in an `XDG_DATA_DIRS` of their own.
struct BridgeUnderTest {
    let service: ServiceDaemon
    let process: ChildProcess
    let probe: ServiceProbe

    init(_ packageKit: PackageKitDaemon, desktopEntries: [String: String] = [:]) throws {
        service = try ServiceDaemon()
        let data = packageKit.directory + "/data"
        try FileManager.default.createDirectory(atPath: data + "/applications", withIntermediateDirectories: true)
        for (name, text) in desktopEntries {
            try text.write(toFile: data + "/applications/" + name, atomically: true, encoding: .utf8)
        }
        process = try ChildProcess(
            try builtProduct("netactivity"),
            ["--address", service.address, "--system-address", packageKit.bus.address, "bridge", "--only", "packagekit"],
            environment: ["XDG_DATA_DIRS": data, "XDG_DATA_HOME": data + "/none", "HOME": packageKit.directory + "/home"])
        probe = try service.probe()
        try waitUntil("the bridge to own its name") {
            guard process.isRunning else { throw BusTestError("the bridge exited: \(process.stderrText)") }
            return try probe.connection.owner(of: "io.github.netactivity.Bridge") != nil
        }
    }

    /// The single live activity once `condition` holds for it.
    func waitForActivity(
        _ what: String, timeout: Duration = .seconds(20), _ condition: (BridgedActivity) -> Bool
    ) throws -> BridgedActivity {
        var found: BridgedActivity?
        try waitUntil(what, timeout: timeout) {
            guard process.isRunning else { throw BusTestError("the bridge exited: \(process.stderrText)") }
            let activities = try bridgedActivities()
            guard activities.count <= 1 else { throw BusTestError("more than one activity: \(activities)") }
            found = activities.first.flatMap { condition($0) ? $0 : nil }
            return found != nil
        }
        guard let found else { throw BusTestError("no activity") }
        return found
    }

    func waitUntilNoActivity(_ what: String, timeout: Duration = .seconds(10)) throws {
        try waitUntil(what, timeout: timeout) { try bridgedActivities().isEmpty }
    }

    /// Every live activity object, as the service's ObjectManager has them.
    func bridgedActivities() throws -> [BridgedActivity] {
        let reply = try probe.call("GetManagedObjects", interface: .objectManager)
        guard let objects = reply.first?.elements else { throw BusTestError("GetManagedObjects gave \(reply)") }
        return objects.compactMap { object in
            guard case .dictEntry(_, let interfaces) = object,
                let properties = interfaces.stringKeyedEntries?[NetActivityBus.activityInterface.rawValue]?
                    .stringKeyedEntries
            else { return nil }
            return BridgedActivity(properties)
        }
    }
}

/// One activity object's properties.
struct BridgedActivity: CustomStringConvertible {
    var label = ""
    var kind = ""
    var claimedApplication = ""
    var completed: UInt64 = 0
    var total: UInt64 = 0
    var fraction = -1.0

    init(_ properties: [String: Value]) {
        label = properties["Label"]?.unwrapped?.string ?? ""
        kind = properties["Kind"]?.unwrapped?.string ?? ""
        claimedApplication = properties["ClaimedApplication"]?.unwrapped?.string ?? ""
        completed = properties["Completed"]?.unwrapped?.uint64 ?? 0
        total = properties["Total"]?.unwrapped?.uint64 ?? 0
        fraction = properties["Fraction"]?.unwrapped?.double ?? -1
    }

    var description: String {
        "\(label) [\(kind), \(claimedApplication)] \(completed)/\(total) \(fraction)"
    }
}
