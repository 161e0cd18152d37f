import Platform

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

    /// The message of the error a connection to `.session` fails with when none is configured:
    /// libdbus's own (X11 autolaunch needs `$DISPLAY`) names neither the variable nor the
    /// fallback socket.
    public static let noSessionBusMessage =
        "there is no session bus (DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist)"

    /// How the message of a connection to `.system` begins when the system bus's socket does not
    /// exist at all (as in most containers), rather than refusing or failing.
    public static let noSystemBusMessage = "there is no system bus"
}

/// A private connection to a message bus.
///
/// Owns its libdbus connection: closes and releases it on deinit. libdbus is initialised for
/// threads, so sending from any thread is safe; message handling (filters, the event loop)
/// happens on the thread that dispatches, normally the one running the `EventLoop` the
/// connection is attached to.
public final class Connection: @unchecked Sendable {
    let raw: RawConnection

    /// This connection's unique name on the bus, e.g. `:1.42`.
    public let uniqueName: BusName

    private struct Filter {
        let id: Int
        /// The kind of message it sees; nil for every kind.
        let kind: Message.Kind?
        let handler: (Message) -> Bool
    }

    // Iterated as a copy: a handler may add or remove filters meanwhile.
    private var filters: [Filter] = []
    // Whether any filter sees method calls: while none does, a call goes straight to the
    // object server without a walk through the list.
    private var filtersSeeMethodCalls = false
    // The object server's handler: every method call no filter took, as libdbus's message,
    // valid only during the call. Read for every message dispatched, by the dispatching thread,
    // and never assigned while a call is delivered through it (asserted in debug builds), so no
    // access overlaps another; the runtime's check of each read shows in the steady Push/Pop
    // rows (docs/benchmarks.md).
    @exclusivity(unchecked) private var methodCallHandler: ((RawMessage) -> Void)?
    #if DEBUG
    // Set while a call is delivered to `methodCallHandler`: the invariant its reads rely on.
    private var deliveringCall = false
    #endif
    private var nextFilterID = 0
    private var filterInstalled = false

    /// Connects to `bus` and registers with it (Hello).
    ///
    /// - Throws: `BusError` naming why the bus could not be reached.
    public init(_ bus: BusAddress) throws(BusError) {
        let raw = try RawConnection.open(bus)
        guard let name = raw.uniqueName else {
            raw.closeAndRelease()
            throw BusError(.failed, "the bus gave no unique name")
        }
        self.raw = raw
        self.uniqueName = BusName(unchecked: String(cString: name))
    }

    deinit {
        if filterInstalled { raw.removeFilter(for: self) }
        raw.closeAndRelease()
    }

    /// Whether the connection is still open.
    public var isConnected: Bool { raw.isConnected }

    // MARK: - Sending

    /// Queues `message` for sending and returns its serial. Never blocks.
    ///
    /// - Throws: `NoMemory` if libdbus could not queue it; `Disconnected` if the connection is closed.
    @discardableResult
    public func send(_ message: Message) throws(BusError) -> UInt32 {
        guard isConnected else { throw BusError(.disconnected, "not connected to the bus") }
        guard let serial = raw.send(message.raw) else { throw BusError.outOfMemory }
        return serial
    }

    /// Queues `message` without checking the connection first, for replies and signals whose
    /// loss on a closed connection nobody could act on: libdbus drops what a closed connection
    /// cannot send.
    func queue(_ message: Message) {
        _ = raw.send(message.raw)
    }

    /// Queues `message` as `queue(_:)` does, for a reply that needs no `Message`.
    func queue(_ message: borrowing OwnedMessage) {
        _ = raw.send(message.raw)
    }

    /// The largest message the bus accepts from this connection, for replies written value by
    /// value (`ReplyWriter`), whose size nobody bounds in advance. A bus that receives a larger
    /// message does not refuse it: it drops the sender's connection. The default is the
    /// protocol's own maximum (128 MiB), what a session bus accepts; dbus-daemon's default
    /// `max_message_size`, which the system bus keeps, is 32 MiB (`systemBusMessageSize`).
    public var maximumMessageSize = 128 << 20

    /// dbus-daemon's default `max_message_size`, kept by the stock system bus.
    public static let systemBusMessageSize = 32 << 20

    /// Sends the reply to `call`, of type `signature`, whose body `write` fills value by value.
    ///
    /// - Throws: `LimitsExceeded` when the reply would be larger than `maximumMessageSize`;
    ///   nothing is sent then, so the caller gets this error instead.
    func sendReply(
        to call: RawMessage, signature: Signature, writing write: (inout ReplyWriter) throws -> Void
    ) throws {
        var writer = ReplyWriter(body: call.methodReturnHeader(signature: signature))
        try write(&writer)
        guard writer.count <= maximumMessageSize else {
            throw BusError(
                .limitsExceeded,
                "the reply would be \(writer.count) bytes, more than the \(maximumMessageSize) bytes this bus accepts in one message")
        }
        let reply = try RawMessage.message(from: writer.body)
        queue(reply)
    }

    /// Sends a method call and waits for its reply, blocking the calling thread.
    ///
    /// Other messages that arrive meanwhile stay queued for dispatch. Do not call this from a
    /// thread whose event loop must stay responsive.
    ///
    /// - Throws: the error reply as a `BusError`, or `NoReply` when `timeout` passes.
    public func call(_ message: Message, timeout: Duration = .seconds(25)) throws(BusError) -> Message {
        let reply = try raw.sendAndWait(message.raw, milliseconds: Int32(clamping: timeout.milliseconds))
        guard let reply else { throw BusError(.noReply, "no reply") }
        return Message(consuming: reply)
    }

    /// How many bytes of messages are queued for sending and not yet written to the socket.
    public var outgoingBytes: Int { raw.outgoingSize }

    /// Writes out everything queued, blocking until it is written.
    public func flush() {
        raw.flush()
    }

    // MARK: - Receiving without an event loop

    /// Waits up to `timeout` for the next incoming message and returns it (nil on timeout or
    /// disconnection). Messages returned here bypass filters. For simple clients and tests
    /// that have no `EventLoop`.
    public func readMessage(timeout: Duration) -> Message? {
        let deadline = Clocks.monotonicNanoseconds() &+ UInt64(clamping: timeout.nanoseconds)
        while true {
            if let message = raw.popMessage() { return Message(consuming: message) }
            let now = Clocks.monotonicNanoseconds()
            guard now < deadline else { return nil }
            let left = deadline - now
            let milliseconds = Int32(clamping: (left + 999_999) / 1_000_000)
            guard raw.readWrite(milliseconds: milliseconds) else {
                guard let message = raw.popMessage() else { return nil }
                return Message(consuming: message)
            }
        }
    }

    // MARK: - Filters

    /// Adds a handler that sees every incoming message (or only those of `kind`), in the order
    /// added, on the dispatching thread. It returns true when it has handled the message and no
    /// later handler should see it. Filters see method calls before the `ObjectServer` does;
    /// a method call nobody handles gets an `UnknownMethod` reply.
    @discardableResult
    public func addFilter(for kind: Message.Kind? = nil, _ handler: @escaping (Message) -> Bool) -> Int {
        installFilterOnce()
        nextFilterID += 1
        filters.append(Filter(id: nextFilterID, kind: kind, handler: handler))
        filtersSeeMethodCalls = filters.contains { $0.kind == nil || $0.kind == .methodCall }
        return nextFilterID
    }

    /// Removes a handler added with `addFilter`.
    public func removeFilter(_ id: Int) {
        filters.removeAll { $0.id == id }
        filtersSeeMethodCalls = filters.contains { $0.kind == nil || $0.kind == .methodCall }
    }

    /// Hands every method call no filter took to `handler`, as libdbus's message, valid only
    /// during the call: for `ObjectServer`, which answers each call without making a `Message`
    /// for it. Nil stops it; one handler at a time.
    func setMethodCallHandler(_ handler: ((RawMessage) -> Void)?) {
        #if DEBUG
        assert(!deliveringCall, "the method call handler replaced while a call is delivered through it")
        #endif
        installFilterOnce()
        methodCallHandler = handler
    }

    private func installFilterOnce() {
        if !filterInstalled { filterInstalled = raw.installFilter(for: self) }
    }

    /// Dispatches every queued message, for the event loop.
    ///
    /// While an object server is attached, a method call is taken off the queue and handed to
    /// `deliver` directly: libdbus's own dispatch would copy and walk its filter list and search
    /// its object tree for every call, a share of a call that shows (docs/benchmarks.md).
    /// Everything else, replies that complete pending calls, signals and `Disconnected` among
    /// them, goes through libdbus's dispatch. Only a method call is stolen, so a reply another
    /// thread is blocked waiting for (and takes off the queue itself) is never held.
    func dispatchQueued() {
        while true {
            if let handler = methodCallHandler {
                guard let message = raw.borrowMessage() else { return }
                if message.type == .methodCall {
                    let call = raw.stealBorrowed(message)
                    deliver(call, to: handler)
                    continue
                }
                raw.returnBorrowed(message)
            }
            guard raw.dispatch() else { return }
        }
    }

    /// Runs the filters over a message libdbus dispatches; returns whether one handled it.
    func runFilters(_ raw: RawMessage) -> Bool {
        let kind = raw.type
        // A call libdbus dispatched while a server is attached (only when it lacked the memory
        // to lend it to `dispatchQueued`) takes the same way as the rest.
        if kind == .methodCall, let handler = methodCallHandler {
            deliver(raw, to: handler)
            return true
        }
        return runMessageFilters(raw, kind: kind)
    }

    private func deliver(_ call: borrowing OwnedMessage, to server: (RawMessage) -> Void) {
        deliver(call.raw, to: server)
    }

    /// The one way a method call reaches the object server: through the filters that see
    /// method calls, then to the server if none of them took it.
    private func deliver(_ call: RawMessage, to server: (RawMessage) -> Void) {
        if filtersSeeMethodCalls, runMessageFilters(call, kind: .methodCall) { return }
        #if DEBUG
        deliveringCall = true
        defer { deliveringCall = false }
        #endif
        server(call)
    }

    private func runMessageFilters(_ raw: RawMessage, kind: Message.Kind) -> Bool {
        // Made for the first handler that wants one, shared by the rest.
        var message: Message?
        for filter in filters where filter.kind == nil || filter.kind == kind {
            let shared = message ?? Message(borrowing: raw)
            message = shared
            if filter.handler(shared) { return true }
        }
        return false
    }
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
