import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How a child ended.
enum Termination: Sendable, Equatable {
    case exited(Int32)
    case signaled(Int32)
    /// Someone else reaped it (a `SIGCHLD` set to `SIG_IGN`, a stray `waitpid(-1)`).
    case unknown
}

/// Waits for one child on a thread of its own and reaps it, so no child is left a zombie and
/// no pid is signalled after it could have been reused.
///
/// The thread first waits without reaping (`WNOWAIT`); the pid stays a zombie, and therefore
/// ours, until the reap happens under the same lock `signal(_:)` takes.
final class Reaper: @unchecked Sendable {
    let pid: pid_t
    private let condition = NSCondition()
    private var termination: Termination?

    init(pid: pid_t) {
        self.pid = pid
        let thread = Thread { [self] in
            reapWhenExited()
        }
        thread.name = "reaper \(pid)"
        thread.start()
    }

    /// Whether the child has been reaped.
    var hasExited: Bool {
        condition.lock()
        defer { condition.unlock() }
        return termination != nil
    }

    /// Sends `signal` to the child unless it has already been reaped.
    func signal(_ signal: Int32) {
        condition.lock()
        defer { condition.unlock() }
        if termination == nil {
            _ = kill(pid, signal)
        }
    }

    /// How the child ended, or nil if it is still running at `deadline`.
    func wait(before deadline: Date) -> Termination? {
        condition.lock()
        defer { condition.unlock() }
        while termination == nil {
            if !condition.wait(until: deadline) {
                break
            }
        }
        return termination
    }

    private func reapWhenExited() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        condition.lock()
        defer { condition.unlock() }
        var status: Int32 = 0
        var reaped: pid_t
        repeat {
            reaped = waitpid(pid, &status, 0)
        } while reaped < 0 && errno == EINTR
        termination = reaped == pid ? Termination(waitStatus: status) : .unknown
        condition.broadcast()
    }
}

extension Termination {
    /// Decodes a `waitpid` status; the `WIFEXITED` family are macros Swift cannot import.
    init(waitStatus status: Int32) {
        let low = status & 0x7f
        if low == 0 {
            self = .exited((status >> 8) & 0xff)
        } else if low != 0x7f {
            self = .signaled(low)
        } else {
            self = .unknown
        }
    }
}
