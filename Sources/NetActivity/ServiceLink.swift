import DBus
import NetActivityContract

/// What a `ServiceLink` tells its owner, on the loop thread, as the bus and the service come and go.
protocol ServiceLinkDelegate: AnyObject {
    /// Whether anything needs the bus: live activities or someone watching. Retries stop
    /// without it, so an idle app never wakes up.
    var needsBus: Bool { get }
    /// The service instance in use (`ServiceLink.serviceOwner`) is another one, or none.
    func serviceOwnerChanged()
    /// A retry made a connection after none: everything the app holds is to be asserted again.
    func reconnected()
    /// A service instance took the name.
    func serviceAppeared()
    /// The service instance in use gave up the name, or the connection went with it.
    func serviceLeft()
    /// The connection is gone: nothing sent on it will be answered, and nothing the service
    /// handed out on it (activity ids) means anything now.
    func connectionLost()
    /// A call made through `call` was answered or failed, after its handler ran.
    func callAnswered()
    /// A signal from the service instance in use, sent from `path`.
    func received(_ signal: Message, path: String)
}

/// The client's bus connection and what it knows of the service there: which instance
/// (unique name) holds the service's name and its comings and goings, as a `NameOwnerFollower`
/// hears them; reconnecting with backoff after the connection is lost; each outage said to
/// `problems` once.
///
/// Confined to the client's loop thread. The one owner of the connection: calls to the service
/// go out through `call`, and what comes back unasked goes to the `delegate`.
final class ServiceLink {
    /// The first wait before trying the bus again, doubled after each failure up to the maximum.
    static let firstRetryDelay: Duration = .milliseconds(250)
    static let maximumRetryDelay: Duration = .seconds(30)

    weak var delegate: (any ServiceLinkDelegate)?

    private let bus: BusAddress
    private let loop: EventLoop
    private let problems: @Sendable (String) -> Void
    /// Counts the reports in flight.
    private let flush: Flush

    private var connection: Connection? {
        didSet { connectionName.withLock { $0 = connection?.uniqueName.rawValue } }
    }
    /// `connection`'s unique name, for any thread: the owner the service gives this client's
    /// activities (`NetActivityClient.connectionName`).
    let connectionName = Locked<String?>(nil)
    /// Who owns the service's name on `connection`.
    private var nameFollower: NameOwnerFollower?
    /// The service instance (unique name) that holds this app's state. On a new connection it
    /// is nil until the bus answers who owns the name, which it does before any reply to a
    /// call made on the connection arrives: a reply never finds it unknown when the service
    /// was already there.
    private(set) var serviceOwner: String? {
        didSet { if serviceOwner != oldValue { delegate?.serviceOwnerChanged() } }
    }
    /// True after a call found no service: nothing is re-sent until the service appears.
    private var waitingForService = false
    /// One line to `problems` per outage: reset when the service is back.
    private var reportedUnavailable = false
    private(set) var isClosed = false
    private var retryTimer: EventLoop.TimerID?
    private var retryDelay = ServiceLink.firstRetryDelay
    /// The connection was lost, or could not be made, while nothing needed the bus: the next
    /// need reconnects through the retry, which re-asserts everything the app holds.
    private var reconnectDue = false
    /// Whether this connection is subscribed to the service's changes (`followChanges()`).
    private var followingChanges = false

    /// How often the connection is read at most; nil: whenever it is readable.
    private let readInterval: Duration?

    init(
        bus: BusAddress, loop: EventLoop, flush: Flush, readInterval: Duration? = nil,
        problems: @escaping @Sendable (String) -> Void
    ) {
        self.bus = bus
        self.readInterval = readInterval
        self.loop = loop
        self.flush = flush
        self.problems = problems
    }

    /// Whether calls have nowhere to go just now: no connection, or the service is known to be
    /// gone until it appears again.
    var isDown: Bool { waitingForService || connection == nil }

    /// Whether reports can go out now, connecting first if need be: not once closed, nor while
    /// the service is known to be gone. Without a connection it asks for one even then: a
    /// connection lost while the app was idle is made again only when something needs it.
    func readyToSend() -> Bool {
        !isClosed && connected() != nil && !waitingForService
    }

    /// Connects if there is no connection and no retry is scheduled; returns whether there is one.
    @discardableResult
    func connect() -> Bool {
        connected() != nil
    }

    /// A reply came from `owner` while no instance was known (the call started the service):
    /// that is the instance in use.
    func noteAnswer(from owner: String) {
        if serviceOwner == nil { serviceOwner = owner }
    }

    /// Ends the link for good: no call, retry or connection after it.
    func close() {
        isClosed = true
        if let retryTimer { loop.cancel(retryTimer) }
        if let connection { loop.detach(connection) }
        connection = nil
        nameFollower = nil
    }

    // MARK: - Calls

    /// Calls `member` on the service's object. A report (`isReport`) is counted in flight until
    /// answered, and its finding no service puts the link in waiting until the service appears;
    /// other calls (reading the state) leave both to their handler.
    func call(
        _ member: MemberName, _ arguments: [Value] = [], interface: InterfaceName = NetActivityBus.interface,
        isReport: Bool = true, _ handler: @escaping (ReplyResult) -> Void
    ) {
        guard let connection = connected() else {
            handler(.failure(BusError(.disconnected, "no bus connection")))
            return
        }
        let message: Message
        do {
            message = try Message.methodCall(
                destination: NetActivityBus.name, path: NetActivityBus.path, interface: interface,
                member: member, arguments: arguments)
        } catch {
            problems("cannot build \(member): \(error.message)")
            return
        }
        if isReport { flush.started() }
        connection.send(message) { [self] result in
            if isReport { flush.finished() }
            if isReport, case .failure(let error) = result, Self.meansUnavailable(error) {
                serviceUnavailable(error)
            }
            handler(result)
            delegate?.callAnswered()
        }
    }

    /// Errors that say "no service here right now" rather than "the service said no".
    static func meansUnavailable(_ error: BusError) -> Bool {
        [.serviceUnknown, .nameHasNoOwner, .noReply, .disconnected, .noServer, .timeout, .noMemory]
            .contains(error.name) || error.name.rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }

    private func serviceUnavailable(_ error: BusError) {
        waitingForService = true
        reportOutage("the network activity service is unavailable (\(error.message)); "
            + "activity is kept and reported when it returns")
    }

    private func reportOutage(_ message: String) {
        guard !reportedUnavailable else { return }
        reportedUnavailable = true
        problems(message)
    }

    // MARK: - The service's changes

    /// Subscribes to the service's changes, once per connection: property changes of the main
    /// object and of every activity object (`path_namespace`), and the ObjectManager's
    /// InterfacesAdded/InterfacesRemoved. Asked for when the first observer arrives, so an app
    /// that only reports never wakes up for them.
    func followChanges() {
        guard !followingChanges, let connection = connected() else { return }
        let service = NetActivityBus.name
        do {
            try connection.addMatch(
                PropertiesInterface.propertiesChanged.matchRule(sender: service, pathNamespace: NetActivityBus.path))
            try connection.addMatch(ObjectManagerInterface.interfacesAdded.matchRule(sender: service, path: NetActivityBus.path))
            try connection.addMatch(ObjectManagerInterface.interfacesRemoved.matchRule(sender: service, path: NetActivityBus.path))
            followingChanges = true
        } catch {
            problems("cannot watch the indicator: \(error.message)")
        }
    }

    // MARK: - The connection and the service's comings and goings

    private func connected() -> Connection? {
        if let connection { return connection }
        // While a retry is scheduled, calls wait for it instead of hammering a missing bus.
        guard !isClosed, retryTimer == nil else { return nil }
        if reconnectDue {
            scheduleRetry(after: .zero)
            return nil
        }
        // The connection attached to the loop so far, detached again if a later step fails.
        var attached: Connection?
        do {
            let connection = try Connection(bus)
            connection.addFilter(for: .signal) { [unowned self] message in handle(message) }
            if let readInterval { loop.attach(connection, readingAtMostEvery: readInterval) } else { loop.attach(connection) }
            attached = connection
            var answered = false
            nameFollower = try NameOwnerFollower(NetActivityBus.name, on: connection) { [unowned self] owner in
                if !answered {
                    answered = true
                    ownerFound(owner)
                } else if let owner {
                    serviceAppeared(owner.rawValue)
                } else {
                    serviceLeft()
                }
            }
            self.connection = connection
            retryDelay = Self.firstRetryDelay
            return connection
        } catch {
            if let attached {
                loop.detach(attached)
                self.connection = nil
                nameFollower = nil
            }
            reportOutage("cannot connect to \(bus): \(error.message); retrying")
            waitingForService = true
            scheduleRetry()
            return nil
        }
    }

    /// Tries the bus again after `delay`, by default the current backoff, doubling it for next
    /// time. Not while nothing needs the bus: an idle app never wakes up, and its next need
    /// calls it again.
    private func scheduleRetry(after delay: Duration? = nil) {
        guard retryTimer == nil, !isClosed else { return }
        guard delegate?.needsBus == true else {
            reconnectDue = true
            return
        }
        reconnectDue = false
        let delay = delay ?? retryDelay
        retryDelay = min(retryDelay * 2, Self.maximumRetryDelay)
        retryTimer = loop.schedule(after: delay) { [self] in
            retryTimer = nil
            guard connection == nil else { return }
            guard delegate?.needsBus == true else {
                reconnectDue = true
                return
            }
            guard connected() != nil else { return }
            reconnected()
        }
    }

    /// A new connection after none: an activatable service is started by the first call.
    private func reconnected() {
        waitingForService = false
        delegate?.reconnected()
    }

    /// Who owned the service's name when a new connection asked: the instance in use, and the
    /// end of an outage. With no owner there is nothing to learn: an activatable service is
    /// started by the first call, and its taking the name is a change, `serviceAppeared`. A
    /// change that overtook the answer comes here in its place, and tells the same: every call
    /// made on the connection reaches the owner it names.
    private func ownerFound(_ owner: BusName?) {
        guard let owner else { return }
        serviceOwner = owner.rawValue
        reportedUnavailable = false
    }

    private func handle(_ message: Message) -> Bool {
        if message.isSignal(.local, "Disconnected") {
            connectionLost()
            return true
        }
        if nameFollower?.handle(message) == true { return false }
        guard let sender = message.sender?.rawValue, sender == serviceOwner, let path = message.path?.rawValue
        else { return false }
        delegate?.received(message, path: path)
        return false
    }

    private func serviceAppeared(_ owner: String) {
        serviceOwner = owner
        waitingForService = false
        reportedUnavailable = false
        delegate?.serviceAppeared()
    }

    private func serviceLeft() {
        serviceOwner = nil
        delegate?.serviceLeft()
    }

    private func connectionLost() {
        guard let lost = connection else { return }
        connection = nil
        nameFollower = nil
        followingChanges = false
        serviceLeft()
        waitingForService = true
        reportOutage("lost the connection to \(bus); reconnecting")
        // Detach on the next turn: this runs inside the lost connection's own dispatch.
        loop.schedule(after: .zero) { [loop] in loop.detach(lost) }
        delegate?.connectionLost()
        scheduleRetry()
    }
}
