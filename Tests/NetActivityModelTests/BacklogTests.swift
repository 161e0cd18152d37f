import Testing
@testable import NetActivityModel

/// While the bus has not taken what is queued (`holdsThrottled`), throttled values wait,
/// merged, instead of piling up as signals; Active and Visible still go out at once.
struct BacklogTests {
    let clock = ManualClock()

    @Test func heldChangesGoOutMergedOnceTheBusDrains() throws {
        var indicator = Indicator(settings: .init(activationDelay: .seconds(60)), clock: clock)
        let id = try indicator.begin(owner: ":1.1", label: "a").id
        clock.advance(by: .milliseconds(100))
        #expect(indicator.advance().isEmpty)

        indicator.holdsThrottled = true
        var announcements: [Announcement] = []
        for step in 1...100 as ClosedRange<UInt64> {
            announcements.append(try indicator.update(id, by: ":1.1", completed: step, total: 100))
            announcements.append(try indicator.push())
            clock.advance(by: .milliseconds(10))
            if let deadline = indicator.nextDeadline, deadline <= clock.now { announcements.append(indicator.advance()) }
        }
        #expect(announcements.allSatisfy { $0.count == nil && $0.progress == nil && $0.progressOf.isEmpty && !$0.activitiesChanged },
                "nothing throttled went out while held")
        #expect(indicator.nextDeadline != nil, "the held values wait for a window's end")

        indicator.holdsThrottled = false
        clock.advance(by: .milliseconds(50))
        let drained = indicator.advance()
        #expect(drained.count == 101)
        #expect(drained.progress == 1.0)
        #expect(drained.progressOf == [id], "one merged announcement for the activity")
        #expect(drained.activitiesChanged)
        #expect(indicator.ledger.activity(id)?.completed == 100)
    }

    @Test func activeStillGoesOutAtOnceWithItsCount() throws {
        var indicator = Indicator(settings: .init(activationDelay: .seconds(60)), clock: clock)
        indicator.holdsThrottled = true
        #expect(try indicator.push() == Announcement(active: true, count: 1), "consistency beats the backlog")
        #expect(try indicator.push().isEmpty)
        #expect(try indicator.pop().isEmpty)
        #expect(try indicator.pop() == Announcement(active: false, count: 0))
    }
}
