@testable import NetActivity
import Testing

/// The box that carries the client's loop-confined state to its loop thread.
@Suite struct LoopBoundTests {
    /// Not `Sendable`: the box is what lets work posted from another thread reach it.
    private final class Tally {
        var count = 0
    }

    @Test func workReachesTheValueOnItsLoopThreadInOrder() async throws {
        let thread = try LoopThread()
        defer { thread.finish() }
        let tally = LoopBound(Tally(), on: thread)
        #expect(!thread.isCurrent)

        let (count, onLoop) = await withCheckedContinuation { (continuation: CheckedContinuation<(Int, Bool), Never>) in
            for _ in 0..<3 { tally.perform { $0.count += 1 } }
            tally.perform { tally in continuation.resume(returning: (tally.count, thread.isCurrent)) }
        }
        #expect(count == 3)
        #expect(onLoop)
    }

    @Test func isCurrentOnlyOnItsOwnThread() async throws {
        let thread = try LoopThread()
        let other = try LoopThread()
        defer {
            thread.finish()
            other.finish()
        }
        let onOther = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            other.perform { continuation.resume(returning: thread.isCurrent) }
        }
        #expect(!onOther)
    }
}
