import BusTestSupport
import DBus
import Foundation
import PrivateBusLauncher

#if canImport(Glibc)
import Glibc
#endif

/// This machine's GNOME Shell, headless (`--headless --wayland --no-x11`, a virtual monitor,
/// `--unsafe-mode` for `Eval`), with the stack's bus as its session bus and the extension built
/// from `gnome-extension/src` enabled: the panel a GNOME user sees.
///
/// Its home, runtime directory and GSettings (in memory) are its own; an empty bus stands in for
/// the system bus. It dies with its session bus, as a session does, and is started again as a
/// new login would start it (`StackPart`). `menuLines()` opens the indicator's menu, reads its
/// rows and closes it, through `org.gnome.Shell.Eval`.
public final class GnomeShell {
    public static let uuid = "netactivity@netactivity.github.io"
    /// Why the shell cannot run here, or nil.
    public static var unavailable: String? {
        executablePath(for: "gnome-shell") == nil ? "gnome-shell is not installed (make test-gnome installs it)" : nil
    }

    public let home: String
    private let runtime: String
    private let address: String
    private let systemBus: PrivateBus

    /// Builds the extension into `directory` and installs it in a home there.
    public init(directory: String, address: String) throws {
        home = directory + "/gnome-home"
        runtime = directory + "/gnome-runtime"
        self.address = address
        let extensions = home + "/.local/share/gnome-shell/extensions"
        try FileManager.default.createDirectory(atPath: extensions, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        chmod(runtime, 0o700)
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        let built = try run("/usr/bin/python3", [repository + "/gnome-extension/build.py", directory + "/gnome-build"])
        guard built.succeeded else { throw BusTestError("the extension's build failed: \(built)") }
        let version = try run("gnome-shell", ["--version"]).stdout
        let major = Int(version.split(separator: " ").last?.split(separator: ".").first ?? "") ?? 0
        let format = major >= 45 ? "shell45" : "shell43"
        try FileManager.default.copyItem(
            atPath: directory + "/gnome-build/\(format)/\(Self.uuid)", toPath: extensions + "/\(Self.uuid)")
        systemBus = try PrivateBus()
    }

    deinit {
        systemBus.stop()
    }

    /// Starts the shell and waits (up to 30 s) until it answers `Eval` and shows the extension's
    /// button.
    public func launch() throws -> ChildProcess {
        let environment = [
            "HOME": home, "XDG_RUNTIME_DIR": runtime, "LANG": "C.UTF-8", "XDG_CONFIG_HOME": home + "/.config",
            "XDG_DATA_HOME": home + "/.local/share", "XDG_CACHE_HOME": home + "/.cache",
            "DBUS_SESSION_BUS_ADDRESS": address, "DBUS_SYSTEM_BUS_ADDRESS": systemBus.address,
            "GSETTINGS_BACKEND": "memory",
        ]
        let shell = try ChildProcess(
            "gnome-shell", ["--headless", "--wayland", "--no-x11", "--virtual-monitor", "1280x800", "--unsafe-mode"],
            environment: environment)
        try waitUntil("GNOME Shell to answer Eval: \(shell.stderrText.suffix(1000))", timeout: .seconds(30)) {
            guard shell.isRunning else { throw BusTestError("gnome-shell exited: \(shell.stderrText.suffix(2000))") }
            return (try? eval("true")) == "true"
        }
        // GSettings are in memory, so the extension is enabled by asking the shell.
        _ = try call("org.gnome.Shell.Extensions", "EnableExtension", [.string(Self.uuid)])
        try waitUntil("the extension's button in the panel") {
            try eval("Main.panel.statusArea['\(Self.uuid)'] !== undefined") == "true"
        }
        return shell
    }

    /// The indicator menu's rows, read with the menu open; the menu is closed again.
    public func menuLines() throws -> [String] {
        let button = "Main.panel.statusArea['\(Self.uuid)']"
        let text = try eval("(() => { const b = \(button); b.menu.open(false); const t = b.menuText(); b.menu.close(false); return JSON.stringify(t); })()")
        // Eval gives JSON of what the code returned: here a JSON string holding the list.
        guard let outer = try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed) as? String,
            let lines = try JSONSerialization.jsonObject(with: Data(outer.utf8)) as? [String]
        else { throw BusTestError("the menu's text is not a list: \(text)") }
        return lines
    }

    /// `org.gnome.Shell.Eval(code)`: the result as JSON.
    func eval(_ code: String) throws -> String {
        let reply = try call("org.gnome.Shell", "Eval", [.string(code)])
        guard reply.count == 2, case .boolean(true) = reply[0], case .string(let result) = reply[1] else {
            throw BusTestError("Eval failed: \(reply)")
        }
        return result
    }

    private func call(_ interface: String, _ member: String, _ arguments: [Value]) throws -> [Value] {
        let connection = try Connection(.address(address))
        let message = try Message.methodCall(
            destination: "org.gnome.Shell", path: "/org/gnome/Shell", interface: InterfaceName(unchecked: interface),
            member: MemberName(unchecked: member), arguments: arguments)
        return try connection.call(message, timeout: .seconds(10)).arguments()
    }

    /// The processes the shell started that are still running: every one whose HOME is its
    /// own (some, such as ibus-daemon, leave its process tree).
    public var processes: [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { pid in
            guard let environ = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ")) else { return false }
            return environ.split(separator: 0).contains { $0.elementsEqual("HOME=\(home)".utf8) }
        }
    }
}
