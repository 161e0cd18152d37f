import Testing
@testable import NetActivityModel

struct VisibilityDebounceTests {
    let start = Instant(nanoseconds: 1_000_000_000)

    func makeDebounce() -> VisibilityDebounce {
        VisibilityDebounce(activationDelay: .seconds(1), completionDelay: .milliseconds(170))
    }

    /// A debounce that has shown the indicator since `start` (Active since 1 s before it).
    func makeVisible() -> VisibilityDebounce {
        var debounce = makeDebounce()
        _ = debounce.activeChanged(to: true, at: Instant(nanoseconds: 0))
        _ = debounce.advance(to: start)
        return debounce
    }

    @Test func startsHidden() {
        let debounce = makeDebounce()
        #expect(!debounce.isVisible)
        #expect(debounce.deadline == nil)
    }

    @Test func showsOnceActiveHasLastedTheActivationDelay() {
        var debounce = makeDebounce()
        #expect(debounce.activeChanged(to: true, at: start) == false)
        #expect(debounce.deadline == start + .seconds(1))
        #expect(debounce.advance(to: start + (.seconds(1) - .nanoseconds(1))) == false)
        #expect(!debounce.isVisible)
        #expect(debounce.advance(to: start + .seconds(1)) == true)
        #expect(debounce.isVisible)
        #expect(debounce.deadline == nil)
        #expect(debounce.advance(to: start + .seconds(2)) == false)
    }

    @Test func activityShorterThanTheActivationDelayNeverShows() {
        var debounce = makeDebounce()
        _ = debounce.activeChanged(to: true, at: start)
        _ = debounce.activeChanged(to: false, at: start + .milliseconds(999))
        #expect(debounce.deadline == nil)
        #expect(debounce.advance(to: start + .seconds(10)) == false)
        #expect(!debounce.isVisible)
    }

    @Test func repeatedActiveDoesNotRestartTheDelay() {
        var debounce = makeDebounce()
        _ = debounce.activeChanged(to: true, at: start)
        #expect(debounce.activeChanged(to: true, at: start + .milliseconds(500)) == false)
        #expect(debounce.deadline == start + .seconds(1))
    }

    @Test func aNewBurstRestartsTheActivationDelay() {
        var debounce = makeDebounce()
        _ = debounce.activeChanged(to: true, at: start)
        _ = debounce.activeChanged(to: false, at: start + .milliseconds(600))
        _ = debounce.activeChanged(to: true, at: start + .milliseconds(700))
        #expect(debounce.deadline == start + .milliseconds(1_700))
        #expect(debounce.advance(to: start + .seconds(1)) == false)
        #expect(debounce.advance(to: start + .milliseconds(1_700)) == true)
        #expect(debounce.isVisible)
    }

    @Test func hidesOnceInactiveHasLastedTheCompletionDelay() {
        var debounce = makeVisible()
        #expect(debounce.activeChanged(to: false, at: start) == false)
        #expect(debounce.deadline == start + .milliseconds(170))
        #expect(debounce.advance(to: start + (.milliseconds(170) - .nanoseconds(1))) == false)
        #expect(debounce.isVisible)
        #expect(debounce.advance(to: start + .milliseconds(170)) == true)
        #expect(!debounce.isVisible)
        #expect(debounce.deadline == nil)
    }

    @Test func aGapShorterThanTheCompletionDelayNeverHides() {
        var debounce = makeVisible()
        _ = debounce.activeChanged(to: false, at: start)
        _ = debounce.activeChanged(to: true, at: start + .milliseconds(169))
        #expect(debounce.deadline == nil)
        #expect(debounce.advance(to: start + .seconds(10)) == false)
        #expect(debounce.isVisible)
    }

    @Test func aLateAdvanceStillFlips() {
        var debounce = makeDebounce()
        _ = debounce.activeChanged(to: true, at: start)
        #expect(debounce.advance(to: start + .seconds(60)) == true)
        #expect(debounce.isVisible)
    }

    @Test func zeroActivationDelayShowsAtOnce() {
        var debounce = VisibilityDebounce(activationDelay: .zero, completionDelay: .milliseconds(170))
        #expect(debounce.activeChanged(to: true, at: start) == true)
        #expect(debounce.isVisible)
        #expect(debounce.deadline == nil)
        #expect(debounce.activeChanged(to: false, at: start) == false)
        #expect(debounce.deadline == start + .milliseconds(170))
    }

    @Test func zeroCompletionDelayHidesAtOnce() {
        var debounce = VisibilityDebounce(activationDelay: .seconds(1), completionDelay: .zero)
        _ = debounce.activeChanged(to: true, at: start)
        _ = debounce.advance(to: start + .seconds(1))
        #expect(debounce.activeChanged(to: false, at: start + .seconds(2)) == true)
        #expect(!debounce.isVisible)
        #expect(debounce.deadline == nil)
    }

    @Test func zeroDelaysFollowActiveExactly() {
        var debounce = VisibilityDebounce(activationDelay: .zero, completionDelay: .zero)
        for (step, active) in [true, false, true, false].enumerated() {
            #expect(debounce.activeChanged(to: active, at: start + .nanoseconds(step)) == true)
            #expect(debounce.isVisible == active)
            #expect(debounce.deadline == nil)
        }
    }
}
