@testable import NetActivityModel

/// Everything observable about a ledger, to prove that a refused call changed nothing.
struct LedgerSnapshot: Equatable {
    var sharedCount: UInt32
    var count: UInt32
    var progress: Double
    var activities: [Activity]
    var perOwner: [String: Int]

    init(_ ledger: Ledger, owners: [String] = [":1.1", ":1.2"]) {
        sharedCount = ledger.sharedCount
        count = ledger.count
        progress = ledger.progress
        activities = ledger.activities
        perOwner = Dictionary(uniqueKeysWithValues: owners.map { ($0, ledger.activityCount(owner: $0)) })
    }
}

extension Ledger {
    /// Begins `count` activities for `owner` and returns their ids.
    mutating func begin(_ count: Int, owner: String) throws(LedgerError) -> [ActivityID] {
        var ids: [ActivityID] = []
        for index in 0..<count {
            ids.append(try begin(owner: owner, label: "transfer \(index)", started: 0))
        }
        return ids
    }
}
