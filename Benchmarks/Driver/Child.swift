#if canImport(Glibc)
import Glibc
#endif

/// A process the benchmark started: a bus, a contender. Killed and reaped when stopped.
final class Child {
    let pid: pid_t
    let commandLine: String
    private var reaped = false

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`; stdin and
    /// stdout are /dev/null, stderr is ours. The environment is ours without any variable that
    /// points at an ambient bus, plus `environment`.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws(BenchError) {
        guard let path = Child.resolve(executable) else { throw BenchError("cannot find \(executable) in PATH") }
        commandLine = ([executable] + arguments).joined(separator: " ")

        var variables: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if !text.hasPrefix("DBUS_") { variables.append(text) }
            index += 1
        }
        variables += environment.map { "\($0.key)=\($0.value)" }

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)

        var child: pid_t = 0
        let status = posix_spawn(&child, path, &actions, nil, argv, envp)
        guard status == 0 else { throw BenchError("cannot start \(commandLine): \(String(cString: strerror(status)))") }
        pid = child
    }

    deinit { stop() }

    /// Whether the process has not exited yet.
    var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { reaped = true }
        return !reaped
    }

    /// SIGTERM, then SIGKILL after 5 s; reaps it.
    func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Clock.now + 5_000_000_000
        while isRunning {
            if Clock.now > deadline { kill(pid, SIGKILL) }
            usleep(1_000)
        }
    }

    private static func resolve(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// What went wrong with the benchmark itself: a missing tool, a contender that would not start.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// CLOCK_MONOTONIC in nanoseconds.
enum Clock {
    static var now: UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Sleeps for `milliseconds`.
    static func sleep(milliseconds: Int) {
        usleep(useconds_t(milliseconds * 1_000))
    }
}
