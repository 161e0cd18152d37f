import Platform

/// NetActivity's own icons, which the tray shows by default, and where a tray host finds them.
///
/// They are SVGs in the `hicolor` theme, which every icon theme falls back to, so the item is
/// drawn whatever the theme: the freedesktop names for network traffic are missing from Breeze,
/// and Adwaita has them only as `-symbolic`. `make install` and the .deb put them in
/// `PREFIX/share/icons/hicolor/scalable/status`; the source tree keeps them in
/// `data/icons/hicolor/scalable/status`.
public enum TrayIcons {
    /// While the indicator shows and the size of the transfers is unknown: the progress ring's
    /// double arrow on a disc of the ring's blue.
    public static let active = "io.github.netactivity.NetActivity-active"
    /// While idle: the progress ring at 0 %.
    public static let idle = "io.github.netactivity.NetActivity-idle"
    /// `active` in one colour, the panel's text colour, for `--icon` on monochrome panels.
    public static let activeSymbolic = "io.github.netactivity.NetActivity-active-symbolic"
    /// `idle` in one colour.
    public static let idleSymbolic = "io.github.netactivity.NetActivity-idle-symbolic"

    /// Where each icon lies below an icon folder (an `IconThemePath`, or `share/icons`).
    public static func file(_ name: String) -> String {
        "hicolor/scalable/status/\(name).svg"
    }

    /// The item's `IconThemePath` for a tray run from `executable`, a resolved absolute path:
    /// the first of these folders that holds the icons, or empty when none does (the names are
    /// then looked up in the host's theme and hicolor, as for any icon).
    ///
    /// 1. Run from a build in a source tree (`TREE/.build/…/netactivity`): `TREE/data/icons`, so
    ///    that a tray run from the build tree shows the tree's icons without installing them.
    /// 2. Installed (`PREFIX/bin/netactivity`): `PREFIX/share/icons`, which a host may not search
    ///    on its own (a `PREFIX` such as `/opt/netactivity`, or `~/.local` for a host started
    ///    with another `XDG_DATA_HOME`).
    ///
    /// - Parameter exists: whether a file exists at a path; the running tray asks the file system.
    public static func themePath(executable: String, exists: (String) -> Bool) -> String {
        var components = executable.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard executable.hasPrefix("/"), components.count >= 2 else { return "" }
        components.removeLast()
        var candidates: [[String]] = []
        if let build = components.lastIndex(of: ".build") {
            candidates.append(Array(components[..<build]) + ["data", "icons"])
        }
        candidates.append(Array(components.dropLast()) + ["share", "icons"])
        for candidate in candidates {
            let folder = "/" + candidate.joined(separator: "/")
            if exists(folder + "/" + file(active)) { return folder }
        }
        return ""
    }

    /// `themePath(executable:exists:)` for this process, found through `/proc/self/exe`; empty
    /// when the kernel does not say where the executable is.
    public static func themePathOfThisProcess() -> String {
        guard let executable = ProcFS().executable(of: nil) else { return "" }
        return themePath(executable: executable, exists: FileSystem.exists)
    }
}
