import DBus

/// A source's own bus connection while it runs: attached to the bridge's loop, with the one
/// signal filter that routes what it subscribed to. `close()` undoes both, for `stop()` and for a
/// `start()` that failed half way, so no source detaches by hand or forgets its filter.
final class AttachedConnection {
    let connection: Connection
    private let loop: EventLoop
    private var filter: Int?

    /// Adds `filter` to `connection` and attaches it to `loop`, read at most every `interval`
    /// when one is given (a source whose senders may flood it).
    init(
        _ connection: Connection, on loop: EventLoop, readingAtMostEvery interval: Duration? = nil,
        filter: @escaping (Message) -> Bool
    ) {
        self.connection = connection
        self.loop = loop
        self.filter = connection.addFilter(for: .signal, filter)
        if let interval {
            loop.attach(connection, readingAtMostEvery: interval)
        } else {
            loop.attach(connection)
        }
    }

    /// Removes the filter and detaches the connection; `flushing` sends what is queued first
    /// (a last reply or signal the source owes). A second call does nothing.
    func close(flushing: Bool = false) {
        guard let filter else { return }
        connection.removeFilter(filter)
        if flushing { connection.flush() }
        loop.detach(connection)
        self.filter = nil
    }
}
