import DBus

/// One of the signals the PackageKit source follows, decoded from its message: pure, no bus,
/// so the bridge and the fuzz target read PackageKit's bytes through the same code.
///
/// Everything here comes from another process: a signal of another signature, a path that is
/// no object path, or a property map whose keys are not strings is no signal of these.
enum PackageKitSignal: Equatable {
    /// `TransactionListChanged`: the transactions running or queued now (names that are no
    /// object path left out).
    case transactionList([ObjectPath])
    /// A transaction's `PropertiesChanged`: the changed values by name.
    case propertiesChanged([String: Value])
    /// `Finished`: the transaction ended.
    case finished
    /// `Destroy`: the transaction object is about to go away.
    case destroy

    typealias PackageKit = PackageKitInterface

    init?(_ message: Message) {
        if let list = PackageKit.transactionListChanged.decode(message) {
            self = .transactionList(list.compactMap(ObjectPath.init(validating:)))
        } else if let (interface, changed, _) = PropertiesInterface.propertiesChanged.decode(message) {
            guard interface == PackageKit.transactionInterface.rawValue, let changed = changed.value.stringKeyedEntries else {
                return nil
            }
            self = .propertiesChanged(changed)
        } else if PackageKit.finished.decode(message) != nil {
            self = .finished
        } else if PackageKit.destroy.decode(message) != nil {
            self = .destroy
        } else {
            return nil
        }
    }
}
