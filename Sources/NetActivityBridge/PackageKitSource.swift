import DBus
import NetActivity

/// PackageKit's transactions: see docs/bridges.md. Not written yet.
final class PackageKitSource: BridgeSource {
    private let context: BridgeContext

    init(_ context: BridgeContext) {
        self.context = context
    }

    func start() throws(BusError) {
        throw BusError(.failed, "not available in this build")
    }

    func stop() {}
}
