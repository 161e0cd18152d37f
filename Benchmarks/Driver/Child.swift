import PrivateBusLauncher
#if canImport(Glibc)
import Glibc
#endif

/// A process the benchmark started: a bus, a contender. Killed and reaped when stopped.
final class Child {
    let pid: pid_t
    let commandLine: String
    private var reaped = false
    /// Its wait status once it has exited and been reaped.
    private(set) var exitStatus: Int32?

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`; stdin and
    /// stdout are /dev/null, stderr is ours. The environment is ours without any variable that
    /// points at an ambient bus, plus `environment`.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws(BenchError) {
        commandLine = ([executable] + arguments).joined(separator: " ")
        do {
            pid = try launch(
                executable, arguments, environment: busFreeEnvironment(adding: environment), stdout: .null,
                stderr: .inherited)
        } catch {
            throw BenchError(error.missingExecutable.map { "cannot find \($0) in PATH" } ?? error.description)
        }
    }

    deinit { stop() }

    /// Whether the process has not exited yet.
    var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped = true
            exitStatus = status
        }
        return !reaped
    }

    /// Waits for it to exit and reaps it; its wait status.
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        guard !reaped else { return exitStatus ?? status }
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        reaped = true
        exitStatus = status
        return status
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
