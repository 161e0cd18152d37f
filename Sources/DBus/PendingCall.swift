internal import CDBus

/// What a reply handler receives: the reply, or the error reply (including `NoReply` on
/// timeout and `Disconnected` when the connection closed first) as a `BusError`.
public typealias ReplyResult = Result<Message, BusError>

/// Holds a reply handler while its call is in flight; libdbus frees it through `releaseBox`.
private final class ReplyBox {
    let handler: (ReplyResult) -> Void
    init(_ handler: @escaping (ReplyResult) -> Void) { self.handler = handler }
}

extension Connection {
    /// Sends a method call without blocking; `handler` runs on the dispatching thread (the
    /// attached `EventLoop`) with the reply.
    ///
    /// Call this on the dispatching thread too: libdbus completes a call while dispatching,
    /// and a reply that raced ahead of the handler's registration would be lost.
    ///
    /// The corresponding C functions are `dbus_connection_send_with_reply` and
    /// `dbus_pending_call_set_notify`.
    public func send(
        _ message: Message, timeout: Duration = .seconds(25), reply handler: @escaping (ReplyResult) -> Void
    ) {
        var pending: OpaquePointer?
        let milliseconds = Int32(clamping: timeout.milliseconds)
        guard dbus_connection_send_with_reply(raw, message.raw, &pending, milliseconds) != 0 else {
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
}

private let replyArrived: DBusPendingCallNotifyFunction = { pending, data in
    guard let pending, let data else { return }
    let box = Unmanaged<ReplyBox>.fromOpaque(data).takeUnretainedValue()
    guard let raw = dbus_pending_call_steal_reply(pending) else {
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
