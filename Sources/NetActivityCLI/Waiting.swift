import Platform

extension CLI {
    /// Runs `body` as a task and blocks the calling thread until it returns its status: the
    /// one door from the synchronous command line into Swift concurrency.
    static func waiting(_ body: @escaping @Sendable () async -> Int32) -> Int32 {
        let status = AwaitedStatus()
        Task.detached { status.set(await body()) }
        return status.wait()
    }
}

/// A status set on one thread and waited for on another.
private final class AwaitedStatus: @unchecked Sendable {
    private let semaphore = Semaphore()
    // Written before the semaphore is signalled and read after the wait, which order the two.
    private var status: Int32 = 1

    func set(_ status: Int32) {
        self.status = status
        semaphore.signal()
    }

    func wait() -> Int32 {
        semaphore.wait()
        return status
    }
}
