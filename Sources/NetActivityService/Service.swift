import DBus
import NetActivityContract
import NetActivityModel
#if canImport(Glibc)
import Glibc
#endif

/// `netactivityd`: owns the indicator's state and serves it on the bus.
///
/// Single-threaded: everything runs on the event loop of the thread that calls `run()`.
public final class Service {
    private let options: ServiceOptions
    private let clock: any IndicatorClock
    // Touched on every call, by the loop's thread alone; `mutate` lends `indicator` to a change
    // that calls only `Indicator`, and nothing here runs the loop: no access can overlap, so
    // they go unchecked for exclusivity.
    @exclusivity(unchecked) var indicator: Indicator
    private let loop: EventLoop
    private var connection: Connection?
    private var server: ObjectServer?
    @exclusivity(unchecked) private var timer: EventLoop.TimerID?
    @exclusivity(unchecked) private var timerDeadline: Instant?
    // How many activities the last Activities signal carried, to trim the heap after a big one.
    private var announcedActivityCount = 0
    private var exitStatus: Int32 = 0

    /// Prepares a service; nothing touches the bus until `run()`.
    public init(options: ServiceOptions, clock: any IndicatorClock = SystemClock()) throws(BusError) {
        self.options = options
        self.clock = clock
        self.indicator = Indicator(settings: options.settings, clock: clock)
        self.loop = try EventLoop()
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

    private struct StartError: Error {
        var message: String
    }

    private func start() throws(StartError) {
        let connection: Connection
        do {
            connection = try Connection(options.bus)
        } catch {
            throw StartError(message: "cannot connect to \(options.bus): \(error.message)")
        }
        self.connection = connection
        let server = ObjectServer(connection: connection)
        server.export([makeInterface()], at: NetActivityBus.path)
        self.server = server
        connection.addFilter(for: .signal) { [unowned self] message in self.handleSignal(message) }
        loop.attach(connection)
        do {
            // Watching every departure from the start means no owner can leave unnoticed
            // between BeginActivity and a per-owner subscription.
            try connection.addMatch(
                "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                    + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''")
        } catch {
            throw StartError(message: "cannot watch the bus for departing clients: \(error.message)")
        }
        // Handlers go in before the name is taken: a client (or a test) may send SIGTERM the
        // moment it sees the name owned.
        loop.onSignal(SIGTERM) { [unowned self] in self.shutDown() }
        loop.onSignal(SIGINT) { [unowned self] in self.shutDown() }
        try acquireName(connection)
    }

    private func acquireName(_ connection: Connection) throws(StartError) {
        var requestOptions: NameRequestOptions = [.doNotQueue, .allowReplacement]
        if options.replace { requestOptions.insert(.replaceExisting) }
        let reply: NameRequestReply
        do {
            reply = try connection.requestName(NetActivityBus.name, options: requestOptions)
        } catch {
            throw StartError(message: "cannot request \(NetActivityBus.name): \(error.message)")
        }
        switch reply {
        case .primaryOwner, .alreadyOwner:
            return
        case .exists, .inQueue:
            throw StartError(message: "\(NetActivityBus.name) is already owned by \(describeOwner(connection)); "
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
        if message.isSignal(.bus, "NameOwnerChanged") {
            let arguments = (try? message.arguments()) ?? []
            guard arguments.count == 3, let name = arguments[0].string, name.hasPrefix(":"),
                arguments[2].string == ""
            else { return false }
            announce(indicator.release(owner: name))
            return false
        }
        if message.isSignal(.bus, "NameLost"), (try? message.arguments())?.first?.string == NetActivityBus.name.rawValue {
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

    /// Applies a change to the indicator, announcing its effect before the caller's reply.
    ///
    /// - Throws: the contract's `BusError` when the model refuses the change.
    func mutate(_ change: (inout Indicator) throws(LedgerError) -> Announcement) throws(BusError) {
        do {
            announce(try change(&indicator))
        } catch {
            throw error.busError
        }
    }

    private func announce(_ announcement: Announcement) {
        if !announcement.isEmpty, let server {
            try? server.emitPropertiesChanged(
                interface: NetActivityBus.interface, at: NetActivityBus.path, changed: Self.changes(announcement))
        }
        if let activities = announcement.activities {
            if max(activities.count, announcedActivityCount) >= HeapTrim.threshold { HeapTrim.trim() }
            announcedActivityCount = activities.count
        }
        rescheduleTimer()
    }

    /// Keeps one loop timer at the model's next deadline; none at all while nothing is pending.
    private func rescheduleTimer() {
        let deadline = indicator.nextDeadline
        guard deadline != timerDeadline else { return }
        if let timer { loop.cancel(timer) }
        timer = nil
        timerDeadline = deadline
        guard let deadline else { return }
        let now = clock.now
        let delay = now < deadline ? now.duration(to: deadline) : .zero
        timer = loop.schedule(after: delay) { [unowned self] in
            self.timer = nil
            self.timerDeadline = nil
            self.announce(self.indicator.advance())
        }
    }

    private func report(_ message: String) {
        var line = "netactivityd: " + message + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
