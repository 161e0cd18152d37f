import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child just started by `spawn`, with the parent's ends of its pipes.
struct SpawnedChild {
    var pid: pid_t
    /// Write end of the child's stdin, or nil when stdin is `/dev/null`.
    var stdin: Int32?
    var stdout: Int32
    var stderr: Int32
}

/// The environment every child gets: the test process's own, minus anything that points at
/// an ambient bus, plus `extra`. Bus tests must never reach the user's session bus by accident.
func childEnvironment(adding extra: [String: String]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment.filter { key, _ in
        key != "DBUS_SESSION_BUS_ADDRESS" && key != "DBUS_SYSTEM_BUS_ADDRESS"
            && !key.hasPrefix("DBUS_STARTER_")
    }
    environment.merge(extra) { _, new in new }
    return environment
}

/// Starts `executable` with `posix_spawn`, its stdout and stderr on fresh pipes.
///
/// The child gets default signal dispositions and an empty signal mask whatever the test
/// process has set up, and no file descriptor of ours besides its three standard streams.
///
/// - Throws: `BusTestError` if the executable is missing or cannot be started.
func spawn(
    _ executable: String, _ arguments: [String], environment: [String: String], pipeStdin: Bool
) throws -> SpawnedChild {
    let environment = childEnvironment(adding: environment)
    guard let path = executablePath(for: executable, searchPath: environment["PATH"]) else {
        throw missingTool(executable)
    }

    var opened: [Int32] = []
    func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard SystemCalls.pipe2(&ends, O_CLOEXEC) == 0 else {
            let error = BusTestError("pipe2 failed: \(String(cString: strerror(errno)))")
            opened.forEach { _ = close($0) }
            throw error
        }
        opened += ends
        return (ends[0], ends[1])
    }
    let output = try makePipe()
    let errors = try makePipe()
    let input = pipeStdin ? try makePipe() : nil

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let input {
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    posix_spawn_file_actions_adddup2(&actions, output.write, 1)
    posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
    // Other code in the test process may open descriptors without O_CLOEXEC; a pipe's write
    // end leaked into a long-lived child would keep some reader from ever seeing EOF.
    if let closeFrom = SystemCalls.addCloseFrom {
        _ = closeFrom(&actions, 3)
    }

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    sigdelset(&allSignals, SIGKILL)
    sigdelset(&allSignals, SIGSTOP)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
    }

    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    // The child has its copies now (or never will); the parent keeps only its own ends.
    _ = close(output.write)
    _ = close(errors.write)
    if let input { _ = close(input.read) }
    guard result == 0 else {
        _ = close(output.read)
        _ = close(errors.read)
        if let input { _ = close(input.write) }
        throw BusTestError("cannot start \(path): \(String(cString: strerror(result)))")
    }
    return SpawnedChild(pid: pid, stdin: input?.write, stdout: output.read, stderr: errors.read)
}

// MARK: - GNU extensions

/// Glibc functions that Swift's `Glibc` module hides because it is imported without
/// `_GNU_SOURCE`, looked up at run time instead.
private enum SystemCalls {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    typealias AddCloseFrom = @convention(c) (
        UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32
    ) -> Int32

    /// `pipe2(2)` (glibc 2.9): a pipe created close-on-exec atomically, so a child spawned
    /// concurrently on another test thread cannot inherit it.
    static let pipe2: Pipe2 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else {
            return { ends, _ in
                // Without pipe2 there is a window before FD_CLOEXEC is set; closefrom covers it.
                guard let ends, pipe(ends) == 0 else { return -1 }
                _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
                return 0
            }
        }
        return unsafeBitCast(symbol, to: Pipe2.self)
    }()

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), when present.
    static let addCloseFrom: AddCloseFrom? = {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            .map { unsafeBitCast($0, to: AddCloseFrom.self) }
    }()
}
