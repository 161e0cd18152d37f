import BusTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension PrivateBus {
    /// A private `dbus-daemon` configured like the system bus, with the project's policy file.
    ///
    /// `<type>system</type>`, EXTERNAL authentication, and the default policy of the stock
    /// `/usr/share/dbus-1/system.conf`: owning names and sending method calls denied, signals
    /// and requested replies allowed, the bus driver reachable; then `dbus/<name>.conf` from the
    /// repository, included as the system bus includes `system.d/`. Extra policy files (an
    /// admin's local additions) go in the bus directory's `system.d/`. The socket lives in a
    /// directory every user may enter, so a client running as `nobody` reaches it.
    ///
    /// - Parameter extraPolicies: file name to contents, written to `system.d/` first.
    static func systemPolicy(policyFile: String, extraPolicies: [String: String] = [:]) throws -> PrivateBus {
        try PrivateBus { directory in
            // mkdtemp's 0700 would keep nobody from the socket.
            _ = chmod(directory, 0o755)
            try FileManager.default.createDirectory(
                atPath: directory + "/system.d", withIntermediateDirectories: false,
                attributes: [.posixPermissions: 0o755])
            for (name, text) in extraPolicies {
                try text.write(toFile: directory + "/system.d/" + name, atomically: true, encoding: .utf8)
            }
            return systemBusConfiguration(directory: directory, policyFile: policyFile)
        }
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
