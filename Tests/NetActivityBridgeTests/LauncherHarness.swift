import BusTestSupport
import DBus
import DesktopApplications
import Foundation
import NetActivityContract
import NetActivityTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity bridge --only launcher` (or other sources) on a private session bus with the
/// real netactivityd, and desktop entries of its own: `org.example.Downloader` in its `XDG_DATA_HOME`,
/// `org.example.Player` in its `XDG_DATA_DIRS`, and none for `org.example.Unlisted`.
///
/// Stops the bridge (SIGTERM) and everything else when released.
final class LauncherBridge {
    let service: ServiceDaemon
    let probe: ServiceProbe
    private let dataDirectory: String
    private(set) var bridge: ChildProcess?

    static let downloader = (id: "org.example.Downloader", name: "Test Downloader", icon: "org.example.Downloader-symbolic")
    static let player = (id: "org.example.Player", name: "Test Player", icon: "/opt/example/player.png")
    static let unlisted = "org.example.Unlisted"
    /// An entry that runs this test process's own program, so its calls are that application's.
    static let tester = (id: "org.example.JobTester", name: "Job Tester", icon: "org.example.JobTester")

    init() throws {
        service = try ServiceDaemon()
        probe = try service.probe()
        dataDirectory = NSTemporaryDirectory() + "launcher-\(getpid())-\(UUID().uuidString)"
        try Self.install(Self.downloader, in: dataDirectory + "/home")
        try Self.install(Self.player, in: dataDirectory + "/system")
        try Self.install(Self.tester, in: dataDirectory + "/system", exec: Processes().programName(ofProcess: UInt32(getpid())) ?? "true")
    }

    deinit {
        if let bridge, bridge.isRunning {
            bridge.send(signal: SIGTERM)
            _ = try? bridge.waitForExit(timeout: .seconds(10))
        }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    private static func install(_ entry: (id: String, name: String, icon: String), in directory: String, exec: String = "true") throws {
        let applications = directory + "/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=\(entry.name)\nIcon=\(entry.icon)\nExec=\(exec)\n"
            .write(toFile: applications + "/\(entry.id).desktop", atomically: true, encoding: .utf8)
    }

    var address: String { service.address }

    /// Starts the bridge with the sources `only`; with `waitForName`, waits until it owns
    /// that name (the launcher source asks for `com.canonical.Unity` after subscribing to the
    /// updates, so from then on it hears every one).
    @discardableResult
    func startBridge(
        only sources: String = "launcher", waitForName: Bool = true, name: BusName = "com.canonical.Unity"
    ) throws -> ChildProcess {
        let bridge = try ChildProcess(
            try builtProduct("netactivity"), ["--address", address, "bridge", "--only", sources],
            environment: ["XDG_DATA_HOME": dataDirectory + "/home", "XDG_DATA_DIRS": dataDirectory + "/system"])
        self.bridge = bridge
        if waitForName {
            try waitUntil("the bridge (pid \(bridge.pid)) to own \(name)") {
                guard bridge.isRunning else { throw BusTestError("the bridge exited: \(bridge.stderrText)") }
                return try ownerPID(of: name) == UInt32(bridge.pid)
            }
        }
        return bridge
    }

    /// The process that owns `com.canonical.Unity`, nil while nobody does.
    func unityOwnerPID() throws -> UInt32? {
        try ownerPID(of: "com.canonical.Unity")
    }

    /// The process that owns `name`, nil while nobody does.
    func ownerPID(of name: BusName) throws -> UInt32? {
        guard let owner = try probe.connection.owner(of: name) else { return nil }
        return try probe.connection.processID(of: owner)
    }

    /// Every live activity object's properties, by label.
    func activities() throws -> [String: [String: Value]] {
        try probe.activityObjects()
    }

    /// Waits until the activity labelled `label` exists and `condition` holds for its properties.
    func waitForActivity(
        _ label: String, _ what: String, timeout: Duration = .seconds(10),
        _ condition: ([String: Value]) -> Bool = { _ in true }
    ) throws {
        try waitUntil("the activity '\(label)' \(what)", timeout: timeout) {
            guard let properties = try activities()[label] else { return false }
            return condition(properties)
        }
    }

    /// Waits until the service holds `count` activities.
    func waitForCount(_ count: UInt32, timeout: Duration = .seconds(10)) throws {
        try waitUntil("the service to hold \(count) activities", timeout: timeout) { try probe.count() == count }
    }

    /// `gdbus emit` of an `Update` on this bus: each from a new connection, as gdbus does.
    /// `--session`, not `--address`: with an address gdbus skips `Hello`, and the bus drops
    /// what such a connection sends.
    func gdbusEmit(_ arguments: [String]) throws -> ProcessResult {
        try run(
            "gdbus",
            ["emit", "--session", "--object-path", "/com/canonical/unity/launcherentry/1", "--signal",
             "com.canonical.Unity.LauncherEntry.Update"] + arguments,
            environment: ["DBUS_SESSION_BUS_ADDRESS": address])
    }
}

/// A connection of the test's own that broadcasts `Update` signals, all from one sender.
final class LauncherSender {
    let connection: Connection

    init(address: String) throws {
        connection = try Connection(.address(address))
    }

    /// Queues `Update(application://ID.desktop, properties)`.
    func update(_ id: String, _ properties: [(String, Value)]) throws {
        try update(uri: "application://\(id).desktop", properties)
    }

    func update(uri: String, _ properties: [(String, Value)]) throws {
        try connection.send(
            Message.signal(
                path: "/com/canonical/unity/launcherentry/1", interface: "com.canonical.Unity.LauncherEntry",
                member: "Update", arguments: [.string(uri), .properties(properties)]))
    }

    func flush() { connection.flush() }
}

/// `dbus-monitor` on a bus, for counting what crossed it.
final class BusMonitor {
    let process: ChildProcess

    init(address: String, _ rules: [String]) throws {
        try requireTool("dbus-monitor")
        process = try ChildProcess("dbus-monitor", ["--address", address] + rules + ["type='signal',member='NameAcquired'"])
        try waitUntil("dbus-monitor to connect") { process.stdoutText.contains("NameAcquired") }
    }

    deinit {
        process.send(signal: SIGTERM)
    }

    /// The messages seen so far whose header line contains `text` (`member=Update`).
    func count(_ text: String) -> Int {
        process.stdoutText.split(separator: "\n").filter { !$0.hasPrefix(" ") && $0.contains(text) }.count
    }
}
