import Testing
@testable import NetActivityModel

struct LedgerErrorTests {
    @Test(arguments: [
        (LedgerError.notActive, "the shared counter is already 0; every Pop needs an earlier Push"),
        (.counterLimit(limit: 65_536), "the shared counter is at its limit of 65536"),
        (.labelTooLong(bytes: 300, limit: 256), "label is 300 bytes; at most 256 are allowed"),
        (.ownerLimit(owner: ":1.5", limit: 1_024), ":1.5 already has 1024 live activities, the most one connection may have"),
        (.activityLimit(limit: 1_048_576), "there are already 1048576 live activities, the most the service keeps"),
        (.idsExhausted, "every activity id has been used; restart the service to start again"),
        (.unknownActivity(7), "there is no live activity 7"),
        (.notOwner(7), "activity 7 is not owned by the caller"),
        (.completedExceedsTotal(completed: 10, total: 5), "completed is 10 bytes but total is only 5"),
    ])
    func messageIsOneSentence(error: LedgerError, message: String) {
        #expect(error.message == message)
    }
}
