import DBus
@testable import NetActivityBridge

extension FuzzTarget {
    /// A message off the system bus, as the PackageKit source reads one: a signal it follows
    /// (`PackageKitSignal`), or the reply to a transaction's `GetAll`; the properties applied
    /// to a transaction, and what the indicator would show for it.
    public static let packageKit = FuzzTarget("packagekit") { bytes in
        guard let message = try? Message(wireBytes: bytes) else { return }
        var properties: [String: Value]?
        switch message.kind {
        case .signal:
            if case .propertiesChanged(let changed) = PackageKitSignal(message) { properties = changed }
        case .methodReturn:
            properties = (try? message.arguments()).flatMap(PropertiesInterface.getAll.reply)?.value.stringKeyedEntries
        default:
            return
        }
        guard let properties else { return }
        var transaction = PackageKitTransaction()
        transaction.apply(properties)
        transaction.apply(properties)
        _ = transaction.progress
        _ = transaction.work
    }
}
