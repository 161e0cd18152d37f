/// What a reply handler receives: the reply, or the error reply (including `NoReply` on
/// timeout and `Disconnected` when the connection closed first) as a `BusError`.
public typealias ReplyResult = Result<Message, BusError>

extension Connection {
    /// Sends a method call without blocking; `handler` runs on the dispatching thread (the
    /// attached `EventLoop`) with the reply.
    ///
    /// Call this on the dispatching thread too: libdbus completes a call while dispatching,
    /// and a reply that raced ahead of the handler's registration would be lost.
    public func send(
        _ message: Message, timeout: Duration = .seconds(25), reply handler: @escaping (ReplyResult) -> Void
    ) {
        raw.send(message.raw, milliseconds: Int32(clamping: timeout.milliseconds), reply: handler)
    }
}
