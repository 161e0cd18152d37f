import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityContract
import NetActivityTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The whole desktop stack on one private session bus, as a user's session runs it:
///
/// - `netactivityd`, started by D-Bus activation (`StackBus`);
/// - `netactivity bridge` with every default source, in the client namespace of a
///   `TrafficNetwork` (its interfaces are the ones the traffic source counts), PackageKit's
///   system bus being the real `packagekitd` (dummy backend) on a bus of its own;
/// - `netactivity tray`;
/// - the browser extension in headless Chromium, whose native host reports a download from a
///   `SlowFileServer` on 127.0.0.1;
/// - two watchers, `netactivity watch --format json` and a GLib client (`StackWatcher`);
/// - GNOME Shell with the extension, headless, where one is installed (`GnomeShell`);
/// - the sources' clients: a real libunity app (the launcher API), bash with the shell hook
///   running a matched command, curl in an app scope paced through the traffic source, a KDE
///   program's copy job served by the bridge's plasma-jobs source (`KDEJobApp`), and a library
///   client of the test's own;
///
/// Released, it stops everything it started, removes the namespaces and cgroup, and checks
/// nothing it started is left running (`leftovers`).
public final class Stack {
    public let directory: String
    public let bus: StackBus
    public let packageKit: PackageKitDaemon
    public let network: TrafficNetwork
    public let pacing: PacingServer
    public let fetcherScope: AppScope
    public let copierScope: AppScope
    public let files: SlowFileServer
    public let stalled: SlowFileServer.File
    public private(set) var bridge: StackPart!
    public private(set) var tray: StackPart!
    public private(set) var shell: StackPart!
    public private(set) var launcherApp: StackPart!
    public private(set) var transfer: StackPart!
    /// The KDE program whose jobs the bridge serves (`KDEJobApp`).
    public private(set) var kdeJobs: StackPart!
    /// GNOME Shell with the extension, where one runs (`GnomeShell`).
    public private(set) var gnomeShell: StackPart?
    public private(set) var gnome: GnomeShell?
    public private(set) var browser: HeadlessBrowser!
    /// The browsers killed so far, kept until the end so their leftovers can be looked for.
    public private(set) var killedBrowsers: [HeadlessBrowser] = []
    public private(set) var watchers: [StackWatcher] = []
    public let client: NetActivityClient
    public let held: Activity
    /// What `held` reported last.
    public private(set) var heldProgress: (completed: UInt64, total: UInt64) = (100, 1_000_000)
    /// Every `completed` `held` ever reported.
    private(set) var heldReports: Set<UInt64> = [100]
    /// The states that never existed which a watcher showed, whenever it was.
    public var watcherProblems: [String] = []
    /// The labels of the KDE program's short jobs each watcher showed, whenever it was.
    public internal(set) var shownMoves: [StackWatcher.Kind: Set<String>] = [:]
    /// Labels beginning with these come and go (the soak's short-lived clients).
    public var transientPrefixes: [String] = []
    /// Every process id a part of the stack ever had, for the check that none is left.
    private var everyPID: Set<Int32> = []

    // MARK: - What the sources show

    /// The desktop entries the stack's apps have, in the bridge's `XDG_DATA_HOME`.
    public static let fetcher = (id: "org.example.Fetcher", name: "Fetcher")
    public static let downloader = (id: "org.example.Downloader", name: "Test Downloader")
    public static let copier = (id: "org.example.Copier", name: "Copier")
    /// The command the shell runs, matched by its hook (`NETACTIVITY_SHELL_COMMANDS`).
    public static let shellCommand = "sleep 86400"
    /// The labels PackageKit's transactions may show (docs/bridges.md).
    public static let packageKitLabels: Set<String> = [
        "Refreshing package lists", "Downloading updates", "Downloading a system upgrade", "Checking for updates",
        "Checking for system upgrades", "Downloading packages", "Repairing packages", "Downloading package information",
    ]
    /// The rate the traffic source's transfer is paced at: above its threshold (256 kB in 2 s).
    public static let transferRate = 400_000

    // MARK: - Starting

    /// The steps the libunity app takes (`LibunityApp`), one each time it is sent SIGUSR1.
    private let launcherSteps: [String]
    /// The page the browser opens.
    private let page: String
    private let withGnomeShell: Bool

    /// Starts every part and waits until each shows what it should (`check()` passes), up to
    /// `timeout`. For a soak, `downloads` more files (`churn-N.bin`, 1 MiB each) are
    /// downloaded one every `downloadEvery` seconds, and the launcher app takes
    /// `launcherSteps`, of which the first and the last must be progress 0.25 shown.
    public init(
        timeout: Duration = .seconds(60), downloads: Int = 0, downloadEvery: Int = 20,
        launcherSteps: [String] = ["progress=0.25,visible=1"], withGnomeShell: Bool = GnomeShell.unavailable == nil
    ) throws {
        self.launcherSteps = launcherSteps
        self.withGnomeShell = withGnomeShell
        directory = "/tmp/na-stack-\(getpid())-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory + "/data/applications", withIntermediateDirectories: true)
        for (id, name) in [Self.fetcher, Self.downloader, Self.copier] {
            try "[Desktop Entry]\nType=Application\nName=\(name)\nIcon=\(id)\nExec=\(name.lowercased())\n".write(
                toFile: directory + "/data/applications/\(id).desktop", atomically: true, encoding: .utf8)
        }
        bus = try StackBus(directory: directory, serviceArguments: [])
        packageKit = try PackageKitDaemon()
        network = try TrafficNetwork()
        pacing = try PacingServer(in: network)
        fetcherScope = try AppScope(desktopID: Self.fetcher.id)
        copierScope = try AppScope(desktopID: Self.copier.id)
        stalled = SlowFileServer.File(name: "stalled.bin", size: 8 << 20, sendsLength: true)
        stalled.allow(256 << 10)
        let churn = (0..<downloads).map { SlowFileServer.File(name: String(format: "churn-%04d.bin", $0), size: 1 << 20, sendsLength: true) }
        for file in churn { file.finish() }
        files = try SlowFileServer([stalled] + churn)
        page = downloads > 0 ? "paced.html?every=\(downloadEvery)" : stalled.name
        client = NetActivityClient(bus: .address(bus.address), problems: { _ in })
        held = client.begin("held", hints: ActivityHints(kind: .download))
        held.report(completed: heldProgress.completed, total: heldProgress.total)
        do {
            try startParts()
            try waitUntilRecovered(timeout: timeout)
        } catch {
            let failure = BusTestError("\(error)\n\(diagnostics)")
            stopAll()
            throw failure
        }
    }

    deinit {
        stopAll()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func startParts() throws {
        let netactivity = try builtProduct("netactivity")
        let address = bus.address
        let environment = ["XDG_DATA_HOME": directory + "/data", "XDG_DATA_DIRS": directory + "/data"]
        let (network, systemBus) = (network, packageKit.bus.address)
        // Every default source; with no plasmashell on the bus, plasma-jobs serves KDE's job views,
        // and its client (`KDEJobApp`) is started below with the others.
        bridge = try StackPart("bridge", restart: .onFailure) {
            try ChildProcess(
                "nsenter",
                network.enter(network.client, [netactivity, "--address", address, "--system-address", systemBus, "bridge"]),
                environment: environment)
        }
        tray = try StackPart("tray", restart: .onFailure) {
            try ChildProcess(netactivity, ["--address", address, "tray"])
        }
        watchers = [
            try StackWatcher(.json, address: address, directory: directory),
            try StackWatcher(.glib, address: address, directory: directory),
        ]
        try startBrowser()
        if withGnomeShell {
            let shell = try GnomeShell(directory: directory, address: address)
            gnome = shell
            gnomeShell = try StackPart("gnome-shell", restart: .always) { try shell.launch() }
        }

        // MARK: The sources' clients
        let home = directory
        shell = try StackPart("shell", restart: .always) {
            let script = """
                export NETACTIVITY_SHELL_COMMANDS='sleep=download'
                eval "$('\(netactivity)' shell-init bash --address '\(address)')"
                \(Self.shellCommand)

                """
            return try ChildProcess("bash", ["--norc", "--noprofile", "-i"], environment: ["HOME": home], input: script)
        }
        let steps = launcherSteps
        launcherApp = try StackPart("launcher app", restart: .always) {
            try LibunityApp(Self.downloader.id, steps: steps, address: address).process
        }
        let url = PacingServer.url(bytes: 4_000_000_000, rate: Self.transferRate)
        let scope = fetcherScope
        transfer = try StackPart("transfer", restart: .always) {
            try ChildProcess(
                "sh", scope.run(["nsenter"] + network.enter(network.client, ["curl", "-sS", "-o", "/dev/null", url])))
        }
        let copier = copierScope
        kdeJobs = try StackPart("KDE job app", restart: .always) {
            try KDEJobApp.launch(Self.copier.id, address: address, scope: copier)
        }
        for part in parts { everyPID.insert(part.pid) }
    }

    /// A new headless Chromium downloading the stalled file.
    public func startBrowser() throws {
        let browser = try HeadlessBrowser(.chromium, address: bus.address)
        try browser.start([files.url(page)])
        self.browser = browser
        everyPID.insert(browser.browser?.pid ?? 0)
    }

    /// The long-lived parts the stack starts again.
    public var parts: [StackPart] { [bridge, tray, shell, launcherApp, transfer, kdeJobs, gnomeShell].compactMap { $0 } }

    // MARK: - Driving

    /// Reports new progress on the test's own activity.
    public func reportHeld(completed: UInt64) {
        heldProgress.completed = completed
        heldReports.insert(completed)
        held.report(completed: completed, total: heldProgress.total)
    }

    /// Starts the parts that ended as their rules say, and remembers their new pids. A browser
    /// that ended is started again, as its user would (Chromium ends with its session bus).
    public func supervise() throws {
        for part in parts where try part.supervise() {
            everyPID.insert(part.pid)
        }
        if let browser, let process = browser.browser, !process.isRunning {
            let result = try process.waitForExit(timeout: .seconds(5))
            browserEndings.append(result.signal.map { "signal \($0)" } ?? "exit \(result.exitStatus ?? -1)")
            killedBrowsers.append(browser)
            try startBrowser()
        }
    }

    /// How each browser that ended on its own did, in order.
    public private(set) var browserEndings: [String] = []

    /// Kills the browser (the browser process alone, as a crash would) and starts another.
    public func killBrowser() throws -> [Int32] {
        guard let browser, let process = browser.browser else { return [] }
        browser.rememberFamily()
        let family = browser.survivors
        process.send(signal: SIGKILL)
        _ = try process.waitForExit(timeout: .seconds(10))
        killedBrowsers.append(browser)
        try startBrowser()
        return family
    }

    // MARK: - Stopping

    private func stopAll() {
        for watcher in watchers { watcher.process.send(signal: SIGKILL) }
        watchers = []
        for part in parts { part.stop() }
        for pid in gnome?.processes ?? [] { kill(pid, SIGKILL) }
        browser = nil
        killedBrowsers = []
        held.end()
        bus.stop()
    }

    /// Stops everything and returns what is still running of it after `grace`: every pid any
    /// part ever had, the services the bus activated and the browsers' processes.
    public func stopAndFindLeftovers(grace: Duration = .seconds(10)) throws -> [String] {
        let services = serviceProcesses
        let browsers = ([browser] + killedBrowsers).compactMap { $0 }
        for browser in browsers { browser.rememberFamily() }
        let family = browsers.flatMap(\.survivors)
        let gnomeProcesses = gnome?.processes ?? []
        stopAll()
        let all = everyPID.union(services).union(family).union(gnomeProcesses)
        var left: [Int32] = []
        try? waitUntil("", timeout: grace) {
            left = all.filter { !hasGone($0) }.sorted()
            return left.isEmpty
        }
        return left.map { "\($0) \((try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8))?.replacingOccurrences(of: "\0", with: " ") ?? "?")" }
    }

    /// The pids of every netactivityd the bus started and this stack saw.
    public private(set) var serviceProcesses: Set<Int32> = []

    func noteService(_ pid: Int32) { serviceProcesses.insert(pid) }
    func noteProcess(_ pid: Int32) { everyPID.insert(pid) }

    /// The logs of every part, for failure messages.
    public var diagnostics: String {
        var text = "--- bus and activated services ---\n\(bus.log.suffix(3000))\n"
        for part in parts {
            text += "--- \(part.name) (pid \(part.pid), endings \(part.endings)) ---\n\(part.process.stderrText.suffix(2000))\n"
        }
        if let browser, let pid = browser.browser?.pid {
            let processes = descendantsOf(pid).map { pid in
                "\(pid) " + ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "?")
                    .replacingOccurrences(of: "\0", with: " ").prefix(100)
            }
            text += "--- browser (pid \(pid)) ---\n\(browser.browserLog)\n\(processes.joined(separator: "\n"))\n"
        }
        for watcher in watchers { text += "--- \(watcher.kind) watcher ---\n\(watcher.process.stderrText.suffix(1500))\n" }
        return text
    }
}
