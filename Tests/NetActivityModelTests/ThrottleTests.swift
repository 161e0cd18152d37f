import Testing
@testable import NetActivityModel

struct ThrottleTests {
    let start = Instant(nanoseconds: 1_000_000_000)

    @Test func firstChangeGoesOutAndOpensAWindow() {
        var throttle = Throttle(window: .milliseconds(50))
        #expect(throttle.deadline == nil)
        #expect(throttle.changed(at: start) == true)
        #expect(throttle.deadline == start + .milliseconds(50))
        #expect(throttle.isOpen)
    }

    @Test func changesWithinTheWindowWait() {
        var throttle = Throttle(window: .milliseconds(50))
        _ = throttle.changed(at: start)
        #expect(throttle.changed(at: start + .milliseconds(10)) == false)
        #expect(throttle.changed(at: start + (.milliseconds(50) - .nanoseconds(1))) == false)
        #expect(throttle.deadline == start + .milliseconds(50), "waiting changes do not extend the window")
    }

    @Test func windowClosesOnlyWhenDue() {
        var throttle = Throttle(window: .milliseconds(50))
        _ = throttle.changed(at: start)
        #expect(throttle.closeIfDue(at: start + .milliseconds(49)) == false)
        #expect(throttle.isOpen)
        #expect(throttle.closeIfDue(at: start + .milliseconds(50)) == true)
        #expect(throttle.deadline == nil)
        #expect(throttle.closeIfDue(at: start + .milliseconds(60)) == false, "nothing left to close")
    }

    @Test func reopenStartsANewWindowAfterATrailingSend() {
        var throttle = Throttle(window: .milliseconds(50))
        _ = throttle.changed(at: start)
        let late = start + .milliseconds(53)
        #expect(throttle.closeIfDue(at: late) == true)
        throttle.reopen(at: late)
        #expect(throttle.deadline == late + .milliseconds(50))
        #expect(throttle.changed(at: late + .milliseconds(1)) == false)
    }

    @Test func quietAfterTheWindowMeansTheNextChangeIsALeadingEdge() {
        var throttle = Throttle(window: .milliseconds(50))
        _ = throttle.changed(at: start)
        #expect(throttle.closeIfDue(at: start + .milliseconds(50)) == true)
        #expect(throttle.changed(at: start + .seconds(3)) == true)
        #expect(throttle.deadline == start + .seconds(3) + .milliseconds(50))
    }

    @Test func anExpiredWindowCountsAsClosed() {
        var throttle = Throttle(window: .milliseconds(50))
        _ = throttle.changed(at: start)
        #expect(throttle.changed(at: start + .milliseconds(50)) == true)
        #expect(throttle.deadline == start + .milliseconds(100))
    }

    @Test(arguments: [Duration.zero, .milliseconds(-5)])
    func zeroWindowSendsEveryChange(window: Duration) {
        var throttle = Throttle(window: window)
        for step in 0..<5 {
            #expect(throttle.changed(at: start + .nanoseconds(step)) == true)
            #expect(throttle.deadline == nil)
        }
        throttle.reopen(at: start)
        #expect(throttle.deadline == nil)
    }
}
