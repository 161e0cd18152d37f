#if canImport(Glibc)
import Glibc
#endif

/// A command run as a child of this process, with the signals a terminal or a service manager
/// sends passed on to it, as `systemd-inhibit` and `timeout` do. The corresponding C functions
/// are `posix_spawnp`, `sigaction`, `pthread_sigmask` and `waitpid`.
public enum Subprocess {
    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)

        /// The status a shell gives it: the exit status, or 128+N for signal N.
        public var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signo): 128 + signo
            }
        }
    }

    /// Passes `signals` on to the child `run` starts from now on; one that comes before the
    /// child exists is delivered to it as soon as it does. Call it before any other thread
    /// starts, so no thread takes a signal the handler should see.
    public static func forward(_ signals: [Int32]) {
        // The lazy global is made here, on this thread, before a handler can read it.
        _ = forwarding
        for signo in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = forwardSignal
            system_sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            system_sigaction(signo, &action, nil)
        }
    }

    /// Runs `command` (looked up in `PATH`) with default handling of `forwarded` and SIGPIPE and
    /// no blocked signal, and waits for it. Fails with the error that kept it from starting.
    public static func run(_ command: [String], forwarded: [Int32]) -> Result<Termination, Errno> {
        guard let program = command.first else { return .failure(Errno(rawValue: ENOENT)) }
        var attributes = posix_spawnattr_t()
        system_posix_spawnattr_init(&attributes)
        defer { system_posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        system_sigemptyset(&defaults)
        for signo in forwarded + [SIGPIPE] { system_sigaddset(&defaults, signo) }
        var noMask = sigset_t()
        system_sigemptyset(&noMask)
        system_posix_spawnattr_setsigdefault(&attributes, &defaults)
        system_posix_spawnattr_setsigmask(&attributes, &noMask)
        system_posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        // The forwarded signals wait until the child's pid is known to the handler.
        var blocked = sigset_t()
        system_sigemptyset(&blocked)
        for signo in forwarded { system_sigaddset(&blocked, signo) }
        var previous = sigset_t()
        system_pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { system_pthread_sigmask(SIG_SETMASK, &previous, nil) }

        var arguments: [UnsafeMutablePointer<CChar>?] = command.map { system_strdup($0) } + [nil]
        defer { for argument in arguments { system_free(argument) } }
        var pid: pid_t = 0
        let spawned = system_posix_spawnp(&pid, program, nil, &attributes, &arguments, system_environ)
        guard spawned == 0 else { return .failure(Errno(rawValue: spawned)) }
        forwarding[0] = pid
        if forwarding[1] != 0 { system_kill(pid, forwarding[1]) }
        system_pthread_sigmask(SIG_SETMASK, &previous, nil)

        var status: Int32 = 0
        let waited = system_waitpid(pid, &status, 0)
        forwarding[0] = 0
        guard waited >= 0 else { return .failure(.current) }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
        let terminatingSignal = status & 0x7F
        return terminatingSignal == 0 ? .success(.exited((status >> 8) & 0xFF)) : .success(.signalled(terminatingSignal))
    }
}

/// The child that forwarded signals go to (`[0]`, 0 before it starts) and a signal that came
/// before it did (`[1]`). Raw memory: made by `forward` before any handler goes in, so the
/// handler reads and writes plain memory and never runs Swift's lazy initialisation or touches
/// a reference count, neither of which is async-signal-safe. The handler makes one
/// async-signal-safe call (kill).
nonisolated(unsafe) private let forwarding: UnsafeMutablePointer<Int32> = {
    let slots = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
    slots.initialize(repeating: 0, count: 2)
    return slots
}()

private let forwardSignal: @convention(c) (Int32) -> Void = { signo in
    if forwarding[0] > 0 {
        system_kill(forwarding[0], signo)
    } else {
        forwarding[1] = signo
    }
}
