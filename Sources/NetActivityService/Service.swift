import DBus
import NetActivityContract
import NetActivityModel
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// `netactivityd`: owns the indicator's state and serves it on the bus.
///
/// Single-threaded: everything runs on the event loop of the thread that calls `run()`.
public final class Service {
    private let options: ServiceOptions
    private let clock: any TimeSource
    // Read and changed several times by every call, by the loop's thread alone: each change
    // lends `indicator` to `Indicator` code that never calls back here or runs the loop, so no
    // access can overlap (`perform` asserts it in debug builds), and the runtime's checks would be
    // a measurable share of a call (docs/benchmarks.md, "Why the hot path looks the way it does").
    @exclusivity(unchecked) var indicator: Indicator
    #if DEBUG
    // Set while `perform` lends `indicator` out: a change from within a change would overlap.
    private var changingIndicator = false
    #endif
    private let loop: EventLoop
    private var connection: Connection?
    private var server: ObjectServer?
    // Changed only when the model's next deadline moves: checked, as most state is.
    private var timer: EventLoop.TimerID?
    // Compared with the model's next deadline after every call, on the loop's thread alone.
    private var timerDeadline: Instant?
    private var exitStatus: Int32 = 0
    // Each owner connection's credentials and application, once the bus has told them.
    private(set) var attributions: [String: Attribution] = [:]
    // Owners whose credentials have been asked for; an owner leaves this set when it leaves.
    private var askedOwners: Set<String> = []
    // Which main-object properties each announcement names; filled when the table is made.
    private var announced = AnnouncedProperties()
    // Past this many bytes queued for the bus, throttled signals merge instead of queueing.
    private static let outgoingLimit = 1 << 20

    /// Prepares a service; nothing touches the bus until `run()`.
    public init(options: ServiceOptions, clock: any TimeSource = SystemTime()) throws(BusError) {
        self.options = options
        self.clock = clock
        self.indicator = Indicator(settings: options.settings, clock: clock)
        // The loop's timers fire at the model's deadlines, so they read the model's clock; the
        // system clock is the loop's own CLOCK_MONOTONIC, which the loop reads directly.
        self.loop = try EventLoop(clock: clock)
    }

    /// Whether SIGTERM and SIGINT shut the service down. Signals belong to the process: a
    /// service run inside a test's process leaves them to it and is stopped by `stopRunning()`.
    var handlesTerminationSignals = true

    /// Makes `run()` return after the current turn, from any thread, as SIGTERM does but
    /// without releasing the name first: for a service run inside a test's process.
    func stopRunning() {
        loop.stop()
    }

    /// Connects, takes the name and serves until SIGTERM/SIGINT (0), replacement (0), or the
    /// loss of the bus (1). Returns the exit status; failures are reported on stderr.
    public func run() -> Int32 {
        do {
            try start()
        } catch {
            report(error.message)
            return 1
        }
        loop.run()
        return exitStatus
    }

    // MARK: - Start-up

    private func start() throws(BusError) {
        let connection: Connection
        do {
            connection = try Connection(options.bus)
        } catch {
            throw BusError(.failed, "cannot connect to \(options.bus): \(error.message)")
        }
        self.connection = connection
        // At the global limit GetManagedObjects runs to about 40 MB: past the system bus's
        // message size, where the bus would drop the service rather than the reply.
        if options.perUserLimits { connection.maximumMessageSize = Connection.systemBusMessageSize }
        let server = ObjectServer(connection: connection)
        server.export([makeInterface(announcing: &announced)], at: NetActivityBus.path, managingObjects: true)
        server.exportSubtree(
            Subtree(
                names: { [unowned self] in indicator.ledger.activities.map { String($0.id) } },
                isEmpty: { [unowned self] in indicator.ledger.activityTotal == 0 },
                lookUp: { [unowned self] name in
                    guard let id = NetActivityBus.activityID(named: name),
                        let activity = reading({ $0.ledger.activity(id) })
                    else { return nil }
                    return DescribedActivity(activity, attribution: attributions[activity.owner])
                },
                interfaces: [makeActivityInterface()]),
            under: NetActivityBus.activitiesPath)
        self.server = server
        connection.addFilter(for: .signal) { [unowned self] message in self.handleSignal(message) }
        loop.attach(connection)
        do {
            // Watching every departure from the start means no owner can leave unnoticed
            // between BeginActivity and a per-owner subscription.
            try connection.addMatch(NameOwnerChange.departuresMatchRule)
        } catch {
            throw BusError(.failed, "cannot watch the bus for departing clients: \(error.message)")
        }
        // Handlers go in before the name is taken: a client (or a test) may send SIGTERM the
        // moment it sees the name owned.
        if handlesTerminationSignals {
            loop.onSignal(SIGTERM) { [unowned self] in self.shutDown() }
            loop.onSignal(SIGINT) { [unowned self] in self.shutDown() }
        }
        try acquireName(connection)
    }

    private func acquireName(_ connection: Connection) throws(BusError) {
        var requestOptions: NameRequestOptions = [.doNotQueue, .allowReplacement]
        if options.replace { requestOptions.insert(.replaceExisting) }
        let reply: NameRequestReply
        do {
            reply = try connection.requestName(NetActivityBus.name, options: requestOptions)
        } catch {
            throw BusError(.failed, "cannot request \(NetActivityBus.name): \(error.message)")
        }
        switch reply {
        case .primaryOwner, .alreadyOwner:
            return
        case .exists, .inQueue:
            throw BusError(.failed, "\(NetActivityBus.name) is already owned by \(describeOwner(connection)); "
                + (options.replace ? "it does not allow replacement" : "use --replace to take it over"))
        }
    }

    private func describeOwner(_ connection: Connection) -> String {
        guard let owner = try? connection.owner(of: NetActivityBus.name) else { return "another process" }
        guard let pid = try? connection.processID(of: owner) else { return owner.rawValue }
        return "\(owner) (pid \(pid))"
    }

    // MARK: - Bus signals

    private func handleSignal(_ message: Message) -> Bool {
        if message.isSignal(.local, "Disconnected") {
            report("lost the connection to \(options.bus); exiting")
            stop(status: 1)
            return true
        }
        guard message.sender == .bus else { return false }
        if let change = NameOwnerChange(message) {
            if change.name.isUnique, change.newOwner == nil { release(owner: change.name.rawValue) }
            return false
        }
        if BusDriver.nameLost.decode(message) == NetActivityBus.name.rawValue {
            // Another instance took the name with --replace: this one is done.
            stop(status: 0)
            return true
        }
        return false
    }

    private func shutDown() {
        if let connection {
            _ = try? connection.releaseName(NetActivityBus.name)
            connection.flush()
        }
        stop(status: 0)
    }

    private func stop(status: Int32) {
        exitStatus = status
        loop.stop()
    }

    // MARK: - State changes

    /// Applies a change to the indicator; the caller announces its effect before its reply.
    ///
    /// - Throws: the contract's `BusError` when the model refuses the change.
    func perform<Result>(_ change: (inout Indicator) throws(LedgerError) -> Result) throws(BusError) -> Result {
        noteBacklog()
        #if DEBUG
        assert(!changingIndicator, "the indicator changed from within a change to it")
        changingIndicator = true
        defer { changingIndicator = false }
        #endif
        do {
            return try change(&indicator)
        } catch {
            throw error.busError
        }
    }

    /// `BeginActivity`: the object is announced, then the main object's changes, both before
    /// the reply.
    func begin(owner: String, label: String, hints: ActivityHints = ActivityHints()) throws(BusError) -> ActivityID {
        // On the system bus the per-user limit needs the owner's user id before the first begin.
        let userID = options.perUserLimits ? try credentialsNow(of: owner).userID : nil
        let (id, announcement) = try perform { indicator throws(LedgerError) in
            try indicator.begin(owner: owner, label: label, userID: userID, hints: hints)
        }
        learnAttribution(of: owner)
        try? server?.emitInterfacesAdded(at: NetActivityBus.activityPath(id))
        announce(announcement)
        return id
    }

    /// `EndActivity`: the object's removal, then the main object's changes, before the reply.
    func end(_ id: ActivityID, by owner: String) throws(BusError) {
        let announcement = try perform { indicator throws(LedgerError) in try indicator.end(id, by: owner) }
        try? server?.emitInterfacesRemoved(at: NetActivityBus.activityPath(id), interfaces: [NetActivityBus.activityInterface])
        announce(announcement)
    }

    /// An owner left the bus: its activities' objects go, then the main object's changes.
    private func release(owner: String) {
        attributions[owner] = nil
        askedOwners.remove(owner)
        noteBacklog()
        let (ended, announcement) = indicator.release(owner: owner)
        for id in ended {
            try? server?.emitInterfacesRemoved(
                at: NetActivityBus.activityPath(id), interfaces: [NetActivityBus.activityInterface])
        }
        announce(announcement)
        if ended.count >= HeapTrim.threshold { HeapTrim.trim() }
    }

    func announce(_ announcement: Announcement) {
        if let server {
            // The objects first, so a watcher that sees the new Progress already holds the
            // activities' values behind it.
            for id in announcement.progressOf {
                try? server.emitPropertiesChanged(
                    Self.progressNames, of: NetActivityBus.activityInterface, at: NetActivityBus.activityPath(id))
            }
            if !announcement.mainIsEmpty {
                try? server.emitPropertiesChanged(
                    announced.names(announcement), of: NetActivityBus.interface, at: NetActivityBus.path)
            }
        }
        rescheduleTimer()
    }

    /// Reads the indicator where it lies. A getter from the model's module called on `indicator`
    /// itself gets a copy of it (a retain and a release of each array and dictionary inside),
    /// as the compiler cannot see that the getter leaves this object alone; lent inout, it is
    /// read in place.
    func reading<Value>(_ read: (inout Indicator) -> Value) -> Value { read(&indicator) }

    /// Holds throttled signals back while the bus has not taken what is already queued.
    private func noteBacklog() {
        guard let connection, indicator.throttleWindow > .zero else { return }
        indicator.holdsThrottled = connection.outgoingBytes > Self.outgoingLimit
    }

    // MARK: - Attribution

    /// Asks the bus, once per owner and without waiting, who `owner` is; announces it on the
    /// owner's activity objects when the answer comes.
    private func learnAttribution(of owner: String) {
        guard let connection, !owner.isEmpty, attributions[owner] == nil, askedOwners.insert(owner).inserted,
            let request = try? Self.credentialsRequest(owner)
        else { return }
        // Unowned, as every handler here: the service outlives its loop, which runs the reply.
        connection.send(request) { [unowned self] result in
            guard askedOwners.contains(owner), attributions[owner] == nil,
                case .success(let reply) = result, let attribution = Self.attribution(reply)
            else { return }
            attributions[owner] = attribution
            for id in indicator.ledger.activityIDs(owner: owner) {
                try? server?.emitPropertiesChanged(
                    Self.attributionNames, of: NetActivityBus.activityInterface, at: NetActivityBus.activityPath(id))
            }
        }
    }

    /// Asks the bus who `owner` is and waits for the answer (one round trip), for the system
    /// bus's per-user limit.
    private func credentialsNow(of owner: String) throws(BusError) -> Attribution {
        if let known = attributions[owner] { return known }
        guard let connection else { throw BusError(.disconnected, "not connected to the bus") }
        let reply = try connection.call(try Self.credentialsRequest(owner), timeout: .seconds(5))
        guard let attribution = Self.attribution(reply) else {
            throw BusError(.accessDenied, "the bus did not tell the caller's user id")
        }
        attributions[owner] = attribution
        askedOwners.insert(owner)
        return attribution
    }

    private static func credentialsRequest(_ owner: String) throws(BusError) -> Message {
        try BusDriver.getConnectionCredentials.call(owner, destination: .bus, path: BusDriver.path)
    }

    /// The attribution in a `GetConnectionCredentials` reply; nil without a user id.
    private static func attribution(_ reply: Message) -> Attribution? {
        guard let entries = (try? reply.arguments())?.first?.stringKeyedEntries,
            let userID = entries["UnixUserID"]?.unwrapped?.uint32
        else { return nil }
        let processID = entries["ProcessID"]?.unwrapped?.uint32
        return Attribution(
            processID: processID ?? NetActivityBus.unknownCredential, userID: userID,
            application: processID.map { Attribution.application(ofProcess: $0) } ?? "")
    }

    /// Keeps one loop timer at the model's next deadline; none at all while nothing is pending.
    private func rescheduleTimer() {
        let deadline = reading { $0.nextDeadline }
        guard deadline != timerDeadline else { return }
        if let timer { loop.cancel(timer) }
        timer = nil
        timerDeadline = deadline
        guard let deadline else { return }
        let now = clock.now
        var delay = now < deadline ? now.duration(to: deadline) : .zero
        // While the bus is backed up, look again a window later rather than at every deadline.
        if indicator.holdsThrottled { delay = max(delay, indicator.throttleWindow) }
        timer = loop.schedule(after: delay) { [unowned self] in
            self.timer = nil
            self.timerDeadline = nil
            self.noteBacklog()
            self.announce(self.indicator.advance())
        }
    }

    private func report(_ message: String) {
        var line = "netactivityd: " + message + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
