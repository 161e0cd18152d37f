import Platform

/// The application a systemd unit runs, by the names desktops give the units they start apps in
/// (systemd's "Desktop Environment Integration"): `app[-LAUNCHER]-ID-RANDOM.scope`,
/// `app[-LAUNCHER]-ID[@RANDOM].service`, and Flatpak's `app-flatpak-ID-PID.scope`.
///
/// `ID` is the desktop id, with each `-` in it escaped as `\x2d` (systemd's unit-name escaping),
/// so the unescaped dashes left are the ones between the parts.
public enum ApplicationUnit {
    /// The desktop id of the app unit `unit` (`app-gnome-org.gnome.Nautilus-1234.scope` →
    /// `org.gnome.Nautilus`), or nil when `unit` names no app unit (a terminal's
    /// `vte-spawn-….scope`, `session-2.scope`, a service that is no app).
    public static func desktopID(ofUnit unit: String) -> String? {
        guard unit.utf8.count <= 512, unit.hasPrefix("app-") else { return nil }
        var parts: [Substring]
        if unit.hasSuffix(".scope") {
            // The random part is mandatory for a scope: the last dash-separated part.
            parts = unit.dropFirst(4).dropLast(6).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count >= 2, !parts.last!.isEmpty else { return nil }
            parts.removeLast()
        } else if unit.hasSuffix(".service") {
            var name = unit.dropFirst(4).dropLast(8)
            if let at = name.firstIndex(of: "@") { name = name[..<at] }
            parts = name.split(separator: "-", omittingEmptySubsequences: false)
        } else {
            return nil
        }
        // What is left is `LAUNCHER-ID` or `ID`.
        guard parts.count == 1 || parts.count == 2, let escaped = parts.last,
            let id = unescaped(escaped), DesktopEntries.isDesktopID(id)
        else { return nil }
        return id
    }

    /// The desktop id of the innermost app unit on cgroup path `path`
    /// (`/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox\x2desr-4242.scope`),
    /// or nil when it runs in none.
    public static func desktopID(inCgroup path: String) -> String? {
        for component in path.split(separator: "/").reversed() {
            if let id = desktopID(ofUnit: String(component)) { return id }
        }
        return nil
    }

    /// The desktop id of the innermost app unit in the text of a `/proc/PID/cgroup` file: the
    /// unified hierarchy's line (`0::/…`) or cgroup v1's `name=systemd` one; nil when the process
    /// runs in none.
    public static func desktopID(inCgroupFile contents: String) -> String? {
        for line in contents.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let id = desktopID(inCgroup: String(fields[2])) else { continue }
            return id
        }
        return nil
    }

    /// `name` with systemd's `\xNN` escapes undone; nil if one is malformed or decodes to
    /// something that is not UTF-8.
    static func unescaped(_ name: Substring) -> String? {
        ByteEscapes.undone(name, .hex, strict: true).flatMap { String(validating: $0, as: UTF8.self) }
    }
}
