@testable import DBus
import Testing

/// The event loop's timer heap on its own: order, cancelling, and a bound on what cancelled
/// timers leave behind.
@Suite struct TimerQueueTests {
    @Test func timersComeOutByDeadlineAndInSchedulingOrderWithin() {
        var queue = TimerQueue()
        var fired: [Int] = []
        let deadlines: [UInt64] = [50, 10, 30, 10, 40, 20, 30]
        for (id, deadline) in deadlines.enumerated() { queue.insert(id: id, deadline: deadline) { fired.append(id) } }
        #expect(queue.earliest == 10)
        while let action = queue.popDue(at: .max, scheduledBefore: .max) { action() }
        #expect(fired == [1, 3, 5, 2, 6, 4, 0])
        #expect(queue.earliest == .max)
    }

    @Test func onlyTimersDueAndScheduledBeforeTheLimitComeOut() {
        var queue = TimerQueue()
        queue.insert(id: 1, deadline: 10) {}
        queue.insert(id: 2, deadline: 20) {}
        #expect(queue.popDue(at: 5, scheduledBefore: 3) == nil)
        #expect(queue.popDue(at: 10, scheduledBefore: 3) != nil)
        #expect(queue.popDue(at: 20, scheduledBefore: 2) == nil, "scheduled during the turn: next turn")
        #expect(queue.popDue(at: 20, scheduledBefore: 3) != nil)
    }

    @Test func cancellingTheEarliestMovesItToTheNextLiveTimer() {
        var queue = TimerQueue()
        queue.insert(id: 1, deadline: 10) {}
        queue.insert(id: 2, deadline: 20) {}
        queue.insert(id: 3, deadline: 30) {}
        queue.cancel(2)
        queue.cancel(1)
        #expect(queue.earliest == 30)
        queue.cancel(3)
        queue.cancel(3)
        #expect(queue.earliest == .max)
        #expect(queue.popDue(at: .max, scheduledBefore: .max) == nil)
    }

    @Test func timersCancelledAwayFromTheTopDoNotPileUp() {
        var queue = TimerQueue()
        queue.insert(id: 0, deadline: 1) {}
        for id in 1...100_000 {
            queue.insert(id: id, deadline: 1_000_000) {}
            queue.cancel(id)
        }
        #expect(queue.heldEntries <= 2 * 1 + 32)
        #expect(queue.earliest == 1)
    }
}
