/// Why a ``Ledger`` refused a call. A refused call changes nothing.
///
/// The service maps each case to a D-Bus error name (see the contract) and uses ``message``
/// as the error's text.
public enum LedgerError: Error, Equatable, Sendable {
    /// `Pop` while the shared counter is 0.
    case notActive
    /// `Push` while the shared counter is at `limit`.
    case counterLimit(limit: UInt32)
    /// A label of `bytes` UTF-8 bytes, more than `limit`.
    case labelTooLong(bytes: Int, limit: Int)
    /// `owner` already has `limit` live activities.
    case ownerLimit(owner: String, limit: Int)
    /// The owners of `userID` already have `limit` live activities together.
    case userLimit(userID: UInt32, limit: Int)
    /// There are already `limit` live activities in all.
    case activityLimit(limit: Int)
    /// Every `ActivityID` has been handed out; ids are never reused.
    case idsExhausted
    /// No live activity has this id (it never existed or has ended).
    case unknownActivity(ActivityID)
    /// The activity exists but the caller did not begin it.
    case notOwner(ActivityID)
    /// `completed` is larger than a known (non-zero) `total`.
    case completedExceedsTotal(completed: UInt64, total: UInt64)
    /// The hint `key` is `bytes` UTF-8 bytes, more than `limit`.
    case hintTooLong(key: String, bytes: Int, limit: Int)
    /// A fraction outside 0...1, or not a number.
    case invalidFraction(Double)

    /// One readable English sentence for a D-Bus error message, e.g. "activity 7 is not owned
    /// by the caller", "label is 300 bytes; at most 256 are allowed".
    public var message: String {
        switch self {
        case .notActive:
            "the shared counter is already 0; every Pop needs an earlier Push"
        case .counterLimit(let limit):
            "the shared counter is at its limit of \(limit)"
        case .labelTooLong(let bytes, let limit):
            "label is \(bytes) bytes; at most \(limit) are allowed"
        case .ownerLimit(let owner, let limit):
            "\(owner) already has \(limit) live activities, the most one connection may have"
        case .userLimit(let userID, let limit):
            "user \(userID) already has \(limit) live activities, the most one user may have"
        case .activityLimit(let limit):
            "there are already \(limit) live activities, the most the service keeps"
        case .idsExhausted:
            "every activity id has been used; restart the service to start again"
        case .unknownActivity(let id):
            "there is no live activity \(id)"
        case .notOwner(let id):
            "activity \(id) is not owned by the caller"
        case .completedExceedsTotal(let completed, let total):
            "completed is \(completed) bytes but total is only \(total)"
        case .hintTooLong(let key, let bytes, let limit):
            "hint '\(key)' is \(bytes) bytes; at most \(limit) are allowed"
        case .invalidFraction(let fraction):
            "fraction \(fraction) is not a number from 0.0 to 1.0"
        }
    }
}
