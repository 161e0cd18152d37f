import DBus
import Foundation
import PrivateBusLauncher

#if canImport(Glibc)
import Glibc
#endif

/// A private `dbus-daemon` started for one test, never the user's session bus.
///
/// A session-type bus listening on a socket in a fresh temporary directory, EXTERNAL
/// authentication, a policy that allows everything (owning any name, sending, receiving,
/// eavesdropping), the session bus's generous limits, and `<servicedir>` entries for
/// D-Bus activation. Like GLib's `GTestDBus`. Stopped (SIGTERM, reaped, directory removed)
/// by `stop()` or when released.
public final class PrivateBus: Sendable {
    /// The address clients connect to, as printed by the daemon
    /// (`unix:path=/tmp/…/dbus-…,guid=…`).
    public let address: String
    /// The temporary directory holding the configuration and the socket.
    public let directory: String

    private let files: PrivateBusFiles
    private let daemon: ChildProcess
    private let stopped = Locked(false)

    /// Starts the daemon and waits (up to 10 s) for it to print its address.
    ///
    /// - Parameters:
    ///   - serviceDirectories: directories of `.service` files for activation.
    ///   - environment: added to the daemon's environment, which services it activates inherit
    ///     (`DBUS_SESSION_BUS_ADDRESS` and friends of the test process are removed).
    /// - Throws: `BusTestError` if `dbus-daemon` is not installed (naming the package), exits,
    ///   or prints no address in time; its stderr is in the message.
    public convenience init(serviceDirectories: [String] = [], environment: [String: String] = [:]) throws {
        try self.init(environment: environment) { directory in
            privateBusConfiguration(listen: "unix:dir=\(directory)", serviceDirectories: serviceDirectories)
        }
    }

    /// Starts a daemon on the configuration `configuration` returns for the bus's fresh
    /// directory (it may also lay out files there first), and waits (up to 10 s) for its
    /// address. For a bus unlike the session bus, such as one with the system bus's policy.
    ///
    /// - Throws: as `init(serviceDirectories:environment:)`, and what `configuration` throws.
    public init(
        environment: [String: String] = [:], configuration: (_ directory: String) throws -> String
    ) throws {
        try requireTool("dbus-daemon")
        let files = try PrivateBusFiles(configuration: configuration)
        self.files = files
        directory = files.directory
        do {
            let daemon = try ChildProcess("dbus-daemon", files.daemonArguments, environment: environment)
            guard let line = try daemon.readLine(timeout: .seconds(10)), !line.isEmpty else {
                let result = try? daemon.waitForExit(timeout: .seconds(5))
                throw BusTestError(
                    "dbus-daemon exited without printing an address: "
                        + (result?.description ?? daemon.stderrText))
            }
            self.daemon = daemon
            address = line
        } catch {
            files.remove()
            throw error
        }
    }

    deinit {
        stop()
    }

    /// The daemon's process id.
    public var pid: Int32 {
        daemon.pid
    }

    /// Whether the daemon is still running.
    public var isRunning: Bool {
        daemon.isRunning
    }

    /// What the daemon, and every service it activated, printed to stderr so far (policy
    /// files' parse warnings too).
    public var log: String {
        daemon.stderrText
    }

    /// Variables that point clients at this bus as if it were the session bus, for
    /// `busctl --user`, `gdbus … --session`, `dbus-send --session` and libdbus's
    /// `DBUS_BUS_SESSION`.
    public var sessionEnvironment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": address]
    }

    /// Stops the daemon with SIGTERM (SIGKILL if it lingers past 10 s), reaps it and removes
    /// the temporary directory. Safe to call more than once; also called when released.
    public func stop() {
        shutDown(with: SIGTERM)
    }

    /// Kills the daemon with SIGKILL and reaps it: the bus dies under its clients' feet.
    public func kill() {
        shutDown(with: SIGKILL)
    }

    private func shutDown(with signal: Int32) {
        stopped.withLock { stopped in
            guard !stopped else { return }
            stopped = true
            daemon.send(signal: signal)
            _ = try? daemon.waitForExit(timeout: .seconds(10))
            files.remove()
        }
    }
}
