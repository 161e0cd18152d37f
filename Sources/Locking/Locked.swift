#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by a pthread mutex: the project's one lock, used by the model (which knows
/// nothing of D-Bus) and by everything above it (`DBus` hands it on as `DBus.Locked`).
///
/// The mutex lives on the heap: a `pthread_mutex_t` must never move once initialised, which a
/// stored property of a Swift type does not guarantee.
///
/// Used instead of the standard library's `Mutex` because ThreadSanitizer reports accesses
/// inside `Mutex.withLock` as races (a false positive that would keep `make test-tsan` red):
/// on Linux that `Mutex` waits on a futex directly, which ThreadSanitizer does not see.
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
