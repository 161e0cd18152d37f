import DBus

/// The parts of PackageKit's D-Bus interface the bridge reads, declared with the typed
/// descriptors NetActivity's own interface is declared with: the daemon's transaction list and
/// each transaction's end. (The transactions' properties come through `PropertiesInterface`.)
enum PackageKitInterface {
    static let name: BusName = "org.freedesktop.PackageKit"
    static let path: ObjectPath = "/org/freedesktop/PackageKit"
    static let interface: InterfaceName = "org.freedesktop.PackageKit"
    static let transactionInterface: InterfaceName = "org.freedesktop.PackageKit.Transaction"

    static let getTransactionList = MethodDescriptor<[ObjectPath]>(
        "GetTransactionList", of: interface, returning: ["transactions"],
        doc: "The transactions running or queued now.")
    static let transactionListChanged = SignalDescriptor<[String]>(
        "TransactionListChanged", of: interface, "transactions", doc: "The transactions running or queued changed.")
    static let finished = SignalDescriptor<UInt32, UInt32>(
        "Finished", of: transactionInterface, "exit", "runtime", doc: "The transaction ended: its exit code and run time.")
    static let destroy = SignalDescriptor(
        "Destroy", of: transactionInterface, doc: "The transaction object is about to go away.")
}
