import DBus

/// The introspection XML of declared interfaces, with their descriptions as comments: how
/// `dbus/io.github.netactivity.NetActivity1.xml` is made (`make interface`).
public enum IntrospectionDocument {
    /// Comment lines wrap at this column.
    static let width = 96

    /// A document of `interfaces`, headed by `overview` (kept as written, line by line).
    public static func xml(overview: String, interfaces: [InterfaceDescriptor]) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <!--

            """
        for line in overview.split(separator: "\n", omittingEmptySubsequences: false) {
            xml += line.isEmpty ? "\n" : "  " + line + "\n"
        }
        xml += "-->\n<node>\n"
        for interface in interfaces {
            if !interface.doc.isEmpty { xml += comment(interface.doc, indent: 2) }
            xml += "  <interface name=\"\(interface.name)\">\n"
            for method in interface.methods {
                xml += comment("\(method.name): \(method.doc)", indent: 4)
                let arguments =
                    method.inputs.map { ($0, "in") } + method.outputs.map { ($0, "out") }
                if arguments.isEmpty {
                    xml += "    <method name=\"\(method.name)\"/>\n"
                    continue
                }
                xml += "    <method name=\"\(method.name)\">\n"
                for (argument, direction) in arguments {
                    xml += "      <arg name=\"\(argument.name)\" type=\"\(argument.signature)\""
                        + " direction=\"\(direction)\"/>\n"
                }
                xml += "    </method>\n"
            }
            for signal in interface.signals {
                xml += comment("\(signal.name): \(signal.doc)", indent: 4)
                if signal.arguments.isEmpty {
                    xml += "    <signal name=\"\(signal.name)\"/>\n"
                    continue
                }
                xml += "    <signal name=\"\(signal.name)\">\n"
                for argument in signal.arguments {
                    xml += "      <arg name=\"\(argument.name)\" type=\"\(argument.signature)\"/>\n"
                }
                xml += "    </signal>\n"
            }
            for property in interface.properties {
                xml += comment("\(property.name): \(property.doc)", indent: 4)
                xml += "    <property name=\"\(property.name)\" type=\"\(property.signature)\" access=\"read\">\n"
                xml += "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\""
                    + " value=\"\(property.changes.rawValue)\"/>\n"
                xml += "    </property>\n"
            }
            xml += "  </interface>\n"
        }
        return xml + "</node>\n"
    }

    /// `text` as an XML comment at `indent`: on one line if it fits, else a block whose lines
    /// wrap at `width`.
    public static func comment(_ text: String, indent: Int) -> String {
        let margin = String(repeating: " ", count: indent)
        // "--" may not appear inside an XML comment.
        let text = text.replacing("--", with: "-")
        if !text.contains("\n"), margin.count + text.count + 9 <= width {
            return margin + "<!-- " + text + " -->\n"
        }
        var block = margin + "<!--\n"
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let leading = String(line.prefix { $0 == " " })
            // An indented line (an item of a list) hangs its continuations two further in.
            let hanging = leading.isEmpty ? "" : leading + "  "
            var current = margin + "  " + leading
            var empty = true
            for word in line.split(separator: " ") {
                if !empty, current.count + 1 + word.count > width {
                    block += current + "\n"
                    current = margin + "  " + hanging
                    empty = true
                }
                current += (empty ? "" : " ") + word
                empty = false
            }
            block += current + "\n"
        }
        return block + margin + "-->\n"
    }
}

extension NetActivityInterface {
    /// What `dbus/io.github.netactivity.NetActivity1.xml` says before the interfaces.
    public static let overview = """
        io.github.netactivity.NetActivity1: a shared network-activity indicator.

        Bus name:    io.github.netactivity.NetActivity1 (session bus by default)
        Object path: /io/github/netactivity/NetActivity1

        Two kinds of activity are counted:
        - the shared counter (Push / Pop), not tied to the caller's connection, so one process may
          Push and another Pop;
        - tracked activities (BeginActivity / UpdateActivity / EndActivity), each owned by the
          connection that began it and ended automatically the moment that connection leaves the bus.

        Count = shared counter + live tracked activities; Active = Count > 0.

        Every live tracked activity is also an object, /io/github/netactivity/NetActivity1/activity/ID
        (ID in decimal), implementing io.github.netactivity.NetActivity1.Activity below. The main
        object implements org.freedesktop.DBus.ObjectManager: GetManagedObjects returns every live
        activity object, InterfacesAdded is sent before the reply to the BeginActivity that made one,
        InterfacesRemoved before the reply to its EndActivity and when its owner leaves the bus. So a
        watcher follows each change without re-reading the whole list.

        Limits: 1,024 live activities per connection (on the system bus also per user id), 65,536
        live activities in all, 65,536 on the shared counter, 256-byte labels.

        Errors, each with a human-readable message:
          io.github.netactivity.NetActivity1.Error.NotActive
          io.github.netactivity.NetActivity1.Error.UnknownActivity
          org.freedesktop.DBus.Error.InvalidArgs, .AccessDenied, .LimitsExceeded, .UnknownMethod,
          .UnknownInterface, .UnknownProperty, .PropertyReadOnly
        A call with the wrong signature gets InvalidArgs and changes nothing.

        All properties are read-only (Set gets PropertyReadOnly). Changes are announced with
        org.freedesktop.DBus.Properties.PropertiesChanged on the object, only when a value really
        changed. A change to Active (and a leading-edge Count) caused by a method call is signalled
        before that call's reply. Count, Progress and Activities are throttled: the first change
        after a quiet period is sent at once, later ones within the window (default 50 ms) are merged
        and the last value is sent by the end of the window. Activities is announced by invalidation
        only (its name in the invalidated list). A signal that carries Active also carries Count and
        Progress (and Rate) whenever they differ from the last values announced.

        InterfaceVersion says which version of this interface the service implements: 3 adds
        BeginActivityWithHints, UpdateActivityFraction, Rate and the activities' hints, Fraction and
        Rate. A client that finds no InterfaceVersion talks to a version 2 service.
        """

    /// `dbus/io.github.netactivity.NetActivity1.xml`: both interfaces, generated from their
    /// descriptors.
    public static var introspectionXML: String {
        IntrospectionDocument.xml(
            overview: overview, interfaces: [descriptor, ActivityObjectInterface.descriptor])
    }
}
