import BusTestSupport
import DBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The real `packagekitd` (Debian's `packagekit`) on a private bus that stands for the system
/// bus, authorised by python-dbusmock's `polkitd` template, driven by the real `pkcon`
/// (`packagekit-tools`).
///
/// packagekitd runs as root in a mount namespace of its own (`unshare --mount`) in which what
/// it writes is temporary directories bound over the real ones, so the machine's are never
/// written: with the dummy backend `/var/lib/PackageKit` (its transaction database) and
/// `/var/cache/PackageKit`; with the apt backend also `/etc/apt` (sources naming only the
/// test's repository), `/var/lib/apt`, `/var/lib/dpkg` (an empty status: nothing installed, no
/// lock shared with the machine's apt) and the whole of `/var/cache`. GSettings (which pkcon and
/// packagekitd would write through dconf to `~/.cache`) is kept in memory. Everything is
/// stopped when the object is released.
public final class PackageKitDaemon: Sendable {
    /// The bus packagekitd and polkit are on: the bridge's `--system-address`.
    public let bus: PrivateBus
    public let directory: String
    private let polkit: ChildProcess
    private let daemon = Locked<ChildProcess?>(nil)

    public static let packagekitd = "/usr/libexec/packagekitd"

    /// Which of packagekitd's backends runs.
    public enum Backend: Sendable {
        /// Debian's `dummy`: invented packages, timed steps, no network.
        case dummy
        /// The real apt backend, with `sources` as its only `sources.list`.
        case apt(sources: String)
    }
    public let backend: Backend
    public static let name: BusName = "org.freedesktop.PackageKit"

    /// Why these tests cannot run here, or nil. Only what a machine may truly lack: a missing
    /// package is an error (`make test` installs them), so is anything else that fails.
    public static let unavailable: String? = {
        guard geteuid() == 0 else { return "packagekitd runs as root and these tests are not root" }
        let probe = try? run("unshare", ["--mount", "true"])
        guard probe?.succeeded == true else {
            return "`unshare --mount` is not permitted here (\(probe?.stderr.trimmingCharacters(in: .whitespacesAndNewlines) ?? "no unshare")): "
                + "packagekitd cannot get private state directories"
        }
        return nil
    }()

    /// Starts the bus and the polkit stand-in, then packagekitd unless `startDaemon` is false.
    public init(startDaemon: Bool = true, backend: Backend = .dummy) throws {
        self.backend = backend
        for tool in ["unshare", "pkcon", "/usr/bin/python3", Self.packagekitd] where !isInstalled(tool) {
            throw BusTestError("\(tool) is not installed; `make deps` installs packagekit, packagekit-tools, python3-dbusmock")
        }
        bus = try PrivateBus()
        directory = bus.directory + "/packagekit"
        var directories = ["", "/lib", "/cache", "/home"]
        if case .apt = backend {
            directories += [
                "/etc-apt/apt.conf.d", "/etc-apt/preferences.d", "/etc-apt/sources.list.d", "/etc-apt/trusted.gpg.d",
                "/lib-apt/lists/partial", "/lib-dpkg/updates", "/lib-dpkg/info", "/cache/apt/archives/partial",
                "/cache/PackageKit/downloads",
            ]
        }
        for sub in directories {
            try FileManager.default.createDirectory(atPath: directory + sub, withIntermediateDirectories: true)
        }
        if case .apt(let sources) = backend {
            try sources.write(toFile: directory + "/etc-apt/sources.list", atomically: true, encoding: .utf8)
            try "".write(toFile: directory + "/lib-dpkg/status", atomically: true, encoding: .utf8)
        }
        polkit = try ChildProcess(
            "/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "polkitd"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        let probe = try Connection(.address(bus.address))
        try waitUntil("python-dbusmock's polkitd to own org.freedesktop.PolicyKit1", timeout: .seconds(20)) {
            guard polkit.isRunning else { throw BusTestError("polkitd stand-in exited: \(polkit.stderrText)") }
            return try probe.owner(of: "org.freedesktop.PolicyKit1") != nil
        }
        _ = try probe.call(
            Message.methodCall(
                destination: "org.freedesktop.PolicyKit1", path: "/org/freedesktop/PolicyKit1/Authority",
                interface: "org.freedesktop.DBus.Mock", member: "AllowUnknown", arguments: [.boolean(true)]))
        if startDaemon { try start() }
    }

    deinit {
        if let daemon = daemon.withLock({ $0 }), daemon.isRunning {
            daemon.send(signal: SIGTERM)
            if (try? daemon.waitForExit(timeout: .seconds(5))) == nil { daemon.send(signal: SIGKILL) }
        }
        polkit.send(signal: SIGTERM)
        _ = try? polkit.waitForExit(timeout: .seconds(5))
        bus.stop()
    }

    /// What the programs run here get: the bus as the system bus, GSettings in memory, a home
    /// of their own.
    public var environment: [String: String] {
        [
            "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "GSETTINGS_BACKEND": "memory", "HOME": directory + "/home",
            "XDG_CACHE_HOME": directory + "/home/.cache", "LANG": "C",
        ]
    }

    /// Starts packagekitd (again) and waits until it owns its name.
    public func start() throws {
        let script: String
        switch backend {
        case .dummy:
            script = """
                mount --bind "$1/lib" /var/lib/PackageKit && mount --bind "$1/cache" /var/cache/PackageKit \
                && exec \(Self.packagekitd) --backend=dummy --disable-timer --keep-environment
                """
        case .apt:
            script = """
                mount --bind "$1/lib" /var/lib/PackageKit && mount --bind "$1/cache" /var/cache \
                && mount --bind "$1/etc-apt" /etc/apt && mount --bind "$1/lib-apt" /var/lib/apt \
                && mount --bind "$1/lib-dpkg" /var/lib/dpkg \
                && exec \(Self.packagekitd) --backend=apt --disable-timer --keep-environment
                """
        }
        let process = try ChildProcess(
            "unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "sh", directory],
            environment: environment)
        daemon.withLock { $0 = process }
        let probe = try Connection(.address(bus.address))
        try waitUntil("packagekitd to own \(Self.name)", timeout: .seconds(20)) {
            guard process.isRunning else { throw BusTestError("packagekitd exited: \(process.stderrText)") }
            return try probe.owner(of: Self.name) != nil
        }
    }

    /// Kills packagekitd with SIGKILL and waits until the bus has seen it go.
    public func kill() throws {
        guard let process = daemon.withLock({ $0 }) else { return }
        process.send(signal: SIGKILL)
        _ = try process.waitForExit(timeout: .seconds(10))
        let probe = try Connection(.address(bus.address))
        try waitUntil("packagekitd to leave the bus") { try probe.owner(of: Self.name) == nil }
    }

    /// `pkcon ARGUMENTS` started on this bus and left running; in packagekitd's mount
    /// namespace when `inItsNamespace` (`pkcon download` copies from packagekitd's apt cache).
    public func pkcon(_ arguments: [String], inItsNamespace: Bool = false) throws -> ChildProcess {
        guard inItsNamespace, let daemon = daemon.withLock({ $0 }) else {
            return try ChildProcess("pkcon", arguments, environment: environment)
        }
        return try ChildProcess(
            "nsenter", ["--target", "\(daemon.pid)", "--mount", "pkcon"] + arguments, environment: environment)
    }

    /// What packagekitd printed, for failure messages.
    public var log: String { daemon.withLock { $0?.stderrText ?? "" } }
}

private func isInstalled(_ tool: String) -> Bool {
    if tool.contains("/") { return access(tool, X_OK) == 0 }
    return (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
        access("\($0)/\(tool)", X_OK) == 0
    }
}
