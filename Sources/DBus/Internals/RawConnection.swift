internal import CDBus
#if canImport(Glibc)
import Glibc
#endif

/// libdbus's `DBusConnection*`, seen without a reference of its own; `Connection` owns the one
/// reference and releases it. Every libdbus function on connections is called here.
struct RawConnection {
    let pointer: OpaquePointer

    // MARK: - Opening and closing

    /// A private connection to `bus`, registered with it (Hello), with one reference the
    /// caller owns; libdbus's default of exiting the process when the bus goes away is off.
    ///
    /// - Throws: libdbus's error, or `NoServer` when it gave no connection.
    static func open(_ bus: BusAddress) throws(BusError) -> RawConnection {
        dbus_threads_init_default()
        let opened: OpaquePointer?
        switch bus {
        case .session:
            do {
                opened = try withDBusError { dbus_bus_get_private(DBUS_BUS_SESSION, $0) }
            } catch where Self.noSessionBusConfigured {
                throw BusError(.noServer, BusAddress.noSessionBusMessage)
            }
        case .system:
            do {
                opened = try withDBusError { dbus_bus_get_private(DBUS_BUS_SYSTEM, $0) }
            } catch where error.name == .fileNotFound {
                throw BusError(.fileNotFound, "\(BusAddress.noSystemBusMessage) (\(error.message))")
            }
        case .address(let address):
            guard !address.utf8.contains(0) else { throw BusError(.badAddress, "bus address contains NUL") }
            opened = try withDBusError { dbus_connection_open_private(address, $0) }
            if let opened {
                do {
                    _ = try withDBusError { dbus_bus_register(opened, $0) }
                } catch {
                    RawConnection(pointer: opened).closeAndRelease()
                    throw error
                }
            }
        }
        guard let opened else { throw BusError(.noServer, "could not connect to \(bus)") }
        // The default for bus connections is _exit(1) when the bus goes away; callers decide.
        dbus_connection_set_exit_on_disconnect(opened, 0)
        return RawConnection(pointer: opened)
    }

    /// Whether nothing names a session bus: no `DBUS_SESSION_BUS_ADDRESS` and no socket at
    /// `$XDG_RUNTIME_DIR/bus`, the two places libdbus looks before it tries X11 autolaunch.
    private static var noSessionBusConfigured: Bool {
        func variable(_ name: String) -> String? {
            guard let value = getenv(name), value.pointee != 0 else { return nil }
            return String(cString: value)
        }
        guard variable("DBUS_SESSION_BUS_ADDRESS") == nil else { return false }
        guard let runtime = variable("XDG_RUNTIME_DIR") else { return true }
        // libdbus takes it only as a socket; a socket that refuses keeps libdbus's own reason.
        var status = stat()
        return stat(runtime + "/bus", &status) != 0 || status.st_mode & S_IFMT != S_IFSOCK
    }

    /// Closes the connection and gives back the caller's reference.
    func closeAndRelease() {
        dbus_connection_close(pointer)
        dbus_connection_unref(pointer)
    }

    /// The unique name the bus gave at registration.
    var uniqueName: UnsafePointer<CChar>? { dbus_bus_get_unique_name(pointer) }

    var isConnected: Bool { dbus_connection_get_is_connected(pointer) != 0 }

    /// Whether `org.freedesktop.DBus.Peer` calls reach the filters instead of being answered
    /// by libdbus on any path.
    func routePeerMessages(_ route: Bool) {
        dbus_connection_set_route_peer_messages(pointer, route ? 1 : 0)
    }

    // MARK: - Sending

    /// Queues `message`; returns its serial, or nil when libdbus ran out of memory. A closed
    /// connection drops what it is given.
    func send(_ message: RawMessage) -> UInt32? {
        var serial: UInt32 = 0
        guard dbus_connection_send(pointer, message.pointer, &serial) != 0 else { return nil }
        return serial
    }

    /// Sends `message` and blocks for its reply.
    func sendAndWait(_ message: RawMessage, milliseconds: Int32) throws(BusError) -> OwnedMessage? {
        OwnedMessage(
            created: try withDBusError {
                dbus_connection_send_with_reply_and_block(pointer, message.pointer, milliseconds, $0)
            })
    }

    /// Sends `message` and calls `handler` with its reply while dispatching (or at once, with
    /// the failure, when it cannot be sent).
    func send(_ message: RawMessage, milliseconds: Int32, reply handler: @escaping (ReplyResult) -> Void) {
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(pointer, message.pointer, &pending, milliseconds) != 0 else {
            handler(.failure(.outOfMemory))
            return
        }
        // libdbus gives no pending call when the connection is already closed.
        guard let pending else {
            handler(.failure(BusError(.disconnected, "not connected to the bus")))
            return
        }
        defer { dbus_pending_call_unref(pending) }
        let box = Unmanaged.passRetained(ReplyBox(handler)).toOpaque()
        guard dbus_pending_call_set_notify(pending, replyArrived, box, releaseBox) != 0 else {
            Unmanaged<ReplyBox>.fromOpaque(box).release()
            dbus_pending_call_cancel(pending)
            handler(.failure(.outOfMemory))
            return
        }
    }

    /// The connection's socket, nil when libdbus has none (not connected).
    var descriptor: Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_unix_fd(pointer, &fd) != 0 && fd >= 0 ? fd : nil
    }

    /// Bytes queued for sending and not yet written to the socket.
    var outgoingSize: Int { Int(dbus_connection_get_outgoing_size(pointer)) }

    /// Writes out everything queued, blocking until it is written.
    func flush() { dbus_connection_flush(pointer) }

    // MARK: - Receiving

    /// Reads and writes for up to `milliseconds`; false once the connection is closed.
    func readWrite(milliseconds: Int32) -> Bool { dbus_connection_read_write(pointer, milliseconds) != 0 }

    /// Takes the next queued message off the queue, past the filters.
    func popMessage() -> OwnedMessage? { OwnedMessage(created: dbus_connection_pop_message(pointer)) }

    /// The next queued message, left on the queue until `stealBorrowed` or `returnBorrowed`;
    /// nil when none is queued (or libdbus needs memory to queue it).
    func borrowMessage() -> RawMessage? { dbus_connection_borrow_message(pointer).map(RawMessage.init) }

    /// Takes the borrowed `message` off the queue, with the queue's reference.
    func stealBorrowed(_ message: RawMessage) -> OwnedMessage {
        dbus_connection_steal_borrowed_message(pointer, message.pointer)
        return OwnedMessage(consuming: message)
    }

    /// Leaves the borrowed `message` on the queue.
    func returnBorrowed(_ message: RawMessage) { dbus_connection_return_message(pointer, message.pointer) }

    /// Dispatches the next queued message through the filters; returns whether more remain.
    func dispatch() -> Bool { dbus_connection_dispatch(pointer) == DBUS_DISPATCH_DATA_REMAINS }

    /// Whether messages are queued for dispatch.
    var hasQueuedMessages: Bool { dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS }

    // MARK: - The filter

    /// Installs the one C filter through which libdbus hands `connection` every message it
    /// dispatches; returns whether libdbus had the memory to.
    func installFilter(for connection: Connection) -> Bool {
        dbus_connection_add_filter(pointer, connectionFilter, Unmanaged.passUnretained(connection).toOpaque(), nil) != 0
    }

    /// Removes the filter `installFilter(for:)` installed.
    func removeFilter(for connection: Connection) {
        dbus_connection_remove_filter(pointer, connectionFilter, Unmanaged.passUnretained(connection).toOpaque())
    }
}

/// The C filter every `Connection` installs; it forwards to the connection's handlers.
private let connectionFilter: DBusHandleMessageFunction = { _, message, data in
    guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    // The connection outlives its filter (deinit removes it): no reference of our own needed.
    let handled = Unmanaged<Connection>.fromOpaque(data).takeUnretainedValue().runFilters(RawMessage(message))
    return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

// MARK: - Pending calls

/// Holds a reply handler while its call is in flight; libdbus frees it through `releaseBox`.
private final class ReplyBox {
    let handler: (ReplyResult) -> Void
    init(_ handler: @escaping (ReplyResult) -> Void) { self.handler = handler }
}

private let replyArrived: DBusPendingCallNotifyFunction = { pending, data in
    guard let pending, let data else { return }
    let box = Unmanaged<ReplyBox>.fromOpaque(data).takeUnretainedValue()
    guard let raw = OwnedMessage(created: dbus_pending_call_steal_reply(pending)) else {
        box.handler(.failure(BusError(.noReply, "the call completed without a reply")))
        return
    }
    let reply = Message(consuming: raw)
    if let error = reply.error {
        box.handler(.failure(error))
    } else {
        box.handler(.success(reply))
    }
}

private let releaseBox: DBusFreeFunction = { data in
    guard let data else { return }
    Unmanaged<ReplyBox>.fromOpaque(data).release()
}
