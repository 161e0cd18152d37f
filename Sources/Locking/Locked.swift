#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by a pthread mutex: the project's one lock, used by the model (which knows
/// nothing of D-Bus) and by everything above it (`DBus` hands it on as `DBus.Locked`).
///
/// The concurrency rules, for sources and tests alike:
/// - State shared between threads sits in a `Locked`; a lone flag or counter may be an
///   `Atomic`. No `Mutex`, no `NSLock`: the standard library's `Mutex` waits on a futex
///   directly on Linux, which ThreadSanitizer does not see, so it reports the accesses inside
///   `withLock` as races and would keep `make test-tsan` red.
/// - Otherwise state is confined to one `EventLoop` (`EventLoop.assertConfined`, `LoopBound`),
///   and a type's `@unchecked Sendable` says which of the two it rests on and asserts it in
///   debug builds.
/// - A signal handler touches only raw memory made before the handler was installed and makes
///   only async-signal-safe calls (`ProcessSignals`).
///
/// The mutex lives on the heap: a `pthread_mutex_t` must never move once initialised, which a
/// stored property of a Swift type does not guarantee.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock guarding `value`.
    public init(_ value: Value) {
        self.value = value
        // A pthread mutex must not move once initialised, so it lives on the heap.
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
