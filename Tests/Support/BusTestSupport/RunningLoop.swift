import DBus
import Foundation

/// An `EventLoop` running on a Foundation `Thread` of its own, for tests that need the loop
/// to answer while the test thread blocks, or that run a program's loop as the program would.
public final class RunningLoop: Sendable {
    public let loop: EventLoop
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `loop` on a new thread and returns once it is running (so a `stop()` cannot
    /// come before `run()`).
    ///
    /// - Throws: `BusTestError` if the loop does not run its first posted work within 10 s.
    public init(_ loop: EventLoop, name: String = "event loop") throws {
        self.loop = loop
        let started = DispatchSemaphore(value: 0)
        let finished = finished
        loop.post { started.signal() }
        let thread = Thread {
            loop.run()
            finished.signal()
        }
        thread.name = name
        thread.start()
        guard started.wait(timeout: .now() + 10) == .success else {
            throw BusTestError("the event loop did not start within 10 s")
        }
    }

    /// Stops the loop from this thread and waits for `run()` to return.
    ///
    /// - Throws: `BusTestError` if `run()` is still going after `timeout`.
    public func stop(timeout: Duration = .seconds(10)) throws {
        loop.stop()
        try waitForExit(timeout: timeout)
    }

    /// Waits for `run()` to return without asking it to.
    public func waitForExit(timeout: Duration) throws {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        guard finished.wait(timeout: .now() + seconds) == .success else {
            throw BusTestError("the event loop's run() did not return within \(timeout)")
        }
    }

    /// Runs `work` on the loop and waits for it to finish.
    ///
    /// - Throws: `BusTestError` if it has not run within 10 s; whatever `work` throws.
    public func sync<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) throws -> Result {
        let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.post {
            let result = Swift.Result { try work() }
            outcome.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else {
            throw BusTestError("work posted to the event loop did not run within 10 s")
        }
        return try outcome.withLock { $0! }.get()
    }
}
