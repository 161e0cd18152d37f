import Foundation

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
public final class PrivateBus: @unchecked Sendable {
    /// The address clients connect to, as printed by the daemon
    /// (`unix:path=/tmp/…/dbus-…,guid=…`).
    public let address: String
    /// The temporary directory holding the configuration and the socket.
    public let directory: String

    private let daemon: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    /// Starts the daemon and waits (up to 10 s) for it to print its address.
    ///
    /// - Parameters:
    ///   - serviceDirectories: directories of `.service` files for activation.
    ///   - environment: added to the daemon's environment, which services it activates inherit
    ///     (`DBUS_SESSION_BUS_ADDRESS` and friends of the test process are removed).
    /// - Throws: `BusTestError` if `dbus-daemon` is not installed (naming the package), exits,
    ///   or prints no address in time; its stderr is in the message.
    public init(serviceDirectories: [String] = [], environment: [String: String] = [:]) throws {
        try requireTool("dbus-daemon")
        directory = try makeTemporaryDirectory()
        do {
            let configuration = directory + "/bus.conf"
            try busConfiguration(socketDirectory: directory, serviceDirectories: serviceDirectories)
                .write(toFile: configuration, atomically: true, encoding: .utf8)
            let daemon = try ChildProcess(
                "dbus-daemon",
                ["--nofork", "--config-file=\(configuration)", "--print-address=1"],
                environment: environment)
            guard let line = try daemon.readLine(timeout: .seconds(10)), !line.isEmpty else {
                let result = try? daemon.waitForExit(timeout: .seconds(5))
                throw BusTestError(
                    "dbus-daemon exited without printing an address: "
                        + (result?.description ?? daemon.stderrText))
            }
            self.daemon = daemon
            address = line
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
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

    /// What the daemon, and every service it activated, printed to stderr so far.
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
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        daemon.send(signal: signal)
        _ = try? daemon.waitForExit(timeout: .seconds(10))
        try? FileManager.default.removeItem(atPath: directory)
    }
}

// MARK: - Configuration

/// A session-type bus configuration with nothing from the system's `session.conf`: no
/// standard service directories, no included files, so tests see only what they set up.
private func busConfiguration(socketDirectory: String, serviceDirectories: [String]) -> String {
    let services = serviceDirectories.map { "  <servicedir>\(escaped($0))</servicedir>\n" }.joined()
    return """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <keep_umask/>
          <listen>unix:dir=\(escaped(socketDirectory))</listen>
          <auth>EXTERNAL</auth>
        \(services)\
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <!-- The limits of the stock session bus: effectively none. -->
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="service_start_timeout">120000</limit>
          <limit name="auth_timeout">240000</limit>
          <limit name="max_completed_connections">100000</limit>
          <limit name="max_incomplete_connections">10000</limit>
          <limit name="max_connections_per_user">100000</limit>
          <limit name="max_pending_service_starts">10000</limit>
          <limit name="max_names_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="max_replies_per_connection">50000</limit>
        </busconfig>

        """
}

private func escaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;")
        .replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;")
}

/// A fresh directory under /tmp (not `$TMPDIR`: a socket path must fit in 108 bytes).
private func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/netactivity-bus-XXXXXX".utf8CString)
    let created = template.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress.flatMap(mkdtemp).map { String(cString: $0) }
    }
    guard let created else {
        throw BusTestError("mkdtemp failed: \(String(cString: strerror(errno)))")
    }
    return created
}
