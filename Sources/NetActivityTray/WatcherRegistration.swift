import DBus

/// Keeps the item registered with whichever process owns `org.kde.StatusNotifierWatcher`:
/// with the one there at start, and again every time the name gets a new owner. A panel that
/// restarts brings a new watcher that knows no items; re-registering is what keeps the icon
/// from vanishing. With no watcher the item simply waits.
///
/// Lives on the tray's event-loop thread.
final class WatcherRegistration {
    private let connection: Connection
    private let itemName: BusName
    private let problems: (String) -> Void
    /// The unique name of the watcher registered with last, nil while there is none.
    private(set) var watcher: BusName?

    /// Prepares to register `itemName`; nothing is sent until `start()`.
    init(connection: Connection, itemName: BusName, problems: @escaping (String) -> Void) {
        self.connection = connection
        self.itemName = itemName
        self.problems = problems
    }

    /// Subscribes to the watcher's comings and goings, then registers with the current one.
    /// Blocks for the bus's answers: call on the loop's thread before it runs.
    ///
    /// - Throws: `BusError` if the bus refuses the subscription or the owner lookup.
    func start() throws(BusError) {
        // Subscribed before asking for the owner, so a watcher appearing in between is seen.
        try connection.addMatch(
            "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                + "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                + "arg0='\(StatusNotifierNames.watcher)'")
        if let owner = try connection.owner(of: StatusNotifierNames.watcher) {
            register(with: owner)
        } else {
            problems("no StatusNotifierWatcher on the bus (no tray is running); the item registers when one appears")
        }
    }

    /// Follows `NameOwnerChanged` for the watcher's name. Never consumes the message.
    func handle(_ message: Message) -> Bool {
        guard message.sender == .bus, message.isSignal(.bus, "NameOwnerChanged"),
            let arguments = try? message.arguments(expecting: "sss"),
            arguments[0].string == StatusNotifierNames.watcher.rawValue, let newOwner = arguments[2].string
        else { return false }
        if let owner = BusName(validating: newOwner), owner.isUnique {
            // The lookup in start() may already have found this very owner.
            if owner != watcher { register(with: owner) }
        } else {
            watcher = nil
        }
        return false
    }

    /// Calls `RegisterStatusNotifierItem` on `owner` itself: a message to the well-known name
    /// could reach a successor, or start one through activation.
    private func register(with owner: BusName) {
        watcher = owner
        let message: Message
        do {
            message = try Message.methodCall(
                destination: owner, path: StatusNotifierNames.watcherPath,
                interface: StatusNotifierNames.watcherInterface, member: "RegisterStatusNotifierItem",
                arguments: [.string(itemName.rawValue)])
        } catch {
            problems("cannot build the registration: \(error.message)")
            return
        }
        connection.send(message, timeout: .seconds(25)) { [weak self] result in
            guard let self, case .failure(let error) = result, self.watcher == owner else { return }
            self.problems("the StatusNotifierWatcher (\(owner)) did not register the item: \(error.message)")
        }
    }
}
