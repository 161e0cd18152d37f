// The configuration of the private dbus-daemon the tests and the benchmark start. Pure Swift,
// no Foundation, so the benchmark driver (which links no Foundation) shares it with
// `BusTestSupport`'s `PrivateBus`.

import DBus

/// A session-type bus configuration with nothing from the system's `session.conf`: no
/// standard service directories, no included files, so a test or a measurement sees only what
/// it set up. EXTERNAL authentication; a policy that allows everything (owning any name,
/// sending, receiving, eavesdropping); the stock session bus's limits, which are effectively
/// none; a `<servicedir>` for each of `serviceDirectories` (D-Bus activation).
///
/// - Parameter listen: the `<listen>` address, e.g. `unix:dir=/tmp/x` or `unix:path=/tmp/x/bus`.
public func privateBusConfiguration(listen: String, serviceDirectories: [String] = []) -> String {
    let services = serviceDirectories.map { "  <servicedir>\(XMLText.escaped($0))</servicedir>\n" }.joined()
    return """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <keep_umask/>
          <listen>\(XMLText.escaped(listen))</listen>
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
