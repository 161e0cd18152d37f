import DBus

/// Keeps the item registered with whichever process owns `org.kde.StatusNotifierWatcher`:
/// with the one there at start, and again every time the name gets a new owner. A panel that
/// restarts brings a new watcher that knows no items; re-registering is what keeps the icon
/// from vanishing. With no watcher the item simply waits. A watcher that refuses or does not
/// answer (a panel still starting up) is asked again after a backoff, from `firstRetryDelay`
/// doubling up to `maximumRetryDelay`, for as long as it owns the name.
///
/// Lives on the tray's event-loop thread.
final class WatcherRegistration {
    private let connection: Connection
    private let loop: EventLoop
    private let itemName: BusName
    private let problems: (String) -> Void
    /// The unique name of the watcher registered with last, nil while there is none.
    private(set) var watcher: BusName?
    private var retryTimer: EventLoop.TimerID?
    private var retryDelay = WatcherRegistration.firstRetryDelay
    /// Who owns the watcher's name, as the bus says it.
    private var follower: NameOwnerFollower?

    static let firstRetryDelay: Duration = .milliseconds(500)
    static let maximumRetryDelay: Duration = .seconds(60)

    /// Prepares to register `itemName`; nothing is sent until `start()`. Retries run on `loop`.
    init(connection: Connection, loop: EventLoop, itemName: BusName, problems: @escaping (String) -> Void) {
        self.connection = connection
        self.loop = loop
        self.itemName = itemName
        self.problems = problems
    }

    deinit {
        if let retryTimer { loop.cancel(retryTimer) }
    }

    /// Follows the watcher's comings and goings, registering with the current one once the bus
    /// has said who it is. Call on the loop's thread before it runs.
    ///
    /// - Throws: `BusError` if the bus refuses the subscription.
    func start() throws(BusError) {
        var first = true
        follower = try NameOwnerFollower(StatusNotifierNames.watcher, on: connection) { [weak self] owner in
            guard let self else { return }
            if first, owner == nil {
                problems("no StatusNotifierWatcher on the bus (no tray is running); the item registers when one appears")
            }
            first = false
            changed(owner)
        }
    }

    /// Follows `NameOwnerChanged` for the watcher's name. Never consumes the message.
    func handle(_ message: Message) -> Bool {
        follower?.handle(message)
        return false
    }

    private func changed(_ owner: BusName?) {
        if let owner {
            // A registration may be on its way to this very owner already.
            if owner != watcher { follow(owner) }
        } else {
            follow(nil)
        }
    }

    /// A new watcher (or none): what was pending for the last one no longer applies.
    private func follow(_ owner: BusName?) {
        if let retryTimer { loop.cancel(retryTimer) }
        retryTimer = nil
        retryDelay = Self.firstRetryDelay
        watcher = owner
        if let owner { register(with: owner) }
    }

    /// Calls `RegisterStatusNotifierItem` on `owner` itself: a message to the well-known name
    /// could reach a successor, or start one through activation.
    private func register(with owner: BusName) {
        watcher = owner
        connection.call(
            StatusNotifierInterface.registerItem, itemName.rawValue, destination: owner,
            path: StatusNotifierNames.watcherPath
        ) { [weak self] result in
            guard let self, self.watcher == owner else { return }
            switch result {
            case .success:
                retryDelay = Self.firstRetryDelay
            case .failure(let error):
                // Said once per watcher: the first failure, not every retry.
                if retryDelay == Self.firstRetryDelay {
                    problems("the StatusNotifierWatcher (\(owner)) did not register the item: \(error.message); retrying")
                }
                scheduleRetry(with: owner)
            }
        }
    }

    private func scheduleRetry(with owner: BusName) {
        guard retryTimer == nil else { return }
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, Self.maximumRetryDelay)
        retryTimer = loop.schedule(after: delay) { [weak self] in
            guard let self else { return }
            retryTimer = nil
            if watcher == owner { register(with: owner) }
        }
    }
}
