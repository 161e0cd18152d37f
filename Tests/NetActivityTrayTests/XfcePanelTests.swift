import BusTestSupport
import DBus
import Foundation
import NetActivityTray
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real tray host: XFCE's panel with its status tray plugin (which owns the
/// StatusNotifierWatcher and draws items) on a headless X server. Opt-in with
/// `NETACTIVITY_TRAY_XVFB=1`; needs the Debian packages xvfb, xfce4-panel and x11-apps, and
/// netpbm to keep PNG screenshots in `$NETACTIVITY_TRAY_SCREENSHOTS` when that is set (the
/// `docs/images/tray-progress-ring.png` in docs/panels.md is cut from `tray-ring-25`, `tray-ring-75` and
/// `tray-theme-icon`).
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .enabled(if: ProcessInfo.processInfo.environment["NETACTIVITY_TRAY_XVFB"] == "1"))
struct XfcePanelTests {
    @Test func theIconAppearsInXfcesTrayWhileActiveAndAfterThePanelRestarts() throws {
        for tool in ["Xvfb", "xfce4-panel", "xwd"] where executablePath(tool) == nil {
            throw BusTestError("\(tool) is not installed; apt-get install xvfb xfce4-panel x11-apps")
        }
        let desktop = try HeadlessDesktop()
        let bus = try TrayOnBus(
            serviceArguments: TrayOnBus.quick,
            bus: try PrivateBus(serviceDirectories: ["/usr/share/dbus-1/services"], environment: desktop.environment))
        var panel = try desktop.startPanel(bus: bus)
        try bus.startTray()
        let item = try bus.itemName
        try waitUntil("xfce4-panel's watcher to list \(item)", timeout: .seconds(20)) {
            try registeredItems(bus).contains { $0.hasPrefix(item.rawValue) }
        }

        // Passive items are hidden: the panel looks as it did before the item came.
        let idle = try desktop.screenshot("idle")
        try bus.callService("Push")
        let observer = try bus.observeItem()
        try observer.wait(for: "Status Active") { try $0.string("Status") == "Active" }
        // Two equal pictures in a row that differ from the idle one: the item, fully drawn.
        var active = idle
        try waitUntil("the panel to draw the item", timeout: .seconds(10)) {
            let previous = active
            active = try desktop.screenshot("active")
            return active != idle && active == previous
        }
        try bus.callService("Pop")
        try waitUntil("the panel to hide the item again", timeout: .seconds(10)) {
            try desktop.screenshot("hidden") == idle
        }

        // A new panel brings a new watcher that knows nothing: the item registers again.
        panel.send(signal: SIGTERM)
        _ = try panel.waitForExit(timeout: .seconds(10))
        try waitUntil("the old watcher to go") { try bus.probe.connection.owner(of: StatusNotifierNames.watcher) == nil }
        panel = try desktop.startPanel(bus: bus)
        try waitUntil("the new watcher to list \(item)", timeout: .seconds(20)) {
            try registeredItems(bus).contains { $0.hasPrefix(item.rawValue) }
        }
        try bus.callService("Push")
        try waitUntil("the restarted panel to draw the item as the first one did", timeout: .seconds(10)) {
            try desktop.screenshot("after-restart") == active
        }
        panel.send(signal: SIGTERM)
        _ = try? panel.waitForExit(timeout: .seconds(10))
    }

    @Test func theProgressRingShowsInXfcesTrayAndTheThemeIconWithoutATotal() throws {
        for tool in ["Xvfb", "xfce4-panel", "xwd"] where executablePath(tool) == nil {
            throw BusTestError("\(tool) is not installed; apt-get install xvfb xfce4-panel x11-apps")
        }
        let desktop = try HeadlessDesktop()
        let bus = try TrayOnBus(
            serviceArguments: TrayOnBus.quick,
            bus: try PrivateBus(serviceDirectories: ["/usr/share/dbus-1/services"], environment: desktop.environment))
        let panel = try desktop.startPanel(bus: bus)
        defer {
            panel.send(signal: SIGTERM)
            _ = try? panel.waitForExit(timeout: .seconds(10))
        }
        try bus.startTray()
        let item = try bus.itemName
        try waitUntil("xfce4-panel's watcher to list \(item)", timeout: .seconds(20)) {
            try registeredItems(bus).contains { $0.hasPrefix(item.rawValue) }
        }
        let idle = try desktop.screenshot("idle")
        let observer = try bus.observeItem()

        let download = try bus.begin("Download")
        try bus.callService("UpdateActivity", [.uint32(download), .uint64(25), .uint64(100)])
        try observer.wait(for: "the ring at 25%") { try $0.string("Status") == "Active" && $0.string("IconName") == "" }
        let quarter = try desktop.settledScreenshot("ring-25", unlike: [idle])

        try bus.callService("UpdateActivity", [.uint32(download), .uint64(75), .uint64(100)])
        try observer.wait(for: "the ring at 75%") { try $0.pixmaps() == ProgressRing.pixmaps(percent: 75) }
        let threeQuarters = try desktop.settledScreenshot("ring-75", unlike: [idle, quarter])

        // No total any more: the theme icon, as a plain Push shows it.
        try bus.callService("UpdateActivity", [.uint32(download), .uint64(0), .uint64(0)])
        try observer.wait(for: "the theme icon") { try $0.string("IconName") == TrayIcons.active }
        let theme = try desktop.settledScreenshot("theme-icon", unlike: [idle, quarter, threeQuarters])
        try bus.callService("Push")
        try bus.callService("EndActivity", [.uint32(download)])
        try waitUntil("the pushed state to look as the unknown progress did", timeout: .seconds(10)) {
            try desktop.screenshot("pushed") == theme
        }
    }

    private func registeredItems(_ bus: TrayOnBus) throws -> [String] {
        let message = try Message.methodCall(
            destination: StatusNotifierNames.watcher, path: StatusNotifierNames.watcherPath, interface: .properties,
            member: "Get",
            arguments: [.string(StatusNotifierNames.watcherInterface.rawValue), .string("RegisteredStatusNotifierItems")])
        let reply = try bus.probe.connection.call(message, timeout: .seconds(10)).arguments()
        return reply.first?.unwrapped?.elements?.compactMap(\.string) ?? []
    }
}

/// An Xvfb display, a throw-away HOME for the XFCE programs, and a panel configuration with the
/// status tray as its only plugin (so nothing else, such as a clock, changes the picture).
private final class HeadlessDesktop {
    let home: String
    let display: String
    private let server: ChildProcess
    private let screenshots = ProcessInfo.processInfo.environment["NETACTIVITY_TRAY_SCREENSHOTS"]

    init() throws {
        home = "/tmp/netactivity-xfce-" + UUID().uuidString
        let channel = home + "/.config/xfce4/xfconf/xfce-perchannel-xml"
        try FileManager.default.createDirectory(atPath: channel, withIntermediateDirectories: true)
        try Self.panelConfiguration.write(toFile: channel + "/xfce4-panel.xml", atomically: true, encoding: .utf8)
        // -displayfd picks a free display and prints its number.
        server = try ChildProcess("Xvfb", ["-displayfd", "1", "-screen", "0", "320x64x24", "-nolisten", "tcp"])
        guard let number = try server.readLine(timeout: .seconds(20)), !number.isEmpty else {
            throw BusTestError("Xvfb printed no display number: \(server.stderrText)")
        }
        display = ":" + number
    }

    deinit {
        server.send(signal: SIGTERM)
        _ = try? server.waitForExit(timeout: .seconds(10))
        try? FileManager.default.removeItem(atPath: home)
    }

    /// What the panel and the programs the bus activates for it (xfconfd) run with.
    var environment: [String: String] {
        [
            "DISPLAY": display, "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_CACHE_HOME": home + "/.cache",
            "XDG_DATA_HOME": home + "/.local/share", "XDG_RUNTIME_DIR": home, "NO_AT_BRIDGE": "1", "GTK_A11Y": "none",
        ]
    }

    func startPanel(bus: TrayOnBus) throws -> ChildProcess {
        let panel = try ChildProcess(
            "xfce4-panel", ["--disable-wm-check"],
            environment: environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 })
        try waitUntil("xfce4-panel's status tray to own \(StatusNotifierNames.watcher)", timeout: .seconds(30)) {
            guard panel.isRunning else { throw BusTestError("xfce4-panel exited: \(panel.stderrText)") }
            return try bus.probe.connection.owner(of: StatusNotifierNames.watcher) != nil
        }
        return panel
    }

    /// The whole screen as xwd's dump; also kept as a PNG where screenshots are asked for.
    func screenshot(_ name: String) throws -> Data {
        let file = home + "/screen.xwd"
        let result = try run("xwd", ["-root", "-silent", "-display", display, "-out", file], timeout: .seconds(20))
        guard result.succeeded else { throw BusTestError("xwd failed: \(result)") }
        let dump = try Data(contentsOf: URL(fileURLWithPath: file))
        if let screenshots, executablePath("xwdtopnm") != nil, executablePath("pnmtopng") != nil {
            _ = try run("sh", ["-c", "xwdtopnm 2>/dev/null < \"$0\" | pnmtopng > \"$1\"", file, screenshots + "/tray-\(name).png"])
        }
        return dump
    }

    /// Waits until the panel has drawn something new: two equal pictures in a row that differ
    /// from every one of `earlier`.
    func settledScreenshot(_ name: String, unlike earlier: [Data], timeout: Duration = .seconds(10)) throws -> Data {
        var latest = Data()
        try waitUntil("the panel to draw \(name)", timeout: timeout) {
            let previous = latest
            latest = try screenshot(name)
            return !earlier.contains(latest) && latest == previous
        }
        return latest
    }

    private static let panelConfiguration = """
        <?xml version="1.0" encoding="UTF-8"?>
        <channel name="xfce4-panel" version="1.0">
          <property name="configver" type="int" value="2"/>
          <property name="panels" type="array">
            <value type="int" value="1"/>
            <property name="panel-1" type="empty">
              <property name="position" type="string" value="p=6;x=0;y=0"/>
              <property name="length" type="uint" value="100"/>
              <property name="position-locked" type="bool" value="true"/>
              <property name="size" type="uint" value="48"/>
              <property name="plugin-ids" type="array">
                <value type="int" value="1"/>
              </property>
            </property>
          </property>
          <property name="plugins" type="empty">
            <property name="plugin-1" type="string" value="systray"/>
          </property>
        </channel>

        """
}

private func executablePath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}
