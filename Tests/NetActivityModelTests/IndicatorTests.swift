import Testing
@testable import NetActivityModel

/// One step of an indicator script.
enum Step: Sendable, CustomStringConvertible {
    case push
    case pop
    /// Move the clock on, then call `advance()`.
    case wait(Duration)

    var description: String {
        switch self {
        case .push: "push"
        case .pop: "pop"
        case .wait(let duration): "wait \(duration)"
        }
    }
}

struct IndicatorTests {
    let clock = ManualClock()

    func makeIndicator(_ settings: IndicatorSettings = .init()) -> Indicator {
        Indicator(settings: settings, clock: clock)
    }

    // MARK: - Push and pop with the default timing (50 ms, 1 s, 170 ms)

    @Test(arguments: [
        ([.push], [Announcement(active: true, count: 1)]),
        // Count travels with Active whatever the throttle says, so the two never disagree.
        ([.push, .pop], [Announcement(active: true, count: 1), Announcement(active: false, count: 0)]),
        (
            [.push, .pop, .wait(.milliseconds(50))],
            [Announcement(active: true, count: 1), Announcement(active: false, count: 0), Announcement()]
        ),
        (
            [.push, .push, .pop, .wait(.milliseconds(50))],
            [Announcement(active: true, count: 1), Announcement(), Announcement(), Announcement()]
        ),
        (
            [.push, .pop, .push, .push, .wait(.milliseconds(50))],
            [
                Announcement(active: true, count: 1), Announcement(active: false, count: 0),
                Announcement(active: true, count: 1), Announcement(), Announcement(count: 2),
            ]
        ),
        ([.push, .wait(.seconds(1))], [Announcement(active: true, count: 1), Announcement(visible: true)]),
        (
            [.push, .wait(.seconds(1)), .pop, .wait(.milliseconds(170))],
            [
                Announcement(active: true, count: 1), Announcement(visible: true),
                Announcement(active: false, count: 0), Announcement(visible: false),
            ]
        ),
        (
            [.push, .wait(.seconds(1)), .pop, .wait(.milliseconds(169)), .push, .wait(.seconds(5))],
            [
                Announcement(active: true, count: 1), Announcement(visible: true),
                Announcement(active: false, count: 0), Announcement(),
                Announcement(active: true, count: 1), Announcement(),
            ]
        ),
        (
            [.push, .wait(.milliseconds(999)), .pop, .wait(.seconds(5))],
            [
                Announcement(active: true, count: 1), Announcement(),
                Announcement(active: false, count: 0), Announcement(),
            ]
        ),
    ] as [([Step], [Announcement])])
    func pushPopScripts(steps: [Step], expected: [Announcement]) throws {
        var indicator = makeIndicator()
        var announcements: [Announcement] = []
        for step in steps {
            switch step {
            case .push: announcements.append(try indicator.push())
            case .pop: announcements.append(try indicator.pop())
            case .wait(let duration):
                clock.advance(by: duration)
                announcements.append(indicator.advance())
            }
        }
        #expect(announcements == expected)
    }

    // MARK: - Deadlines

    @Test func idleMeansNoDeadline() throws {
        var indicator = makeIndicator()
        #expect(indicator.nextDeadline == nil)
        #expect(indicator.advance().isEmpty)
        #expect(indicator.state == .idle)

        _ = try indicator.push()
        let start = clock.now
        #expect(indicator.nextDeadline == start + .milliseconds(50))
        _ = try indicator.push()
        clock.advance(by: .milliseconds(50))
        #expect(indicator.advance() == Announcement(count: 2))
        #expect(indicator.nextDeadline == start + .milliseconds(100), "the trailing send opened a window")
        clock.advance(by: .milliseconds(50))
        #expect(indicator.advance().isEmpty)
        _ = try indicator.pop()
        _ = try indicator.pop()
        clock.advance(by: .milliseconds(170))
        _ = indicator.advance()
        #expect(indicator.nextDeadline == nil)
    }

    @Test func nextDeadlineIsTheEarlierOfThrottleAndDebounce() throws {
        var indicator = makeIndicator(.init(throttle: .seconds(2)))
        _ = try indicator.push()
        #expect(indicator.nextDeadline == clock.now + .seconds(1))
        clock.advance(by: .seconds(1))
        #expect(indicator.advance() == Announcement(visible: true))
        #expect(indicator.nextDeadline == clock.now + .seconds(1))
    }

    @Test func advanceBeforeTheDeadlineDoesNothing() throws {
        var indicator = makeIndicator()
        _ = try indicator.push()
        _ = try indicator.push()
        clock.advance(by: .milliseconds(49))
        #expect(indicator.advance().isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(indicator.advance() == Announcement(count: 2))
    }

    @Test func aMutationAfterAMissedDeadlineIsALeadingEdge() throws {
        var indicator = makeIndicator()
        _ = try indicator.push()
        _ = try indicator.push()
        clock.advance(by: .milliseconds(60))
        #expect(try indicator.push() == Announcement(count: 3))
        #expect(indicator.nextDeadline == clock.now + .milliseconds(50))
    }

    @Test func aMutationAfterAMissedFlipAnnouncesTheFlip() throws {
        var indicator = makeIndicator()
        _ = try indicator.push()
        clock.advance(by: .seconds(1))
        // Active lasted the whole activation delay, so Visible turned true before this pop.
        #expect(try indicator.pop() == Announcement(active: false, visible: true, count: 0))
        clock.advance(by: .milliseconds(170))
        #expect(indicator.advance() == Announcement(visible: false))
    }

    // MARK: - Zero settings

    @Test func zeroDelaysAnnounceVisibleWithActive() throws {
        var indicator = makeIndicator(.init(activationDelay: .zero, completionDelay: .zero))
        #expect(try indicator.push() == Announcement(active: true, visible: true, count: 1))
        #expect(try indicator.pop() == Announcement(active: false, visible: false, count: 0))
        #expect(indicator.state.visible == false)
    }

    @Test func zeroThrottleSendsEveryChangeWithoutDeadlines() throws {
        var indicator = makeIndicator(.init(throttle: .zero, activationDelay: .zero, completionDelay: .zero))
        #expect(try indicator.push() == Announcement(active: true, visible: true, count: 1))
        #expect(try indicator.push() == Announcement(count: 2))
        #expect(try indicator.pop() == Announcement(count: 1))
        let id = try indicator.begin(owner: ":1.1", label: "a").id
        #expect(try indicator.update(id, by: ":1.1", completed: 1, total: 4).progress == 0.25)
        #expect(indicator.nextDeadline == nil)
    }

    // MARK: - Activities

    @Test func beginAnnouncesTheActivityWithItsStartTime() throws {
        var indicator = makeIndicator()
        let (id, announcement) = try indicator.begin(owner: ":1.9", label: "Downloading")
        let activity = Activity(
            id: id, owner: ":1.9", label: "Downloading", completed: 0, total: 0, started: clock.wallMicroseconds
        )
        #expect(announcement == Announcement(active: true, count: 1, activitiesChanged: true))
        #expect(indicator.ledger.activity(id) == activity)
    }

    @Test func updateAnnouncesProgressAndActivitiesAtTheWindowEnd() throws {
        var indicator = makeIndicator()
        let id = try indicator.begin(owner: ":1.1", label: "a").id
        let update = try indicator.update(id, by: ":1.1", completed: 1, total: 2)
        #expect(update.mainIsEmpty, "the main object's window is open")
        #expect(update.progressOf == [id], "the activity's own window was quiet")
        #expect(indicator.state.progress == 0.5)
        clock.advance(by: .milliseconds(50))
        let trailing = indicator.advance()
        #expect(trailing.progress == 0.5)
        #expect(trailing.activitiesChanged)
        #expect(trailing.progressOf.isEmpty, "the activity's own progress went out at once")
        #expect(trailing.count == nil && trailing.active == nil)
    }

    @Test func beginThenEndWithinAWindowOnlyInvalidatesActivities() throws {
        var indicator = makeIndicator()
        let first = try indicator.begin(owner: ":1.1", label: "a").id
        let second = try indicator.begin(owner: ":1.1", label: "b").id
        #expect(try indicator.end(second, by: ":1.1").isEmpty)
        clock.advance(by: .milliseconds(50))
        // Only a revision is compared, never the list: a begin and end in one window invalidates it.
        #expect(indicator.advance() == Announcement(activitiesChanged: true))
        #expect(indicator.nextDeadline == clock.now + .milliseconds(50), "the invalidation opened a window")
        #expect(indicator.state.activities.map(\.id) == [first])
    }

    @Test func releasingAThousandActivitiesIsOneAnnouncement() throws {
        var indicator = makeIndicator()
        for index in 0..<Ledger.maximumActivitiesPerOwner {
            _ = try indicator.begin(owner: ":1.1", label: "transfer \(index)")
        }
        clock.advance(by: .milliseconds(50))
        #expect(indicator.advance().count == 1_024)
        clock.advance(by: .milliseconds(50))
        #expect(indicator.advance().isEmpty)

        let (ended, announcement) = indicator.release(owner: ":1.1")
        #expect(ended == Array(1...1_024))
        #expect(announcement == Announcement(active: false, count: 0, activitiesChanged: true))
        #expect(indicator.ledger.count == 0)
        #expect(indicator.release(owner: ":1.1").announcement.isEmpty)
    }

    // MARK: - Refused calls

    @Test func refusedCallsAnnounceAndChangeNothing() throws {
        var indicator = makeIndicator()
        #expect(throws: LedgerError.notActive) { try indicator.pop() }
        #expect(indicator.state == .idle)
        #expect(indicator.nextDeadline == nil)

        let id = try indicator.begin(owner: ":1.1", label: "a").id
        let state = indicator.state
        let deadline = indicator.nextDeadline
        #expect(throws: LedgerError.notOwner(id)) {
            try indicator.update(id, by: ":1.2", completed: 1, total: 2)
        }
        #expect(throws: LedgerError.completedExceedsTotal(completed: 3, total: 2)) {
            try indicator.update(id, by: ":1.1", completed: 3, total: 2)
        }
        #expect(throws: LedgerError.notOwner(id)) { try indicator.end(id, by: ":1.2") }
        #expect(indicator.state == state)
        #expect(indicator.nextDeadline == deadline)
        clock.advance(by: .milliseconds(50))
        #expect(indicator.advance().isEmpty, "nothing was left waiting for the window's end")
    }

    @Test func refusedCallsLeaveDueAnnouncementsForAdvance() throws {
        var indicator = makeIndicator()
        let id = try indicator.begin(owner: ":1.1", label: "a").id
        _ = try indicator.end(id, by: ":1.1")
        let deadline = indicator.nextDeadline
        clock.advance(by: .milliseconds(60))

        #expect(throws: LedgerError.notActive) { try indicator.pop() }
        #expect(throws: LedgerError.unknownActivity(id)) { try indicator.end(id, by: ":1.1") }
        #expect(throws: LedgerError.labelTooLong(bytes: 257, limit: 256)) {
            try indicator.begin(owner: ":1.1", label: String(repeating: "x", count: 257))
        }
        #expect(indicator.nextDeadline == deadline)
        #expect(indicator.advance() == Announcement(activitiesChanged: true), "Count went out with Active")
    }

    // MARK: - Floods

    @Test func aFloodWithinOneWindowAnnouncesCountAtMostTwice() throws {
        var indicator = makeIndicator()
        var announcements: [Announcement] = []
        for _ in 0..<10_000 {
            announcements.append(try indicator.push())
            announcements.append(try indicator.pop())
            clock.advance(by: .nanoseconds(1))
        }
        clock.advance(by: .milliseconds(50))
        announcements.append(indicator.advance())
        announcements.append(indicator.advance())

        #expect(announcements.compactMap(\.active).count == 20_000, "every Active transition goes out")
        #expect(
            announcements.allSatisfy { $0.active == nil ? $0.count == nil : $0.count == ($0.active == true ? 1 : 0) },
            "Count goes out with Active, and only then")
        #expect(announcements.allSatisfy { $0.visible == nil })
        clock.advance(by: .milliseconds(50))
        #expect(indicator.advance().isEmpty)
        #expect(indicator.nextDeadline == nil)
    }

    @Test func aSustainedFloodAnnouncesCountOncePerWindow() throws {
        var indicator = makeIndicator(.init(activationDelay: .seconds(60)))
        var countAnnouncements = 0
        // One push per millisecond for a second: 20 windows of 50 ms.
        for _ in 0..<1_000 {
            clock.advance(by: .milliseconds(1))
            if let deadline = indicator.nextDeadline, deadline <= clock.now {
                countAnnouncements += indicator.advance().count == nil ? 0 : 1
            }
            countAnnouncements += try indicator.push().count == nil ? 0 : 1
        }
        #expect(countAnnouncements <= 21)
        #expect(countAnnouncements >= 19)
    }
}
