import Testing
@testable import NetActivityModel

struct LedgerCounterTests {
    @Test func startsEmpty() {
        let ledger = Ledger()
        #expect(ledger.sharedCount == 0)
        #expect(ledger.count == 0)
        #expect(!ledger.isActive)
        #expect(ledger.progress == -1.0)
        #expect(ledger.activities.isEmpty)
    }

    @Test func pushAndPopMoveTheSharedCounter() throws {
        var ledger = Ledger()
        try ledger.push()
        try ledger.push()
        #expect(ledger.sharedCount == 2)
        #expect(ledger.count == 2)
        #expect(ledger.isActive)
        try ledger.pop()
        try ledger.pop()
        #expect(ledger.sharedCount == 0)
        #expect(!ledger.isActive)
    }

    @Test func popAtZeroThrowsNotActive() {
        var ledger = Ledger()
        #expect(throws: LedgerError.notActive) { try ledger.pop() }
        #expect(ledger.sharedCount == 0)
    }

    @Test func popDoesNotTouchTrackedActivities() throws {
        var ledger = Ledger()
        _ = try ledger.begin(owner: ":1.1", label: "download", started: 0)
        #expect(ledger.count == 1)
        #expect(throws: LedgerError.notActive) { try ledger.pop() }
        #expect(ledger.count == 1)
    }

    @Test func pushStopsAtTheCap() throws {
        var ledger = Ledger()
        for _ in 0..<Ledger.maximumSharedCount { try ledger.push() }
        #expect(ledger.sharedCount == 65_536)
        #expect(throws: LedgerError.counterLimit(limit: 65_536)) { try ledger.push() }
        #expect(ledger.sharedCount == 65_536)
        try ledger.pop()
        try ledger.push()
        #expect(ledger.sharedCount == 65_536)
    }

    @Test func countAddsSharedCounterAndActivities() throws {
        var ledger = Ledger()
        try ledger.push()
        _ = try ledger.begin(owner: ":1.1", label: "a", started: 0)
        _ = try ledger.begin(owner: ":1.2", label: "b", started: 0)
        #expect(ledger.count == 3)
        #expect(ledger.sharedCount == 1)
    }
}
