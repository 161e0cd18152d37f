import Platform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// How the tests and the benchmark start processes and private buses: one spawner, one bus
// launcher, without Foundation (the benchmark driver links none). `BusTestSupport` adds pipes,
// buffers and reaping on top; the benchmark uses them bare.

/// Why a process could not be started.
public struct LaunchError: Error, CustomStringConvertible {
    public let description: String
    /// Set when the executable was not found: the caller names the package to install.
    public let missingExecutable: String?

    public init(_ description: String, missingExecutable: String? = nil) {
        self.description = description
        self.missingExecutable = missingExecutable
    }
}

/// Where a child's standard stream goes.
public enum LaunchStream {
    /// `/dev/null`.
    case null
    /// The parent's own.
    case inherited
    /// A descriptor of the parent's (a pipe's end), duplicated into place.
    case descriptor(Int32)
}

/// This process's environment minus every variable that points at an ambient bus
/// (`DBUS_SESSION_BUS_ADDRESS`, `DBUS_SYSTEM_BUS_ADDRESS`, `DBUS_STARTER_*`), plus `extra`:
/// a child of a test or a measurement must never reach the user's bus by accident.
public func busFreeEnvironment(adding extra: [String: String]) -> [String: String] {
    var environment: [String: String] = [:]
    var index = 0
    while let entry = environ[index] {
        index += 1
        let text = String(cString: entry)
        guard let equals = text.firstIndex(of: "=") else { continue }
        let key = String(text[..<equals])
        guard key != "DBUS_SESSION_BUS_ADDRESS", key != "DBUS_SYSTEM_BUS_ADDRESS", !key.hasPrefix("DBUS_STARTER_")
        else { continue }
        environment[key] = String(text[text.index(after: equals)...])
    }
    environment.merge(extra) { _, new in new }
    return environment
}

/// The full path `posix_spawn` should run for `name`: `name` itself if it contains a slash,
/// otherwise the first executable file called `name` in `searchPath` (POSIX `PATH` rules).
public func executablePath(for name: String, searchPath: String? = nil) -> String? {
    if name.contains("/") { return isExecutableFile(name) ? name : nil }
    let path = searchPath ?? getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
        let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
        if isExecutableFile(candidate) { return candidate }
    }
    return nil
}

private func isExecutableFile(_ path: String) -> Bool {
    var info = stat()
    guard stat(path, &info) == 0 else { return false }
    return (info.st_mode & S_IFMT) != S_IFDIR && access(path, X_OK) == 0
}

/// Starts `executable` (a path, or a name looked up in the environment's `PATH`) with
/// `arguments` and exactly `environment`, and returns its process id.
///
/// The child gets default signal dispositions and an empty signal mask whatever this process
/// has set up, and no descriptor of ours besides its three standard streams.
public func launch(
    _ executable: String, _ arguments: [String], environment: [String: String],
    stdin: LaunchStream = .null, stdout: LaunchStream, stderr: LaunchStream
) throws(LaunchError) -> pid_t {
    guard let path = executablePath(for: executable, searchPath: environment["PATH"]) else {
        throw LaunchError("\(executable) is not installed (not found in PATH)", missingExecutable: executable)
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
        switch stream {
        case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
        case .inherited: break
        case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
        }
    }
    // Other code in this process may open descriptors without O_CLOEXEC; a pipe's write end
    // leaked into a long-lived child would keep some reader from ever seeing EOF.
    if let closeFrom = SystemCalls.addCloseFrom { _ = closeFrom(&actions, 3) }

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
    guard result == 0 else { throw LaunchError("cannot start \(path): \(String(cString: strerror(result)))") }
    return pid
}

/// A pipe whose ends are close-on-exec from the start, so a child spawned concurrently on
/// another thread cannot inherit them; nil (errno set) when pipes run out.
public func closeOnExecPipe() -> (read: Int32, write: Int32)? {
    var ends: [Int32] = [-1, -1]
    guard SystemCalls.pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
    return (ends[0], ends[1])
}

// MARK: - A private bus's files

/// A private dbus-daemon's home: a fresh directory under /tmp (not `$TMPDIR`: a socket path
/// must fit in 108 bytes) holding its configuration, and the command line that starts it.
public struct PrivateBusFiles: Sendable {
    /// The directory; the daemon's socket goes here too.
    public let directory: String
    /// The configuration file.
    public var configurationFile: String { directory + "/bus.conf" }
    /// `dbus-daemon`'s arguments: in the foreground, on the configuration, printing the address
    /// it listens on to stdout.
    public var daemonArguments: [String] { ["--nofork", "--config-file=\(configurationFile)", "--print-address=1"] }

    /// Makes the directory and writes the configuration `configuration` returns for it (which
    /// may lay out more files there first).
    public init(prefix: String = "netactivity-bus", configuration: (_ directory: String) throws -> String) throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw LaunchError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        do {
            let text = try configuration(directory)
            guard writeFile(configurationFile, text) else {
                throw LaunchError("cannot write \(configurationFile): \(String(cString: strerror(errno)))")
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Removes the directory and everything in it.
    public func remove() {
        removeTree(directory)
    }
}

/// Writes `text` to a new file at `path`; false on failure, errno set.
public func writeFile(_ path: String, _ text: String) -> Bool {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count
}

private func removeTree(_ path: String) {
    if let entries = Directory.entries(of: path) {
        for entry in entries { removeTree(path + "/" + entry.name) }
        rmdir(path)
    } else {
        unlink(path)
    }
}

// MARK: - GNU extensions

/// Glibc functions that Swift's `Glibc` module hides because it is imported without
/// `_GNU_SOURCE`, looked up at run time instead.
private enum SystemCalls {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// `pipe2(2)` (glibc 2.9).
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
