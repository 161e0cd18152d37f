#if canImport(Glibc)
import Glibc
#endif

// The C library's calls on processes and signals: spawning a child, its signal settings,
// waiting for it, signalling it.

@discardableResult
func system_posix_spawnp(
    _ pid: UnsafeMutablePointer<pid_t>, _ file: UnsafePointer<CChar>, _ actions: UnsafePointer<posix_spawn_file_actions_t>?,
    _ attributes: UnsafePointer<posix_spawnattr_t>?, _ arguments: UnsafePointer<UnsafeMutablePointer<CChar>?>,
    _ environment: UnsafePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    posix_spawnp(pid, file, actions, attributes, arguments, environment)
}

@discardableResult
func system_posix_spawnattr_init(_ attributes: UnsafeMutablePointer<posix_spawnattr_t>) -> Int32 {
    posix_spawnattr_init(attributes)
}

@discardableResult
func system_posix_spawnattr_destroy(_ attributes: UnsafeMutablePointer<posix_spawnattr_t>) -> Int32 {
    posix_spawnattr_destroy(attributes)
}

@discardableResult
func system_posix_spawnattr_setsigdefault(
    _ attributes: UnsafeMutablePointer<posix_spawnattr_t>, _ signals: UnsafePointer<sigset_t>
) -> Int32 {
    posix_spawnattr_setsigdefault(attributes, signals)
}

@discardableResult
func system_posix_spawnattr_setsigmask(_ attributes: UnsafeMutablePointer<posix_spawnattr_t>, _ signals: UnsafePointer<sigset_t>) -> Int32 {
    posix_spawnattr_setsigmask(attributes, signals)
}

@discardableResult
func system_posix_spawnattr_setflags(_ attributes: UnsafeMutablePointer<posix_spawnattr_t>, _ flags: Int16) -> Int32 {
    posix_spawnattr_setflags(attributes, flags)
}

@discardableResult
func system_sigaction(_ signo: Int32, _ action: UnsafePointer<sigaction>?, _ previous: UnsafeMutablePointer<sigaction>?) -> Int32 {
    sigaction(signo, action, previous)
}

@discardableResult
func system_sigemptyset(_ set: UnsafeMutablePointer<sigset_t>) -> Int32 {
    sigemptyset(set)
}

@discardableResult
func system_sigaddset(_ set: UnsafeMutablePointer<sigset_t>, _ signo: Int32) -> Int32 {
    sigaddset(set, signo)
}

@discardableResult
func system_pthread_sigmask(_ how: Int32, _ set: UnsafePointer<sigset_t>?, _ previous: UnsafeMutablePointer<sigset_t>?) -> Int32 {
    pthread_sigmask(how, set, previous)
}

@discardableResult
func system_waitpid(_ pid: pid_t, _ status: UnsafeMutablePointer<Int32>?, _ options: Int32) -> pid_t {
    retryingInterrupts { waitpid(pid, status, options) }
}

/// Async-signal-safe, as `kill` is: a signal handler calls it.
@discardableResult
func system_kill(_ pid: pid_t, _ signo: Int32) -> Int32 {
    kill(pid, signo)
}
