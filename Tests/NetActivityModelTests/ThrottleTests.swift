import Testing
@testable import NetActivityModel

/// The throttle driven as `Indicator` drives it: on a change, `closeIfDue` then, when quiet,
/// a send and `reopen`; at the deadline, `closeIfDue` then `reopen` after a trailing send.
struct ThrottleTests {
    let start = Instant(nanoseconds: 1_000_000_000)

    @Test func aLeadingSendOpensAWindow() {
        var throttle = Throttle(window: .milliseconds(50))
        #expect(throttle.deadline == nil)
        #expect(!throttle.isOpen, "a quiet throttle lets the first change out")
        throttle.reopen(at: start)
        #expect(throttle.deadline == start + .milliseconds(50))
        #expect(throttle.isOpen)
    }

    @Test func changesWithinTheWindowWait() {
        var throttle = Throttle(window: .milliseconds(50))
        throttle.reopen(at: start)
        for offset in [Duration.milliseconds(10), .milliseconds(50) - .nanoseconds(1)] {
            #expect(throttle.closeIfDue(at: start + offset) == false)
            #expect(throttle.isOpen, "a change at +\(offset) waits")
        }
        #expect(throttle.deadline == start + .milliseconds(50), "waiting changes do not extend the window")
    }

    @Test func windowClosesOnlyWhenDue() {
        var throttle = Throttle(window: .milliseconds(50))
        throttle.reopen(at: start)
        #expect(throttle.closeIfDue(at: start + .milliseconds(49)) == false)
        #expect(throttle.isOpen)
        #expect(throttle.closeIfDue(at: start + .milliseconds(50)) == true)
        #expect(throttle.deadline == nil)
        #expect(throttle.closeIfDue(at: start + .milliseconds(60)) == false, "nothing left to close")
    }

    @Test func reopenStartsANewWindowAfterATrailingSend() {
        var throttle = Throttle(window: .milliseconds(50))
        throttle.reopen(at: start)
        let late = start + .milliseconds(53)
        #expect(throttle.closeIfDue(at: late) == true)
        throttle.reopen(at: late)
        #expect(throttle.deadline == late + .milliseconds(50))
        #expect(throttle.closeIfDue(at: late + .milliseconds(1)) == false)
        #expect(throttle.isOpen, "a change just after a trailing send waits")
    }

    @Test func quietAfterTheWindowMeansTheNextChangeIsALeadingEdge() {
        var throttle = Throttle(window: .milliseconds(50))
        throttle.reopen(at: start)
        #expect(throttle.closeIfDue(at: start + .milliseconds(50)) == true)
        let later = start + .seconds(3)
        #expect(throttle.closeIfDue(at: later) == false)
        #expect(!throttle.isOpen)
        throttle.reopen(at: later)
        #expect(throttle.deadline == later + .milliseconds(50))
    }

    @Test func anExpiredWindowClosesBeforeTheChange() {
        var throttle = Throttle(window: .milliseconds(50))
        throttle.reopen(at: start)
        let due = start + .milliseconds(50)
        #expect(throttle.closeIfDue(at: due) == true)
        #expect(!throttle.isOpen, "the change at the deadline is a leading edge")
        throttle.reopen(at: due)
        #expect(throttle.deadline == start + .milliseconds(100))
    }

    @Test(arguments: [Duration.zero, .milliseconds(-5)])
    func zeroWindowSendsEveryChange(window: Duration) {
        var throttle = Throttle(window: window)
        for step in 0..<5 {
            let now = start + .nanoseconds(step)
            #expect(throttle.closeIfDue(at: now) == false)
            #expect(!throttle.isOpen)
            throttle.reopen(at: now)
            #expect(throttle.deadline == nil)
        }
    }
}
