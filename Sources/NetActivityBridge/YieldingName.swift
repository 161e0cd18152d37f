import DBus

/// Holds a well-known name while no one else wants it, and gives it up to anyone who does.
///
/// Asked for allowing replacement and without queueing, so a program that asks with
/// replace-existing gets it at once; while another owns it, this waits for it to be freed
/// (`nameFreed()`, from the caller's `NameOwnerChanged` subscription) and asks again. The
/// launcher source holds `com.canonical.Unity` so (a dock takes it over), the plasma-jobs
/// source `org.kde.JobViewServer` and `org.kde.kuiserver` (plasmashell takes them over).
///
/// Confined to the bridge's loop thread.
final class YieldingName {
    static let options: NameRequestOptions = [.allowReplacement, .doNotQueue]

    let name: BusName
    private let connection: Connection
    private let problems: (String) -> Void
    /// Whether this connection owns the name.
    private(set) var isOwned = false
    /// A request is on its way: a second free of the name while it is does not ask twice.
    private var requesting = false

    init(_ name: BusName, connection: Connection, problems: @escaping (String) -> Void) {
        self.name = name
        self.connection = connection
        self.problems = problems
    }

    /// Asks for the name, blocking for the bus's answer: call before the loop runs, after the
    /// subscription that sees the name freed (a departures match).
    func start() throws(BusError) {
        isOwned = try connection.requestName(name, options: Self.options) == .primaryOwner
    }

    /// Gives the name back, blocking for the bus's answer.
    func stop() {
        guard isOwned else { return }
        isOwned = false
        _ = try? connection.releaseName(name)
    }

    /// Follows the bus's `NameLost` (another took the name) and `NameAcquired`.
    func handle(_ message: Message) -> Bool {
        guard message.sender == .bus else { return false }
        if BusDriver.nameLost.decode(message) == name.rawValue {
            isOwned = false
        } else if BusDriver.nameAcquired.decode(message) == name.rawValue {
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
        connection.callBus(BusDriver.requestName, name.rawValue, Self.options.rawValue) { [weak self] result in
            guard let self else { return }
            self.requesting = false
            switch result {
            case .success(let reply):
                // 1: primary owner; 3 (exists): another asked first, and its going frees it again.
                if reply == 1 { self.isOwned = true }
            case .failure(let error):
                self.problems("cannot ask for \(name): \(error.message)")
            }
        }
    }
}
