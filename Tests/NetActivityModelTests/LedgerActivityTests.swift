import Testing
@testable import NetActivityModel

struct LedgerActivityTests {
    // MARK: - Begin

    @Test func beginRecordsTheActivity() throws {
        var ledger = Ledger()
        let id = try ledger.begin(owner: ":1.7", label: "Downloading", started: 42)
        let expected = Activity(id: id, owner: ":1.7", label: "Downloading", completed: 0, total: 0, started: 42)
        #expect(ledger.activity(id) == expected)
        #expect(ledger.activities == [expected])
        #expect(ledger.activityCount(owner: ":1.7") == 1)
        #expect(ledger.count == 1)
        #expect(ledger.isActive)
    }

    @Test(arguments: [
        ("", 0),
        (String(repeating: "a", count: 256), 256),
        (String(repeating: "a", count: 257), 257),
        (String(repeating: "é", count: 128), 256),
        (String(repeating: "é", count: 129), 258),
        (String(repeating: "€", count: 85), 255),
        (String(repeating: "€", count: 86), 258),
        (String(repeating: "🙂", count: 64), 256),
        (String(repeating: "🙂", count: 65), 260),
        (String(repeating: "a", count: 255) + "é", 257),
        (String(repeating: "a", count: 254) + "é", 256),
    ])
    func labelLimitCountsUTF8Bytes(label: String, bytes: Int) throws {
        var ledger = Ledger()
        if bytes <= Ledger.maximumLabelBytes {
            let id = try ledger.begin(owner: ":1.1", label: label, started: 0)
            #expect(ledger.activity(id)?.label == label)
        } else {
            #expect(throws: LedgerError.labelTooLong(bytes: bytes, limit: 256)) {
                try ledger.begin(owner: ":1.1", label: label, started: 0)
            }
            #expect(ledger.activities.isEmpty)
        }
    }

    @Test func perOwnerCapLeavesOtherOwnersAlone() throws {
        var ledger = Ledger()
        _ = try ledger.begin(Ledger.maximumActivitiesPerOwner, owner: ":1.1")
        let before = LedgerSnapshot(ledger)
        #expect(throws: LedgerError.ownerLimit(owner: ":1.1", limit: 1_024)) {
            try ledger.begin(owner: ":1.1", label: "one too many", started: 0)
        }
        #expect(LedgerSnapshot(ledger) == before)

        let other = try ledger.begin(owner: ":1.2", label: "fine", started: 0)
        #expect(ledger.activityCount(owner: ":1.2") == 1)
        #expect(other == 1_025, "the refused call used no id")

        let first = try #require(ledger.activities.first)
        try ledger.end(first.id, by: ":1.1")
        _ = try ledger.begin(owner: ":1.1", label: "room again", started: 0)
        #expect(ledger.activityCount(owner: ":1.1") == 1_024)
    }

    @Test func globalCapThrowsActivityLimit() throws {
        var ledger = Ledger(firstActivityID: 1, activityLimit: 3)
        _ = try ledger.begin(2, owner: ":1.1")
        _ = try ledger.begin(owner: ":1.2", label: "", started: 0)
        #expect(throws: LedgerError.activityLimit(limit: 3)) {
            try ledger.begin(owner: ":1.3", label: "", started: 0)
        }
        #expect(ledger.count == 3)
    }

    @Test func idsStartAtOneAndIncrease() throws {
        var ledger = Ledger()
        let ids = try ledger.begin(5, owner: ":1.1")
        #expect(ids == [1, 2, 3, 4, 5])
    }

    @Test func idsAreNeverReusedAfterEndOrRelease() throws {
        var ledger = Ledger()
        var seen: [ActivityID] = []
        for _ in 0..<3 {
            let ids = try ledger.begin(100, owner: ":1.1")
            seen += ids
            try ledger.end(ids[99], by: ":1.1")
            ledger.release(owner: ":1.1")
        }
        seen.append(try ledger.begin(owner: ":1.2", label: "", started: 0))
        #expect(seen == Array(1...301))
    }

    @Test func idsExhaustedAfterTheLastId() throws {
        var ledger = Ledger(firstActivityID: .max - 1, activityLimit: Ledger.maximumActivities)
        #expect(try ledger.begin(owner: ":1.1", label: "", started: 0) == .max - 1)
        #expect(try ledger.begin(owner: ":1.1", label: "", started: 0) == .max)
        ledger.release(owner: ":1.1")
        #expect(throws: LedgerError.idsExhausted) {
            try ledger.begin(owner: ":1.1", label: "", started: 0)
        }
        #expect(ledger.activities.isEmpty)
    }

    @Test func beginChecksLabelBeforeLimits() throws {
        var ledger = Ledger()
        _ = try ledger.begin(Ledger.maximumActivitiesPerOwner, owner: ":1.1")
        let label = String(repeating: "x", count: 300)
        #expect(throws: LedgerError.labelTooLong(bytes: 300, limit: 256)) {
            try ledger.begin(owner: ":1.1", label: label, started: 0)
        }
    }

    // MARK: - Update and end

    @Test func updateSetsProgress() throws {
        var ledger = Ledger()
        let id = try ledger.begin(owner: ":1.1", label: "", started: 0)
        try ledger.update(id, by: ":1.1", completed: 25, total: 100)
        #expect(ledger.activity(id)?.completed == 25)
        #expect(ledger.activity(id)?.total == 100)
        try ledger.update(id, by: ":1.1", completed: 100, total: 100)
        #expect(ledger.activity(id)?.completed == 100)
        try ledger.update(id, by: ":1.1", completed: 5_000, total: 0)
        #expect(ledger.activity(id)?.completed == 5_000)
        #expect(ledger.activity(id)?.total == 0)
    }

    enum Call: String, CaseIterable {
        case update, end
    }

    /// (id, caller, completed, total, expected error); activity 1 belongs to :1.1.
    static let refusals: [(ActivityID, String, UInt64, UInt64, LedgerError)] = [
        (99, ":1.1", 0, 0, .unknownActivity(99)),
        (99, ":1.2", 10, 5, .unknownActivity(99)),
        (0, ":1.1", 0, 0, .unknownActivity(0)),
        (1, ":1.2", 0, 0, .notOwner(1)),
        (1, ":1.2", 10, 5, .notOwner(1)),
        (1, ":1.1", 10, 5, .completedExceedsTotal(completed: 10, total: 5)),
    ]

    @Test(arguments: refusals)
    func updateErrorsComeInOrderAndChangeNothing(
        id: ActivityID, caller: String, completed: UInt64, total: UInt64, error: LedgerError
    ) throws {
        var ledger = Ledger()
        let own = try ledger.begin(owner: ":1.1", label: "", started: 0)
        try ledger.update(own, by: ":1.1", completed: 1, total: 2)
        let before = LedgerSnapshot(ledger)
        #expect(throws: error) {
            try ledger.update(id, by: caller, completed: completed, total: total)
        }
        #expect(LedgerSnapshot(ledger) == before)
    }

    @Test(arguments: [
        (ActivityID(99), ":1.1", LedgerError.unknownActivity(99)),
        (99, ":1.2", .unknownActivity(99)),
        (1, ":1.2", .notOwner(1)),
    ])
    func endErrorsComeInOrderAndChangeNothing(id: ActivityID, caller: String, error: LedgerError) throws {
        var ledger = Ledger()
        _ = try ledger.begin(owner: ":1.1", label: "", started: 0)
        let before = LedgerSnapshot(ledger)
        #expect(throws: error) { try ledger.end(id, by: caller) }
        #expect(LedgerSnapshot(ledger) == before)
    }

    @Test(arguments: Call.allCases)
    func endedActivitiesAreUnknown(call: Call) throws {
        var ledger = Ledger()
        let id = try ledger.begin(owner: ":1.1", label: "", started: 0)
        try ledger.end(id, by: ":1.1")
        #expect(ledger.activity(id) == nil)
        #expect(ledger.activityCount(owner: ":1.1") == 0)
        #expect(throws: LedgerError.unknownActivity(id)) {
            switch call {
            case .update: try ledger.update(id, by: ":1.1", completed: 0, total: 0)
            case .end: try ledger.end(id, by: ":1.1")
            }
        }
    }

    /// An owner that ended everything keeps its (empty) entry until it leaves; neither the
    /// next begin nor the release may see a trace of the ended activities.
    @Test(arguments: [1, 100])
    func ownerWhoEndedEverythingStartsAfreshAndReleasesNothing(activities: Int) throws {
        var ledger = Ledger()
        for _ in 0..<3 {
            let ids = try ledger.begin(activities, owner: ":1.1")
            for id in ids { try ledger.end(id, by: ":1.1") }
            #expect(ledger.activityCount(owner: ":1.1") == 0)
        }
        let id = try ledger.begin(owner: ":1.1", label: "again", started: 0)
        #expect(ledger.activityCount(owner: ":1.1") == 1)
        try ledger.end(id, by: ":1.1")
        let before = LedgerSnapshot(ledger)
        #expect(ledger.release(owner: ":1.1").count == 0)
        #expect(LedgerSnapshot(ledger) == before)
        #expect(ledger.count == 0 && ledger.activities.isEmpty)
    }

    @Test func activitiesStaySortedThroughEndsAndCompaction() throws {
        var ledger = Ledger()
        let ids = try ledger.begin(1_000, owner: ":1.1")
        // End all but every tenth, enough to make the storage squeeze out its holes.
        for id in ids where id % 10 != 0 {
            try ledger.end(id, by: ":1.1")
        }
        let more = try ledger.begin(10, owner: ":1.2")
        let expected = ids.filter { $0 % 10 == 0 } + more
        #expect(ledger.activities.map(\.id) == expected)
        for id in expected {
            #expect(ledger.activity(id)?.id == id)
        }
        try ledger.update(500, by: ":1.1", completed: 1, total: 1)
        #expect(ledger.activity(500)?.total == 1)
    }

    // MARK: - Progress

    /// Each row: (completed, total) per activity, and the expected progress.
    @Test(arguments: [
        ([], -1.0),
        ([(0, 0)], -1.0),
        ([(500, 0), (7, 0)], -1.0),
        ([(25, 100)], 0.25),
        ([(25, 100), (75, 100)], 0.5),
        ([(0, 100), (900, 0)], 0.0),
        ([(100, 100), (0, 300)], 0.25),
        ([(UInt64.max, UInt64.max), (0, UInt64.max)], 0.5),
    ] as [([(UInt64, UInt64)], Double)])
    func progressSumsKnownTotals(transfers: [(UInt64, UInt64)], expected: Double) throws {
        var ledger = Ledger()
        for (completed, total) in transfers {
            let id = try ledger.begin(owner: ":1.1", label: "", started: 0)
            try ledger.update(id, by: ":1.1", completed: completed, total: total)
        }
        #expect(ledger.progress == expected)
    }

    @Test func progressFollowsUpdatesEndsAndReleases() throws {
        var ledger = Ledger()
        let a = try ledger.begin(owner: ":1.1", label: "", started: 0)
        let b = try ledger.begin(owner: ":1.2", label: "", started: 0)
        try ledger.update(a, by: ":1.1", completed: 10, total: 100)
        try ledger.update(b, by: ":1.2", completed: 30, total: 100)
        #expect(ledger.progress == 0.2)
        try ledger.update(a, by: ":1.1", completed: 10, total: 0)
        #expect(ledger.progress == 0.3)
        try ledger.update(a, by: ":1.1", completed: 50, total: 100)
        #expect(ledger.progress == 0.4)
        try ledger.end(a, by: ":1.1")
        #expect(ledger.progress == 0.3)
        ledger.release(owner: ":1.2")
        #expect(ledger.progress == -1.0)
    }

    // MARK: - Release

    @Test func releaseEndsEveryActivityOfOneOwner() throws {
        var ledger = Ledger()
        _ = try ledger.begin(1_024, owner: ":1.1")
        let kept = try ledger.begin(3, owner: ":1.2")
        try ledger.push()
        #expect(ledger.release(owner: ":1.1").count == 1_024)
        #expect(ledger.activityCount(owner: ":1.1") == 0)
        #expect(ledger.activities.map(\.id) == kept)
        #expect(ledger.count == 4)
        #expect(ledger.release(owner: ":1.1").count == 0)
        #expect(ledger.release(owner: ":1.99").count == 0)
    }

    @Test func tenOwnersOfAThousandActivitiesAreCheap() throws {
        var ledger = Ledger()
        let owners = (1...10).map { ":1.\($0)" }
        for owner in owners {
            _ = try ledger.begin(Ledger.maximumActivitiesPerOwner, owner: owner)
        }
        #expect(ledger.count == 10_240)
        for (index, activity) in ledger.activities.enumerated() where index % 2 == 0 {
            try ledger.end(activity.id, by: activity.owner)
        }
        for owner in owners {
            #expect(ledger.release(owner: owner).count == 512)
        }
        #expect(!ledger.isActive)
    }
}

/// The per-user limit, for the system bus: owners of one user id share 1,024 activities.
struct LedgerUserLimitTests {
    @Test func ownersOfOneUserShareTheLimit() throws {
        var ledger = Ledger()
        for index in 0..<Ledger.maximumActivitiesPerUser {
            _ = try ledger.begin(owner: ":1.\(index % 4)", label: "x", started: 0, userID: 1000)
        }
        #expect(throws: LedgerError.userLimit(userID: 1000, limit: 1_024)) {
            try ledger.begin(owner: ":1.99", label: "x", started: 0, userID: 1000)
        }
        #expect(ledger.activityCount(userID: 1000) == 1_024)
        _ = try ledger.begin(owner: ":1.100", label: "x", started: 0, userID: 0)
        #expect(ledger.release(owner: ":1.0").count == 256)
        #expect(ledger.activityCount(userID: 1000) == 768)
        let id = try ledger.begin(owner: ":1.99", label: "x", started: 0, userID: 1000)
        try ledger.end(id, by: ":1.99")
        #expect(ledger.activityCount(userID: 1000) == 768)
    }

    @Test func theGlobalLimitIsSixtyFiveThousand() throws {
        var ledger = Ledger()
        for owner in 0..<64 {
            for _ in 0..<Ledger.maximumActivitiesPerOwner { _ = try ledger.begin(owner: ":1.\(owner)", label: "", started: 0) }
        }
        #expect(ledger.count == 65_536)
        #expect(throws: LedgerError.activityLimit(limit: 65_536)) {
            try ledger.begin(owner: ":1.999", label: "", started: 0)
        }
        #expect(ledger.count == 65_536)
    }
}
