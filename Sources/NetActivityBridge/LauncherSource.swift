import DBus
import NetActivity

/// The Unity launcher API's progress: see docs/bridges.md. Not written yet.
final class LauncherSource: BridgeSource {
    private let context: BridgeContext

    init(_ context: BridgeContext) {
        self.context = context
    }

    func start() throws(BusError) {
        throw BusError(.failed, "not available in this build")
    }

    func stop() {}
}
