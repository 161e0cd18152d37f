import NetActivity
import NetActivityTray
import Testing

/// At most one new drawing of the ring per interval; everything else passes at once.
@Suite struct RingPacerTests {
    let start = ContinuousClock.now

    private func look(_ progress: Double?, visible: Bool = true) -> TrayAppearance {
        TrayAppearance(IndicatorSnapshot(active: true, visible: visible, count: 1, progress: progress), options: TrayOptions())
    }

    @Test func aNewPercentTooSoonIsHeldUntilTheIntervalHasPassed() {
        var pacer = RingPacer(interval: .milliseconds(250))
        let first = pacer.pace(look(0.10), replacing: look(nil), at: start)
        #expect(first.show.ring == 10 && first.retryAt == nil)

        let soon = pacer.pace(look(0.11), replacing: first.show, at: start + .milliseconds(100))
        #expect(soon.show.ring == 10)
        #expect(soon.retryAt == start + .milliseconds(250))

        let due = pacer.pace(look(0.12), replacing: soon.show, at: start + .milliseconds(250))
        #expect(due.show.ring == 12 && due.retryAt == nil)
    }

    @Test func theSamePercentAndTheRingGoingAwayPassAtOnce() {
        var pacer = RingPacer(interval: .milliseconds(250))
        let drawn = pacer.pace(look(0.50), replacing: look(nil), at: start).show
        // 50.4% is still 50%: nothing to draw, nothing held.
        let same = pacer.pace(look(0.504), replacing: drawn, at: start + .milliseconds(10))
        #expect(same.show == look(0.504) && same.retryAt == nil)
        // Progress unknown again: the theme icon comes back at once.
        let unknown = pacer.pace(look(nil), replacing: drawn, at: start + .milliseconds(20))
        #expect(unknown.show.ring == nil && unknown.show.iconName == TrayIcons.active)
        #expect(unknown.retryAt == nil)
        let hidden = pacer.pace(look(0.6, visible: false), replacing: drawn, at: start + .milliseconds(30))
        #expect(hidden.show.status == .passive && hidden.retryAt == nil)
    }

    @Test func aHeldDrawingStillLetsTheRestThrough() {
        var pacer = RingPacer(interval: .milliseconds(250))
        let drawn = pacer.pace(look(0.20), replacing: look(nil), at: start).show
        var wanted = look(0.30)
        wanted.toolTip.description = "Sync — 30%"
        let held = pacer.pace(wanted, replacing: drawn, at: start + .milliseconds(50))
        #expect(held.show.ring == 20)
        #expect(held.show.toolTip.description == "Sync — 30%")
        #expect(held.show.iconName == "")
    }
}
