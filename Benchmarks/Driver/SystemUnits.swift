import PrivateBusLauncher
#if canImport(Glibc)
import Glibc
#endif

/// A cgroup named as systemd names a system service's (`/system.slice/na-bench-PID.service`),
/// made under the cgroup2 mount with `system.slice` when it is missing, for the system-side
/// bridge's row; removed, with what still runs in it, by `remove()` or when released.
final class SystemUnitCgroup {
    let path: String
    private var made: [String] = []

    init() throws(BenchError) {
        // cgroup2 alone has cgroup.subtree_control at its root; beside v1 it is mounted at unified/.
        guard let mount = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"].first(where: { access($0 + "/cgroup.subtree_control", F_OK) == 0 })
        else { throw BenchError("the system-side traffic row needs a cgroup2 mount") }
        let slice = mount + "/system.slice"
        if mkdir(slice, 0o755) == 0 { made.append(slice) }
        path = slice + "/na-bench-\(getpid()).service"
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            let error = errno
            remove()
            throw BenchError("cannot make cgroup \(path): errno \(error)")
        }
        made.append(path)
    }

    deinit { remove() }

    /// `sh -c` arguments that move the shell into the cgroup, then become `command`.
    func run(_ command: [String]) -> [String] {
        let quoted = command.map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
        return ["-c", "echo $$ > '\(path)/cgroup.procs' && exec \(quoted)"]
    }

    /// Kills what still runs in it and removes what this made.
    func remove() {
        for _ in 0..<100 {
            guard let procs = fopen(path + "/cgroup.procs", "r") else { break }
            let pids = SystemUnits.contents(of: procs).split(separator: "\n").compactMap { pid_t($0) }
            fclose(procs)
            if pids.isEmpty { break }
            for pid in pids { kill(pid, SIGKILL) }
            usleep(20_000)
        }
        for directory in made.reversed() { rmdir(directory) }
        made = []
    }
}

/// The exposure `systemd-analyze security --offline` gives the system-side bridge's unit and the
/// service's, as `make install-system` fills them in (with `cli`'s directory as `@bindir@`).
enum SystemUnits {
    static let repository: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
        return path
    }()

    /// Nil when systemd-analyze (252 or later) cannot rate them here.
    static func exposure(cli: String) -> (bridge: Double, service: Double)? {
        guard executablePath(for: "systemd-analyze") != nil else { return nil }
        // systemd-analyze wants ExecStart= absolute.
        var absolute = cli
        if !cli.hasPrefix("/"), let cwd = getcwd(nil, 0) {
            absolute = String(cString: cwd) + "/" + cli
            free(cwd)
        }
        let bindir = String(absolute[..<(absolute.lastIndex(of: "/") ?? absolute.startIndex)])
        var template = Array("/tmp/na-bench-units-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return nil }
        let directory = String(cString: made)
        defer {
            for unit in ["netactivity-bridge-system.service", "netactivityd-system.service"] { unlink(directory + "/" + unit) }
            rmdir(directory)
        }
        func rate(_ unit: String) -> Double? {
            guard let text = read(repository + "/dbus/\(unit).in") else { return nil }
            let filled = text.replacing("@bindir@", with: bindir).replacing("@datadir@", with: "/usr/share")
            guard write(filled, to: directory + "/" + unit),
                let pipe = popen("systemd-analyze security --offline=true --no-pager '\(directory)/\(unit)' 2>/dev/null", "r")
            else { return nil }
            let output = contents(of: pipe)
            pclose(pipe)
            guard let line = output.split(separator: "\n").first(where: { $0.contains("Overall exposure level") })
            else { return nil }
            return line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        }
        guard let bridge = rate("netactivity-bridge-system.service"), let service = rate("netactivityd-system.service") else {
            return nil
        }
        return (bridge, service)
    }

    private static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        return contents(of: file)
    }

    static func contents(of file: UnsafeMutablePointer<FILE>) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func write(_ text: String, to path: String) -> Bool {
        guard let file = fopen(path, "w") else { return false }
        defer { fclose(file) }
        let bytes = Array(text.utf8)
        return fwrite(bytes, 1, bytes.count, file) == bytes.count
    }
}
