import DBus
import NetActivityContract
import NetActivityModel

extension LedgerError {
    /// The D-Bus error docs/interface.md names for this failure.
    var busError: BusError {
        let name: ErrorName = switch self {
        case .notActive: .notActive
        case .counterLimit, .ownerLimit, .userLimit, .activityLimit, .idsExhausted: .limitsExceeded
        case .labelTooLong, .completedExceedsTotal, .hintTooLong, .invalidFraction: .invalidArgs
        case .unknownActivity: .unknownActivity
        case .notOwner: .accessDenied
        }
        return BusError(name, message)
    }
}
