import NetActivity
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity run`: holds a tracked activity while a command runs, like `systemd-inhibit`.
struct RunCommand {
    var bus: Bus
    var label: String?
    var hints = ActivityHints()
    var command: [String]

    /// The label the activity gets: `--label`'s, or the command line, printable
    /// (`PrintableText`, a control character as a space) and cut on a character boundary to
    /// what the service accepts.
    var effectiveLabel: String {
        NetActivityClient.fitted(PrintableText.printable(label ?? command.joined(separator: " "), replacement: " "))
    }

    func run() async -> Int32 {
        // A long label is no reason not to run the command (a backup script would silently not
        // back up): it is cut, and said so once.
        if let label, label.utf8.count > Invocation.maximumLabelBytes {
            Output.error(
                "run: the label is \(label.utf8.count) bytes, more than the \(Invocation.maximumLabelBytes) the service "
                    + "accepts; using its first \(effectiveLabel.utf8.count)")
        }
        // Before any thread of ours exists: a signal from now on is passed on to the command
        // (or, if it comes before the command starts, delivered to it as soon as it does).
        Self.installForwarding()
        let client = NetActivityClient(bus: bus, problems: CLI.problems)
        let activity = client.begin(effectiveLabel, hints: hints)
        // The activity is registered (or the service found missing) before the command starts.
        await client.flush()
        let status = runChild()
        activity.end()
        await client.flush()
        return status
    }

    /// Spawns the command with default signal handling, passes SIGINT/SIGTERM/SIGHUP/SIGQUIT on
    /// to it, and waits. Returns its exit status, 128+N if signal N killed it, 127 if it could
    /// not be found and 126 if it could not be run.
    static let forwarded: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    private static func installForwarding() {
        // The lazy global is made here, on this thread, before a handler can read it.
        _ = forwarding
        for signo in forwarded {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = forwardSignal
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signo, &action, nil)
        }
    }

    private func runChild() -> Int32 {
        let forwarded = Self.forwarded
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signo in forwarded + [SIGPIPE] { sigaddset(&defaults, signo) }
        var noMask = sigset_t()
        sigemptyset(&noMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &noMask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        // Block the forwarded signals until the child's pid is known to the handler.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for signo in forwarded { sigaddset(&blocked, signo) }
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }

        var arguments: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, command[0], nil, &attributes, &arguments, environ)
        guard spawned == 0 else {
            Output.error("cannot run '\(command[0])': \(String(cString: strerror(spawned)))")
            return spawned == ENOENT ? 127 : 126
        }
        forwarding[0] = pid
        if forwarding[1] != 0 { kill(pid, forwarding[1]) }
        pthread_sigmask(SIG_SETMASK, &previous, nil)

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return 1 }
        }
        forwarding[0] = 0
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
        let terminatingSignal = status & 0x7F
        if terminatingSignal == 0 { return (status >> 8) & 0xFF }
        return 128 + terminatingSignal
    }
}

/// The child that forwarded signals go to (`[0]`, 0 before it starts) and a signal that came
/// before it did (`[1]`). Raw memory, as `ProcessSignals` keeps its routes: made by
/// `installForwarding` before any handler goes in, so the handler reads and writes plain
/// memory and never runs Swift's lazy initialisation or touches a reference count, neither of
/// which is async-signal-safe. The handler makes one async-signal-safe call (kill).
nonisolated(unsafe) private let forwarding: UnsafeMutablePointer<Int32> = {
    let slots = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
    slots.initialize(repeating: 0, count: 2)
    return slots
}()

private let forwardSignal: @convention(c) (Int32) -> Void = { signo in
    if forwarding[0] > 0 {
        kill(forwarding[0], signo)
    } else {
        forwarding[1] = signo
    }
}
