import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Debian's Chromium, headless, with the extension from `browser-extension/` loaded unpacked
/// and the host installed as a user installs it (`netactivity browser-host
/// --install-manifests`), in a home of its own, reporting to the service's private bus.
///
/// It reaches nothing but 127.0.0.1: every other name resolves to nothing and every other
/// connection goes to a proxy on a closed local port; background networking (updates, sync,
/// metrics) is off. Released, it stops the browser (SIGTERM, then SIGKILL), kills whatever it
/// left running, and removes its home.
final class HeadlessChromium {
    let service: ServiceDaemon
    let probe: ServiceProbe
    let home: String
    private(set) var browser: ChildProcess?
    /// The browser's processes, found while it ran, for the sweep after it.
    private var family: Set<Int32> = []

    init(service: ServiceDaemon) throws {
        self.service = service
        probe = try service.probe()
        home = NSTemporaryDirectory() + "netactivity-chromium-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: userDataDirectory + "/Default", withIntermediateDirectories: true)
        // A page may start more than one download without asking.
        try #"{"profile":{"default_content_setting_values":{"automatic_downloads":1}}}"#
            .write(toFile: userDataDirectory + "/Default/Preferences", atomically: true, encoding: .utf8)
        let installed = try run(
            try builtProduct("netactivity"), ["browser-host", "--install-manifests"], environment: ["HOME": home])
        guard installed.exitStatus == 0 else { throw BusTestError("--install-manifests failed: \(installed)") }
    }

    deinit {
        if let browser, browser.isRunning {
            rememberFamily()
            browser.send(signal: SIGTERM)
            _ = try? browser.waitForExit(timeout: .seconds(10))
        }
        sweep()
        try? FileManager.default.removeItem(atPath: home)
    }

    /// Chromium reads a user's host manifests from its profile: `~/.config/chromium`.
    var userDataDirectory: String { home + "/.config/chromium" }
    var downloads: String { home + "/Downloads" }

    /// Starts the browser on `url`.
    @discardableResult
    func start(_ url: String) throws -> ChildProcess {
        let flags = [
            "--headless=new", "--no-sandbox", "--user-data-dir=\(userDataDirectory)",
            "--load-extension=\(Self.extensionDirectory)",
            "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-dev-shm-usage",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
            "--disable-domain-reliability", "--disable-breakpad", "--no-pings", "--metrics-recording-only",
            "--password-store=basic", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            "--proxy-server=socks5://127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
        ]
        let browser = try ChildProcess(
            "chromium", flags + [url],
            environment: [
                "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_DATA_HOME": home + "/.local/share",
                "XDG_CACHE_HOME": home + "/.cache", "DBUS_SESSION_BUS_ADDRESS": service.address,
            ])
        self.browser = browser
        return browser
    }

    static var extensionDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("browser-extension").path
    }

    // MARK: - What the service shows

    /// Every live activity's properties, by label.
    func activities() throws -> [String: [String: Value]] {
        let reply = try probe.call("GetManagedObjects", interface: .objectManager)
        var result: [String: [String: Value]] = [:]
        for object in reply.first?.elements ?? [] {
            guard case .dictEntry(_, let interfaces) = object,
                let properties = interfaces.stringKeyedEntries?[NetActivityBus.activityInterface.rawValue]?
                    .stringKeyedEntries?.compactMapValues(\.unwrapped),
                let label = properties["Label"]?.string
            else { continue }
            result[label] = properties
        }
        return result
    }

    /// Waits until the activity labelled `label` exists and `condition` holds for it; returns
    /// its properties then.
    @discardableResult
    func waitForActivity(
        _ label: String, _ what: String, timeout: Duration = .seconds(30),
        _ condition: ([String: Value]) -> Bool = { _ in true }
    ) throws -> [String: Value] {
        var seen: [String: Value]?
        var all: [String] = []
        try waitUntil(
            "the activity '\(label)' \(what); saw \(String(describing: seen)) among \(all); downloaded: "
                + "\((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []); browser: \(browserLog)",
            timeout: timeout
        ) {
            let activities = try activities()
            all = activities.keys.sorted()
            seen = activities[label]
            rememberFamily()
            guard let seen else { return false }
            return condition(seen)
        }
        return seen ?? [:]
    }

    /// Waits until the service holds no activity.
    func waitForNoActivity(_ what: String, timeout: Duration = .seconds(30)) throws {
        try waitUntil("no activity \(what); saw \(String(describing: try? activities().keys.sorted()))", timeout: timeout) {
            try probe.count() == 0
        }
    }

    var browserLog: String {
        String((browser?.stderrText ?? "").split(separator: "\n").filter { !$0.contains("bus.cc") }.suffix(15).joined(separator: "\n"))
    }

    // MARK: - Processes

    /// Whether process `pid` has gone: no such process, or a zombie no one reaped yet.
    static func hasGone(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// Adds the browser's descendants now running to `family`.
    func rememberFamily() {
        guard let browser else { return }
        var parents: [Int32: Int32] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry),
                let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("PPid:") }),
                let parent = Int32(line.dropFirst(5).trimmingCharacters(in: .whitespaces))
            else { continue }
            parents[pid] = parent
        }
        var found = family.union([browser.pid])
        var grew = true
        while grew {
            grew = false
            for (pid, parent) in parents where found.contains(parent) && !found.contains(pid) {
                found.insert(pid)
                grew = true
            }
        }
        found.remove(browser.pid)
        family = found
    }

    /// The browser's descendants still running.
    var survivors: [Int32] { family.filter { !Self.hasGone($0) }.sorted() }

    /// Kills every descendant still running, by pid.
    private func sweep() {
        for pid in survivors { kill(pid, SIGKILL) }
    }
}
