import Platform

/// What `/proc` tells any user about another process, for naming the application behind it:
/// its program, its parent, its owner, its cgroup. Every read may race the process's exit, so
/// each answer is optional and a process gone between two reads is simply unknown. Reads the
/// `ProcFS` and the desktop entries it is given, so a test gives it trees of its own.
public struct Processes: Sendable {
    public let proc: ProcFS
    /// Where a program's desktop entry is looked for.
    public let entries: DesktopEntries

    public init(proc: ProcFS = ProcFS(), entries: DesktopEntries = .installed) {
        self.proc = proc
        self.entries = entries
    }

    /// The program name of process `pid`: `argv[0]` without its directory
    /// (`/proc/PID/cmdline`), else `/proc/PID/comm`; both are readable for every user's
    /// processes, where `/proc/PID/exe` is not. Nil if the process is gone or its name is no
    /// plain name.
    public func programName(ofProcess pid: UInt32) -> String? {
        guard pid > 0 else { return nil }
        if let arguments = proc.contents("cmdline", of: pid, limit: 4096), let name = Self.programName(inCommandLine: arguments) {
            return name
        }
        if let comm = proc.contents("comm", of: pid, limit: 64) {
            let name = String(decoding: comm.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            if DesktopEntries.isPlainName(name) { return name }
        }
        return nil
    }

    /// The program name in a `/proc/PID/cmdline`: its first argument without its directory.
    /// A process that set its title (Chromium's browser process, Electron apps) has one string
    /// there, its command line joined with spaces: then the program is the first word, unless
    /// the whole string names a file.
    static func programName(inCommandLine arguments: [UInt8]) -> String? {
        var first = arguments.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        if let space = first.firstIndex(of: UInt8(ascii: " ")), !FileSystem.exists(String(decoding: first, as: UTF8.self)) {
            first = first[..<space]
        }
        let base = first.split(separator: UInt8(ascii: "/")).last.map { String(decoding: $0, as: UTF8.self) }
        guard let base, DesktopEntries.isPlainName(base) else { return nil }
        return base
    }

    /// The parent of process `pid` (`PPid:` in `/proc/PID/status`), or nil.
    public func parent(ofProcess pid: UInt32) -> UInt32? {
        pid > 0 ? proc.statusField("PPid:", of: pid) : nil
    }

    /// The real user id of process `pid` (`Uid:` in `/proc/PID/status`), or nil.
    public func owner(ofProcess pid: UInt32) -> UInt32? {
        pid > 0 ? proc.statusField("Uid:", of: pid) : nil
    }

    /// The cgroup v2 path of process `pid` (`0::/user.slice/…/app-….scope` in
    /// `/proc/PID/cgroup`), or nil on a system without the unified hierarchy.
    public func cgroup(ofProcess pid: UInt32) -> String? {
        pid > 0 ? proc.cgroup(of: pid) : nil
    }

    /// The application process `pid` belongs to, as an id to claim: its desktop application
    /// (`desktopApplication(ofProcess:)`), else the id of the entry that runs its program, else
    /// the program's name; nil if it is gone.
    public func application(ofProcess pid: UInt32) -> String? {
        desktopApplication(ofProcess: pid) ?? programName(ofProcess: pid).map(entries.application(forProgram:))
    }

    /// The desktop id the desktop itself gave process `pid`: the Flatpak app id of its sandbox
    /// (`/proc/PID/root/.flatpak-info`, readable only for the user's own processes), else that of
    /// the systemd app unit it runs in (`app-gnome-firefox\x2desr-4242.scope` → `firefox-esr`).
    /// Nil for a process started outside both (from a terminal, say).
    public func desktopApplication(ofProcess pid: UInt32) -> String? {
        guard pid > 0 else { return nil }
        if let info = proc.contents("root/.flatpak-info", of: pid, limit: 16_384),
            let id = Self.flatpakApplication(in: String(decoding: info, as: UTF8.self))
        {
            return id
        }
        guard let cgroups = proc.contents("cgroup", of: pid, limit: 16_384) else { return nil }
        return ApplicationUnit.desktopID(inCgroupFile: String(decoding: cgroups, as: UTF8.self))
    }

    /// `name=` in the `[Application]` group of a Flatpak sandbox's `.flatpak-info`, where it is
    /// a desktop id.
    public static func flatpakApplication(in info: String) -> String? {
        var inApplication = false
        for line in info.split(separator: "\n") {
            if line.hasPrefix("[") {
                inApplication = line == "[Application]"
            } else if inApplication, line.hasPrefix("name=") {
                let name = String(line.dropFirst(5))
                return DesktopEntries.isDesktopID(name) ? name : nil
            }
        }
        return nil
    }
}
