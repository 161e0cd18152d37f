import DBus
import NetActivity
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity tray`: a StatusNotifierItem that follows the services' merged `Visible`.
///
/// One owner for the item's bus connection: an `EventLoop` on the thread that calls `run()`
/// exports `/StatusNotifierItem` under `org.kde.StatusNotifierItem-PID-1`, keeps it registered
/// with the StatusNotifierWatcher, and shows each merged state of `options.services` (whose clients
/// follow the services through restarts on connections of their own). All mutable state below is
/// touched only on the loop's thread (`loop.assertConfined` in debug builds, where it changes).
public final class Tray: @unchecked Sendable {
    private let options: TrayOptions
    private let problems: @Sendable (String) -> Void
    private let loop: EventLoop
    private let itemName: BusName
    private var connection: Connection?
    private var item: StatusNotifierItem?
    private var registration: WatcherRegistration?
    private var exitStatus: Int32 = 0
    /// At most four drawings of the ring a second.
    private var pacer = RingPacer(interval: .milliseconds(250))
    /// The last state observed, offered again when a held drawing is due.
    private var latest = IndicatorSnapshot()
    /// The one-shot timer for a held drawing; nil (no wake-up at all) while none is held.
    private var heldDrawing: EventLoop.TimerID?

    /// Prepares a tray item; nothing touches the bus until `run()`.
    ///
    /// - Parameter problems: gets the tray's own problems (start-up, registration, the lost bus)
    ///   as one line each, on the loop's thread; the default writes `tray: …` to standard error.
    /// - Throws: `BusError` if the event loop cannot be created.
    public init(options: TrayOptions, problems: @escaping @Sendable (String) -> Void = Tray.report) throws(BusError) {
        self.options = options
        self.problems = problems
        loop = try EventLoop()
        itemName = StatusNotifierNames.itemName(processID: getpid())
    }

    /// Serves the item until SIGTERM/SIGINT (0) or the loss of the bus (1). Failures to start
    /// (no bus, the name taken) are one line on stderr and status 1.
    ///
    /// Runs the loop on the calling thread and returns when it ends. Uses no Swift concurrency
    /// (no task, no libdispatch pool): while nothing changes, none of the tray's threads wakes.
    public func run() -> Int32 {
        do throws(BusError) {
            try start()
        } catch {
            problems(error.message)
            return 1
        }
        // The clients start only once the item is up, so a bad bus is reported once.
        let following = options.services.observe(on: loop) { [unowned self] state in show(state) }
        loop.run()
        following.cancel()
        return exitStatus
    }

    // MARK: - Start-up, on the loop's thread

    private func start() throws(BusError) {
        let connection: Connection
        do {
            connection = try Connection(options.bus.busAddress)
        } catch {
            throw BusError(.failed, "cannot connect to \(options.bus.busAddress): \(error.message)")
        }
        self.connection = connection
        let server = ObjectServer(connection: connection)
        item = StatusNotifierItem(
            server: server, options: options, initial: TrayAppearance(IndicatorSnapshot(), options: options))
        let registration = WatcherRegistration(connection: connection, loop: loop, itemName: itemName, problems: problems)
        self.registration = registration
        connection.addFilter(for: .signal) { [unowned self] message in handleSignal(message) }
        loop.attach(connection)
        loop.onSignal(SIGTERM) { [unowned self] in shutDown() }
        loop.onSignal(SIGINT) { [unowned self] in shutDown() }
        do throws(BusError) {
            let reply = try connection.requestName(itemName, options: .doNotQueue)
            guard reply == .primaryOwner || reply == .alreadyOwner else {
                throw BusError(.failed, "another connection owns it")
            }
        } catch {
            throw startError("cannot own \(itemName): \(error.message)", on: connection)
        }
        do {
            try registration.start()
        } catch {
            throw startError("cannot follow the StatusNotifierWatcher: \(error.message)", on: connection)
        }
    }

    /// A bus that goes away during start-up is the same event as one that goes away later, and
    /// is reported in the same words, not as whichever call it happened to interrupt.
    private func startError(_ message: String, on connection: Connection) -> BusError {
        connection.isConnected
            ? BusError(.failed, message)
            : BusError(.failed, "lost the connection to \(options.bus.busAddress); exiting")
    }

    // MARK: - Running, on the loop's thread

    private func show(_ state: IndicatorSnapshot) {
        loop.assertConfined("the tray")
        guard let item else { return }
        latest = state
        let now = ContinuousClock.now
        let (appearance, retryAt) = pacer.pace(TrayAppearance(state, options: options), replacing: item.appearance, at: now)
        if let retryAt {
            if heldDrawing == nil {
                heldDrawing = loop.schedule(after: retryAt - now) { [unowned self] in
                    heldDrawing = nil
                    show(latest)
                }
            }
        } else if let heldDrawing {
            loop.cancel(heldDrawing)
            self.heldDrawing = nil
        }
        do {
            try item.show(appearance)
        } catch {
            problems("cannot announce the item's change: \(error.message)")
        }
    }

    private func handleSignal(_ message: Message) -> Bool {
        loop.assertConfined("the tray")
        if message.isSignal(.local, "Disconnected") {
            problems("lost the connection to \(options.bus.busAddress); exiting")
            stop(status: 1)
            return true
        }
        return registration?.handle(message) ?? false
    }

    private func shutDown() {
        if let connection, connection.isConnected {
            _ = try? connection.releaseName(itemName)
            connection.flush()
        }
        stop(status: 0)
    }

    private func stop(status: Int32) {
        loop.assertConfined("the tray")
        exitStatus = status
        loop.stop()
    }

    /// The default problems handler: `tray: …` on standard error.
    public static let report: @Sendable (String) -> Void = { message in
        NetActivityClient.logToStandardError("tray: " + message)
    }
}
