internal import CDBus

/// Which bus to connect to.
public enum BusAddress: Sendable, Equatable, CustomStringConvertible {
    /// The user's session bus (`DBUS_SESSION_BUS_ADDRESS`).
    case session
    /// The system bus.
    case system
    /// A bus at an explicit address such as `unix:path=/run/user/1000/bus`.
    case address(String)

    public var description: String {
        switch self {
        case .session: "the session bus"
        case .system: "the system bus"
        case .address(let address): "the bus at \(address)"
        }
    }
}

/// A private connection to a message bus.
///
/// Owns its libdbus connection: closes and releases it on deinit. libdbus is initialised for
/// threads, so sending from any thread is safe; message handling (filters, the event loop)
/// happens on the thread that dispatches, normally the one running the `EventLoop` the
/// connection is attached to.
public final class Connection: @unchecked Sendable {
    let raw: OpaquePointer

    /// This connection's unique name on the bus, e.g. `:1.42`.
    public let uniqueName: BusName

    private enum Filter {
        /// Sees every message of `kind` (every message when nil) as a `Message`.
        case messages(kind: Message.Kind?, (Message) -> Bool)
        /// Handles every method call from libdbus's pointer, with no `Message` made for it.
        case methodCalls((OpaquePointer) -> Void)
    }

    // Read for every incoming message, so unchecked for exclusivity: `runFilters` iterates a
    // copy, and a handler that adds or removes filters meanwhile changes only the original.
    @exclusivity(unchecked) private var filters: [(id: Int, filter: Filter)] = [] {
        didSet { methodCallRoute = Self.methodCallRoute(through: filters) }
    }
    // The method-call handler when no filter before it looks at method calls: a call goes
    // straight there instead of through the list. Set with `filters`, read like it.
    @exclusivity(unchecked) private var methodCallRoute: ((OpaquePointer) -> Void)?
    private var nextFilterID = 0
    private var filterInstalled = false

    /// Connects to `bus` and registers with it (Hello).
    ///
    /// - Throws: `BusError` naming why the bus could not be reached.
    public init(_ bus: BusAddress) throws(BusError) {
        dbus_threads_init_default()
        let raw: OpaquePointer?
        switch bus {
        case .session:
            raw = try withDBusError { dbus_bus_get_private(DBUS_BUS_SESSION, $0) }
        case .system:
            raw = try withDBusError { dbus_bus_get_private(DBUS_BUS_SYSTEM, $0) }
        case .address(let address):
            guard !address.utf8.contains(0) else { throw BusError(.badAddress, "bus address contains NUL") }
            let opened = try withDBusError { dbus_connection_open_private(address, $0) }
            if let opened {
                do {
                    _ = try withDBusError { dbus_bus_register(opened, $0) }
                } catch {
                    dbus_connection_close(opened)
                    dbus_connection_unref(opened)
                    throw error
                }
            }
            raw = opened
        }
        guard let raw else { throw BusError(.noServer, "could not connect to \(bus)") }
        // The default for bus connections is _exit(1) when the bus goes away; callers decide.
        dbus_connection_set_exit_on_disconnect(raw, 0)
        guard let name = dbus_bus_get_unique_name(raw) else {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw BusError(.failed, "the bus gave no unique name")
        }
        self.raw = raw
        self.uniqueName = BusName(unchecked: String(cString: name))
    }

    deinit {
        if filterInstalled {
            dbus_connection_remove_filter(raw, connectionFilter, Unmanaged.passUnretained(self).toOpaque())
        }
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
    }

    /// Whether the connection is still open.
    public var isConnected: Bool { dbus_connection_get_is_connected(raw) != 0 }

    // MARK: - Sending

    /// Queues `message` for sending and returns its serial. Never blocks.
    ///
    /// - Throws: `NoMemory` if libdbus could not queue it; `Disconnected` if the connection is closed.
    @discardableResult
    public func send(_ message: Message) throws(BusError) -> UInt32 {
        guard isConnected else { throw BusError(.disconnected, "not connected to the bus") }
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, message.raw, &serial) != 0 else { throw BusError.outOfMemory }
        return serial
    }

    /// Queues `message` without checking the connection first, for replies and signals whose
    /// loss on a closed connection nobody could act on: libdbus drops what a closed connection
    /// cannot send.
    func queue(_ message: Message) {
        _ = dbus_connection_send(raw, message.raw, nil)
    }

    /// Sends a method call and waits for its reply, blocking the calling thread.
    ///
    /// Other messages that arrive meanwhile stay queued for dispatch. Do not call this from a
    /// thread whose event loop must stay responsive.
    ///
    /// - Throws: the error reply as a `BusError`, or `NoReply` when `timeout` passes.
    public func call(_ message: Message, timeout: Duration = .seconds(25)) throws(BusError) -> Message {
        let milliseconds = Int32(clamping: timeout.milliseconds)
        let reply = try withDBusError {
            dbus_connection_send_with_reply_and_block(raw, message.raw, milliseconds, $0)
        }
        guard let reply else { throw BusError(.noReply, "no reply") }
        return Message(consuming: reply)
    }

    /// How many bytes of messages are queued for sending and not yet written to the socket.
    ///
    /// The corresponding C function is `dbus_connection_get_outgoing_size`.
    public var outgoingBytes: Int { Int(dbus_connection_get_outgoing_size(raw)) }

    /// Writes out everything queued, blocking until it is written.
    public func flush() {
        dbus_connection_flush(raw)
    }

    // MARK: - Receiving without an event loop

    /// Waits up to `timeout` for the next incoming message and returns it (nil on timeout or
    /// disconnection). Messages returned here bypass filters. For simple clients and tests
    /// that have no `EventLoop`.
    public func readMessage(timeout: Duration) -> Message? {
        let deadline = monotonicNanoseconds() &+ UInt64(clamping: timeout.nanoseconds)
        while true {
            if let raw = dbus_connection_pop_message(raw) { return Message(consuming: raw) }
            let now = monotonicNanoseconds()
            guard now < deadline else { return nil }
            let left = deadline - now
            let milliseconds = Int32(clamping: (left + 999_999) / 1_000_000)
            guard dbus_connection_read_write(raw, milliseconds) != 0 else {
                return dbus_connection_pop_message(raw).map { Message(consuming: $0) }
            }
        }
    }

    // MARK: - Filters

    /// Adds a handler that sees every incoming message (or only those of `kind`), in the order
    /// added, on the dispatching thread. It returns true when it has handled the message and no
    /// later handler should see it. A method call nobody handles gets libdbus's `UnknownMethod`
    /// reply.
    @discardableResult
    public func addFilter(for kind: Message.Kind? = nil, _ handler: @escaping (Message) -> Bool) -> Int {
        add(.messages(kind: kind, handler))
    }

    /// Adds a handler that takes every method call no earlier handler took, as libdbus's
    /// pointer, valid only during the call: for `ObjectServer`, which answers each call without
    /// making a `Message` for it.
    func addMethodCallHandler(_ handler: @escaping (OpaquePointer) -> Void) -> Int {
        add(.methodCalls(handler))
    }

    private func add(_ filter: Filter) -> Int {
        if !filterInstalled {
            filterInstalled = dbus_connection_add_filter(
                raw, connectionFilter, Unmanaged.passUnretained(self).toOpaque(), nil) != 0
        }
        nextFilterID += 1
        filters.append((nextFilterID, filter))
        return nextFilterID
    }

    /// Removes a handler added with `addFilter`.
    public func removeFilter(_ id: Int) {
        filters.removeAll { $0.id == id }
    }

    private static func methodCallRoute(through filters: [(id: Int, filter: Filter)]) -> ((OpaquePointer) -> Void)? {
        for (_, filter) in filters {
            switch filter {
            case .messages(let kind, _) where kind == nil || kind == .methodCall: return nil
            case .messages: continue
            case .methodCalls(let handler): return handler
            }
        }
        return nil
    }

    /// Dispatches every queued message, for the event loop.
    ///
    /// A method call bound for the method-call handler (see `methodCallRoute`) is taken off the
    /// queue and handed over directly. `dbus_connection_dispatch` would spend about 3,000
    /// instructions on it (the filter list copied and walked, the object tree searched), which
    /// on a busy bus is a tenth of what a call costs the service. Everything else, replies that
    /// complete pending calls, signals and `Disconnected` among them, goes through libdbus's
    /// dispatch. Only a method call is stolen, so a reply another thread is blocked waiting for
    /// (and takes off the queue itself) is never held.
    func dispatchQueued() {
        while true {
            if let route = methodCallRoute {
                // Nil when nothing is queued (or libdbus needs memory to queue it): nothing that
                // dbus_connection_dispatch could do either.
                guard let message = dbus_connection_borrow_message(raw) else { return }
                if Message.Kind(dbus_message_get_type(message)) == .methodCall {
                    // Stealing hands over the queue's reference to the message.
                    dbus_connection_steal_borrowed_message(raw, message)
                    route(message)
                    dbus_message_unref(message)
                    continue
                }
                dbus_connection_return_message(raw, message)
            }
            guard dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS else { return }
        }
    }

    fileprivate func runFilters(_ raw: OpaquePointer) -> Bool {
        let kind = Message.Kind(dbus_message_get_type(raw))
        // Made for the first handler that wants one, shared by the rest.
        var message: Message?
        for (_, filter) in filters {
            switch filter {
            case .messages(let wanted, let handler):
                guard wanted == nil || wanted == kind else { continue }
                let shared = message ?? Message(borrowing: raw)
                message = shared
                if handler(shared) { return true }
            case .methodCalls(let handler):
                guard kind == .methodCall else { continue }
                handler(raw)
                return true
            }
        }
        return false
    }
}

/// The one C filter every `Connection` installs; it forwards to the connection's handlers.
private let connectionFilter: DBusHandleMessageFunction = { _, message, data in
    guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    // The connection outlives its filter (deinit removes it): no reference of our own needed.
    let handled = Unmanaged<Connection>.fromOpaque(data)._withUnsafeGuaranteedRef { $0.runFilters(message) }
    return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

extension ErrorName {
    public static let badAddress = ErrorName(unchecked: "org.freedesktop.DBus.Error.BadAddress")
}

extension Duration {
    /// Whole nanoseconds, saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }

    /// Whole milliseconds, rounded up, for libdbus's millisecond timeouts.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let partial = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return seconds &* 1000 &+ partial
    }
}
