#if canImport(Glibc)
import Glibc
#endif

/// A thread of this process, started for work that runs as long as the process does. The
/// corresponding C functions are `pthread_create`, `pthread_self` and `pthread_equal`.
public struct PlatformThread: Sendable {
    private let raw: pthread_t

    /// The calling thread.
    public static var current: PlatformThread { PlatformThread(raw: system_pthread_self()) }

    /// Starts `body` on a new detached thread: nobody joins it, it ends when `body` returns.
    public static func detached(_ body: @escaping @Sendable () -> Void) throws(Errno) -> PlatformThread {
        final class Work {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let started = system_pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<Work>.fromOpaque(context).takeRetainedValue().body()
            return nil
        }, context)
        guard started == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            throw Errno(rawValue: started)
        }
        system_pthread_detach(thread)
        return PlatformThread(raw: thread)
    }

    /// Whether the calling thread is this one.
    public var isCurrent: Bool { system_pthread_equal(system_pthread_self(), raw) != 0 }
}

/// A count that one thread waits on until another raises it: the door from an asynchronous
/// task back to a thread that must block. The corresponding C functions are `sem_init`,
/// `sem_post` and `sem_wait`.
public final class Semaphore: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    public init() {
        system_sem_init(semaphore, 0, 0)
    }

    deinit {
        system_sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Raises the count by one, waking one waiter.
    public func signal() {
        system_sem_post(semaphore)
    }

    /// Waits until the count is above zero, then lowers it by one.
    public func wait() {
        system_sem_wait(semaphore)
    }
}
