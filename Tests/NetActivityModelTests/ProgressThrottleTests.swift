import Testing
@testable import NetActivityModel

/// Each activity's own progress: its first change after a quiet window at once, the rest
/// merged to the window's end, with one timer for every activity.
struct ProgressThrottleTests {
    let start = Instant(nanoseconds: 1_000_000_000)

    func at(_ milliseconds: Int) -> Instant { start + .milliseconds(milliseconds) }

    @Test func firstChangeGoesOutAndTheRestWaitForTheWindowEnd() {
        var throttle = ProgressThrottle(window: .milliseconds(50))
        var sent = throttle.changed(1, at: at(0))
        #expect(sent)
        #expect(throttle.deadline == nil, "nothing pending, so no timer")
        sent = throttle.changed(1, at: at(10))
        #expect(!sent)
        sent = throttle.changed(1, at: at(20))
        #expect(!sent)
        #expect(throttle.deadline == at(50))
        var due = throttle.takeDue(at: at(49))
        #expect(due.isEmpty)
        due = throttle.takeDue(at: at(50))
        #expect(due == [1], "merged into one")
        #expect(throttle.deadline == nil)
        due = throttle.takeDue(at: at(100))
        #expect(due.isEmpty)
        sent = throttle.changed(1, at: at(100))
        #expect(sent, "quiet again")
    }

    @Test func activitiesHaveWindowsOfTheirOwn() {
        var throttle = ProgressThrottle(window: .milliseconds(50))
        var sent = throttle.changed(1, at: at(0))
        #expect(sent)
        sent = throttle.changed(2, at: at(10))
        #expect(sent, "another activity's window is quiet")
        sent = throttle.changed(2, at: at(20))
        #expect(!sent)
        sent = throttle.changed(1, at: at(30))
        #expect(!sent)
        var due = throttle.takeDue(at: at(50))
        #expect(due == [1])
        #expect(throttle.deadline == at(60))
        due = throttle.takeDue(at: at(60))
        #expect(due == [2])
    }

    @Test func anEndedActivityDropsWhatItHadPending() {
        var throttle = ProgressThrottle(window: .milliseconds(50))
        _ = throttle.changed(7, at: at(0))
        _ = throttle.changed(7, at: at(1))
        throttle.forget(7)
        #expect(throttle.deadline == nil)
        let due = throttle.takeDue(at: at(1_000))
        #expect(due.isEmpty)
    }

    @Test func zeroWindowSendsEveryChange() {
        var throttle = ProgressThrottle(window: .zero)
        for index in 0..<5 {
            let sent = throttle.changed(1, at: at(index))
            #expect(sent)
        }
        #expect(throttle.deadline == nil)
    }

    @Test func heldChangesWaitUntilTheBusDrains() {
        var throttle = ProgressThrottle(window: .milliseconds(50))
        throttle.hold(3, at: at(0))
        throttle.postpone(to: at(50))
        #expect(throttle.deadline == at(100), "postponed a window")
        let due = throttle.takeDue(at: at(100))
        #expect(due == [3])
    }

    @Test func sixtyFourThousandActivitiesCostOneTimer() {
        var throttle = ProgressThrottle(window: .milliseconds(50))
        var sentAtOnce = 0
        for id in 1...65_536 as ClosedRange<UInt32> where throttle.changed(id, at: at(0)) { sentAtOnce += 1 }
        for id in 1...65_536 as ClosedRange<UInt32> { _ = throttle.changed(id, at: at(1)) }
        #expect(sentAtOnce == 65_536)
        #expect(throttle.deadline == at(50))
        var due = throttle.takeDue(at: at(50))
        #expect(due.count == 65_536)
        due = throttle.takeDue(at: at(100))
        #expect(due.isEmpty)
        #expect(throttle.deadline == nil)
    }
}
