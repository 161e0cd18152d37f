import DBus

/// Holds `com.canonical.Unity` while no dock does.
///
/// libunity (and Electron, which drives the launcher through it) sends `Update` only while
/// some connection owns that name: it watches the name and calls nothing on it, and when an
/// owner appears it sends each entry's whole state. Docks take the name for that reason. The
/// bridge asks for it allowing replacement and without queueing, so a dock that asks with
/// replace-existing gets it at once (the broadcasts still reach the bridge); while another
/// owns it, the bridge waits for it to be freed and asks again.
///
/// Confined to the bridge's loop thread.
final class LauncherName {
    static let name: BusName = "com.canonical.Unity"
    static let options: NameRequestOptions = [.allowReplacement, .doNotQueue]

    private let connection: Connection
    private let problems: (String) -> Void
    /// Whether this connection owns the name.
    private(set) var isOwned = false
    /// A request is on its way: a second free of the name while it is does not ask twice.
    private var requesting = false

    init(connection: Connection, problems: @escaping (String) -> Void) {
        self.connection = connection
        self.problems = problems
    }

    /// Asks for the name, blocking for the bus's answer: call before the loop runs, after the
    /// subscription that sees the name freed (`LauncherSource`'s departures match).
    func start() throws(BusError) {
        isOwned = try connection.requestName(Self.name, options: Self.options) == .primaryOwner
    }

    /// Gives the name back, blocking for the bus's answer.
    func stop() {
        guard isOwned else { return }
        isOwned = false
        _ = try? connection.releaseName(Self.name)
    }

    /// Follows the bus's `NameLost` (a dock took the name) and `NameAcquired`.
    func handle(_ message: Message) -> Bool {
        guard message.sender == .bus else { return false }
        if BusDriver.nameLost.decode(message) == Self.name.rawValue {
            isOwned = false
        } else if BusDriver.nameAcquired.decode(message) == Self.name.rawValue {
            isOwned = true
        } else {
            return false
        }
        return true
    }

    /// The name has no owner any more: ask for it, without blocking the loop.
    func nameFreed() {
        guard !isOwned, !requesting else { return }
        requesting = true
        connection.callBus(BusDriver.requestName, Self.name.rawValue, Self.options.rawValue) { [weak self] result in
            guard let self else { return }
            self.requesting = false
            switch result {
            case .success(let reply):
                // 1: primary owner; 3 (exists): another asked first, and its going frees it again.
                if reply == 1 { self.isOwned = true }
            case .failure(let error):
                self.problems("cannot ask for \(Self.name): \(error.message)")
            }
        }
    }
}
