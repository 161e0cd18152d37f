import BusTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private `dbus-daemon` configured like the system bus, with the project's policy file.
///
/// `<type>system</type>`, EXTERNAL authentication, and the default policy of the stock
/// `/usr/share/dbus-1/system.conf`: owning names and sending method calls denied, signals and
/// requested replies allowed, the bus driver reachable; then `dbus/<name>.conf` from the
/// repository, included as the system bus includes `system.d/`. Extra policy files (an admin's
/// local additions) go in `includeDirectory`. The socket lives in a directory every user may
/// enter, so a client running as `nobody` reaches it. Stopped when released.
final class SystemPolicyBus: @unchecked Sendable {
    /// The address clients connect to.
    let address: String
    /// Holds the configuration, the socket and `system.d/`.
    let directory: String
    /// Read by the daemon after the project's policy, like `/etc/dbus-1/system.d`.
    var includeDirectory: String { directory + "/system.d" }

    private let daemon: ChildProcess

    /// Starts the daemon and waits for its address.
    ///
    /// - Parameter extraPolicies: file name to contents, written to `includeDirectory` first.
    init(policyFile: String, extraPolicies: [String: String] = [:]) throws {
        try requireTool("dbus-daemon")
        directory = "/tmp/netactivity-sysbus-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(
            atPath: directory + "/system.d", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        do {
            // createDirectory's permissions go through the umask; nobody must reach the socket.
            _ = chmod(directory, 0o755)
            for (name, text) in extraPolicies {
                try text.write(toFile: directory + "/system.d/" + name, atomically: true, encoding: .utf8)
            }
            let configuration = directory + "/system.conf"
            try systemBusConfiguration(directory: directory, policyFile: policyFile)
                .write(toFile: configuration, atomically: true, encoding: .utf8)
            let daemon = try ChildProcess(
                "dbus-daemon", ["--nofork", "--config-file=\(configuration)", "--print-address=1"])
            guard let line = try daemon.readLine(timeout: .seconds(10)), !line.isEmpty else {
                let result = try? daemon.waitForExit(timeout: .seconds(5))
                throw BusTestError(
                    "dbus-daemon exited without printing an address: " + (result?.description ?? daemon.stderrText))
            }
            self.daemon = daemon
            address = line
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// What the daemon printed to stderr: policy parse warnings land here.
    var log: String { daemon.stderrText }

    deinit {
        daemon.send(signal: SIGTERM)
        _ = try? daemon.waitForExit(timeout: .seconds(10))
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// The stock system bus configuration, minus what a test cannot or need not do (run as
/// messagebus, fork, syslog, activation helper), listening in `directory`.
private func systemBusConfiguration(directory: String, policyFile: String) -> String {
    """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>system</type>
      <auth>EXTERNAL</auth>
      <listen>unix:path=\(directory)/system_bus_socket</listen>

      <!-- The default policy of /usr/share/dbus-1/system.conf (dbus 1.14), verbatim. -->
      <policy context="default">
        <allow user="*"/>
        <deny own="*"/>
        <deny send_type="method_call"/>
        <allow send_type="signal"/>
        <allow send_requested_reply="true" send_type="method_return"/>
        <allow send_requested_reply="true" send_type="error"/>
        <allow receive_type="method_call"/>
        <allow receive_type="method_return"/>
        <allow receive_type="error"/>
        <allow receive_type="signal"/>
        <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
        <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
        <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
        <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
              send_member="UpdateActivationEnvironment"/>
        <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Debug.Stats"/>
        <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.systemd1.Activator"/>
      </policy>
      <policy user="root">
        <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
      </policy>

      <!-- What `make install-system` puts in share/dbus-1/system.d, then local additions. -->
      <include>\(policyFile)</include>
      <includedir>\(directory)/system.d</includedir>
    </busconfig>

    """
}
