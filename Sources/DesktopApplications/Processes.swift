#if canImport(Glibc)
import Glibc
#endif

/// What `/proc` tells any user about another process, for naming the application behind it:
/// its program, its parent, its owner, its cgroup. Every read may race the process's exit, so
/// each answer is optional and a process gone between two reads is simply unknown.
public enum Processes {
    /// The program name of process `pid`: `argv[0]` without its directory
    /// (`/proc/PID/cmdline`), else `/proc/PID/comm`; both are readable for every user's
    /// processes, where `/proc/PID/exe` is not. Nil if the process is gone or its name is no
    /// plain name.
    public static func programName(ofProcess pid: UInt32) -> String? {
        guard pid > 0 else { return nil }
        if let arguments = readFile("/proc/\(pid)/cmdline", limit: 4096), let name = programName(inCommandLine: arguments) {
            return name
        }
        if let comm = readFile("/proc/\(pid)/comm", limit: 64) {
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
        if let space = first.firstIndex(of: UInt8(ascii: " ")),
            access(String(decoding: first, as: UTF8.self), F_OK) != 0
        {
            first = first[..<space]
        }
        let base = first.split(separator: UInt8(ascii: "/")).last.map { String(decoding: $0, as: UTF8.self) }
        guard let base, DesktopEntries.isPlainName(base) else { return nil }
        return base
    }

    /// The parent of process `pid` (`PPid:` in `/proc/PID/status`), or nil.
    public static func parent(ofProcess pid: UInt32) -> UInt32? {
        statusField("PPid:", ofProcess: pid)
    }

    /// The real user id of process `pid` (`Uid:` in `/proc/PID/status`), or nil.
    public static func owner(ofProcess pid: UInt32) -> UInt32? {
        statusField("Uid:", ofProcess: pid)
    }

    /// The cgroup v2 path of process `pid` (`0::/user.slice/…/app-….scope` in
    /// `/proc/PID/cgroup`), or nil on a system without the unified hierarchy.
    public static func cgroup(ofProcess pid: UInt32) -> String? {
        guard pid > 0, let bytes = readFile("/proc/\(pid)/cgroup", limit: 8192) else { return nil }
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: "0::".utf8) {
            return String(decoding: line.dropFirst(3), as: UTF8.self)
        }
        return nil
    }

    /// The application process `pid` belongs to, as an id to claim: its desktop application
    /// (`desktopApplication(ofProcess:)`), else the id of the entry that runs its program, else
    /// the program's name; nil if it is gone.
    public static func application(ofProcess pid: UInt32) -> String? {
        desktopApplication(ofProcess: pid) ?? programName(ofProcess: pid).map(DesktopEntries.application(forProgram:))
    }

    /// The desktop id the desktop itself gave process `pid`: the Flatpak app id of its sandbox
    /// (`/proc/PID/root/.flatpak-info`, readable only for the user's own processes), else that of
    /// the systemd app unit it runs in (`app-gnome-firefox\x2desr-4242.scope` → `firefox-esr`).
    /// Nil for a process started outside both (from a terminal, say).
    public static func desktopApplication(ofProcess pid: UInt32) -> String? {
        guard pid > 0 else { return nil }
        if let info = readFile("/proc/\(pid)/root/.flatpak-info", limit: 16_384),
            let id = flatpakApplication(in: String(decoding: info, as: UTF8.self))
        {
            return id
        }
        guard let cgroups = readFile("/proc/\(pid)/cgroup", limit: 16_384) else { return nil }
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

    private static func statusField(_ key: String, ofProcess pid: UInt32) -> UInt32? {
        guard pid > 0, let bytes = readFile("/proc/\(pid)/status", limit: 4096) else { return nil }
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: key.utf8) {
            let value = line.dropFirst(key.utf8.count).drop { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: " ") }
            return UInt32(String(decoding: value.prefix { $0 >= 0x30 && $0 <= 0x39 }, as: UTF8.self))
        }
        return nil
    }

    /// At most `limit` bytes of a file; nil if it cannot be read or is empty.
    public static func readFile(_ path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // /proc files say nothing of their size: the buffer starts small and doubles as they
        // fill it, so a file read every few seconds costs what it holds, not `limit`.
        var bytes = [UInt8](repeating: 0, count: min(limit, 8_192))
        var filled = 0
        while filled < limit {
            if filled == bytes.count { bytes += [UInt8](repeating: 0, count: min(bytes.count, limit - bytes.count)) }
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        guard filled > 0 else { return nil }
        bytes.removeLast(bytes.count - filled)
        return bytes
    }
}
