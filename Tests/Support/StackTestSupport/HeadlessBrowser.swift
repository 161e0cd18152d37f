import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Debian's Chromium or Firefox ESR, headless, with the extension from `browser-extension/`
/// loaded (Chromium: unpacked from its command line; Firefox: as a temporary add-on through
/// Marionette, by `marionette.py`) and the host installed as a user installs it (`netactivity
/// browser-host --install-manifests`), in a home of its own, reporting to the service's
/// private bus.
///
/// It reaches nothing but 127.0.0.1: every other connection goes to a SOCKS proxy on a closed
/// local port (Chromium also resolves no other name); background networking (updates, sync,
/// metrics, safe browsing) is off. Released, it stops the browser (SIGTERM, then SIGKILL), kills
/// whatever the browser left running, and removes its home.
public final class HeadlessBrowser {
    public enum Kind: Sendable, CustomStringConvertible {
        case chromium, firefox

        public var description: String {
            switch self {
            case .chromium: "chromium"
            case .firefox: "firefox"
            }
        }
    }

    public let kind: Kind
    /// The bus the host reports to, as the browser's session bus.
    public let address: String
    public let probe: ServiceProbe
    public let home: String
    public private(set) var browser: ChildProcess?
    /// The browser's processes, found while it ran, for the sweep after it.
    private var family: Set<Int32> = []

    public convenience init(_ kind: Kind, service: ServiceDaemon) throws {
        try self.init(kind, address: service.address)
    }

    /// A browser whose host reports to the bus at `address`.
    public init(_ kind: Kind, address: String) throws {
        self.kind = kind
        self.address = address
        probe = try ServiceProbe(address: address)
        home = NSTemporaryDirectory() + "netactivity-\(kind)-\(getpid())-\(UUID().uuidString.prefix(8))"
        switch kind {
        case .chromium:
            try FileManager.default.createDirectory(atPath: userDataDirectory + "/Default", withIntermediateDirectories: true)
            // A page may start more than one download without asking.
            try #"{"profile":{"default_content_setting_values":{"automatic_downloads":1}}}"#
                .write(toFile: userDataDirectory + "/Default/Preferences", atomically: true, encoding: .utf8)
        case .firefox:
            try FileManager.default.createDirectory(atPath: firefoxProfile, withIntermediateDirectories: true)
            try Self.firefoxPreferences(downloads: downloads)
                .write(toFile: firefoxProfile + "/user.js", atomically: true, encoding: .utf8)
        }
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
    public var userDataDirectory: String { home + "/.config/chromium" }
    /// Firefox reads them from `~/.mozilla/native-messaging-hosts`, whatever the profile.
    public var firefoxProfile: String { home + "/firefox-profile" }
    public var downloads: String { home + "/Downloads" }

    /// The browser's desktop id on Debian, and the icon its entry names.
    public var desktopID: String {
        switch kind {
        case .chromium: "chromium"
        case .firefox: "firefox-esr"
        }
    }

    /// Starts the browser with the extension and opens `urls`, each in a tab of its own
    /// (headless Chromium opens one only).
    @discardableResult
    public func start(_ urls: [String]) throws -> ChildProcess {
        switch kind {
        case .chromium:
            guard urls.count == 1 else { throw BusTestError("headless Chromium opens one URL, not \(urls)") }
            return try startChromium(urls[0])
        case .firefox:
            return try startFirefox(urls)
        }
    }

    private var environment: [String: String] {
        [
            "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_DATA_HOME": home + "/.local/share",
            "XDG_CACHE_HOME": home + "/.cache", "DBUS_SESSION_BUS_ADDRESS": address,
        ]
    }

    private func startChromium(_ url: String) throws -> ChildProcess {
        let flags = [
            "--headless=new", "--no-sandbox", "--user-data-dir=\(userDataDirectory)",
            "--load-extension=\(Self.extensionDirectory)",
            "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-dev-shm-usage",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
            "--disable-domain-reliability", "--disable-breakpad", "--no-pings", "--metrics-recording-only",
            "--password-store=basic", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            "--proxy-server=socks5://127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
        ]
        let browser = try ChildProcess("chromium", flags + [url], environment: environment)
        self.browser = browser
        return browser
    }

    /// Firefox with Marionette on a port of its choosing, then `marionette.py` installs the
    /// extension as a temporary add-on and opens `urls`.
    private func startFirefox(_ urls: [String]) throws -> ChildProcess {
        let browser = try ChildProcess(
            "firefox-esr", ["--headless", "--marionette", "--no-remote", "--profile", firefoxProfile],
            environment: environment)
        self.browser = browser
        let driver = try run(
            "python3", [Self.testsDirectory + "/marionette.py", firefoxProfile, Self.extensionDirectory] + urls,
            timeout: .seconds(90))
        guard driver.exitStatus == 0 else { throw BusTestError("marionette.py failed: \(driver)\nbrowser: \(browserLog)") }
        return browser
    }

    /// Firefox's preferences: Marionette on any free port, downloads saved without asking, and
    /// nothing but 127.0.0.1 reached.
    public static func firefoxPreferences(downloads: String) -> String {
        let preferences: [(String, String)] = [
            ("marionette.port", "0"),
            ("browser.download.dir", "\"\(downloads)\""), ("browser.download.folderList", "2"),
            ("browser.download.useDownloadDir", "true"), ("browser.download.always_ask_before_handling_new_types", "false"),
            // A page may start more than one download without asking.
            ("browser.download.enable_spam_prevention", "false"),
            ("network.proxy.type", "1"), ("network.proxy.socks", "\"127.0.0.1\""), ("network.proxy.socks_port", "9"),
            ("network.proxy.socks_remote_dns", "true"), ("network.dns.disablePrefetch", "true"),
            ("network.captive-portal-service.enabled", "false"), ("network.connectivity-service.enabled", "false"),
            ("app.update.enabled", "false"), ("app.normandy.enabled", "false"), ("extensions.update.enabled", "false"),
            ("browser.shell.checkDefaultBrowser", "false"), ("browser.startup.homepage_override.mstone", "\"ignore\""),
            ("toolkit.telemetry.enabled", "false"), ("datareporting.policy.dataSubmissionEnabled", "false"),
            ("browser.safebrowsing.malware.enabled", "false"), ("browser.safebrowsing.phishing.enabled", "false"),
            ("browser.safebrowsing.downloads.enabled", "false"), ("services.settings.server", "\"http://127.0.0.1:9/v1\""),
        ]
        return preferences.map { "user_pref(\"\($0.0)\", \($0.1));\n" }.joined()
    }

    public static var testsDirectory: String { URL(fileURLWithPath: #filePath).deletingLastPathComponent().path }

    public static var extensionDirectory: String {
        URL(fileURLWithPath: testsDirectory).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("browser-extension").path
    }

    // MARK: - What the service shows

    /// Every live activity's properties, by label.
    public func activities() throws -> [String: [String: Value]] {
        try probe.activityObjects()
    }

    /// Waits until the activity labelled `label` exists and `condition` holds for it; returns
    /// its properties then.
    @discardableResult
    public func waitForActivity(
        _ label: String, _ what: String, timeout: Duration = .seconds(30),
        _ condition: ([String: Value]) -> Bool = { _ in true }
    ) throws -> [String: Value] {
        var seen: [String: Value]?
        var all: [String] = []
        try waitUntil(
            "the activity '\(label)' \(what); saw \(String(describing: seen)) among \(all); downloaded: "
                + "\(downloadedFiles); browser: \(browserLog)",
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
    public func waitForNoActivity(_ what: String, timeout: Duration = .seconds(30)) throws {
        try waitUntil("no activity \(what); saw \(String(describing: try? activities().keys.sorted()))", timeout: timeout) {
            try probe.count() == 0
        }
    }

    /// The files in `downloads` with their sizes, for failure messages.
    public var downloadedFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).sorted().map { name in
            let size = (try? FileManager.default.attributesOfItem(atPath: downloads + "/" + name)[.size] as? Int) ?? nil
            return "\(name) \(size.map(String.init) ?? "?")"
        }
    }

    public var browserLog: String {
        String((browser?.stderrText ?? "").split(separator: "\n").filter { !$0.contains("bus.cc") }.suffix(15).joined(separator: "\n"))
    }

    // MARK: - Processes

    /// Whether process `pid` has gone: no such process, or a zombie no one reaped yet.
    public static func hasGone(_ pid: Int32) -> Bool {
        StackTestSupport.hasGone(pid)
    }

    /// Adds the browser's descendants now running to `family`.
    public func rememberFamily() {
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
        // Chromium's crash handler leaves the tree at once (it forks twice): it is found by
        // the profile it names.
        for pid in parents.keys where !family.contains(pid) {
            if let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8), command.contains(home) {
                family.insert(pid)
            }
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
    public var survivors: [Int32] { family.filter { !Self.hasGone($0) }.sorted() }

    /// Kills every descendant still running, by pid.
    private func sweep() {
        for pid in survivors { kill(pid, SIGKILL) }
    }
}
