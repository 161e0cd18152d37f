#if canImport(Glibc)
import Glibc
#endif

extension CLI {
    /// Runs `body` as a task and blocks the calling thread until it returns its status: the
    /// one door from the synchronous command line into Swift concurrency.
    static func waiting(_ body: @escaping @Sendable () async -> Int32) -> Int32 {
        let status = AwaitedStatus()
        Task.detached { status.set(await body()) }
        return status.wait()
    }
}

/// A status set on one thread and waited for on another, behind a POSIX semaphore.
private final class AwaitedStatus: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    // Written before sem_post and read after sem_wait, which order the two.
    private var status: Int32 = 1

    init() {
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func set(_ status: Int32) {
        self.status = status
        sem_post(semaphore)
    }

    func wait() -> Int32 {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
        return status
    }
}
