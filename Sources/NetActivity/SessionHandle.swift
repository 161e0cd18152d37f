import DBus

/// The app-facing side of a `ReportingSession`: hands work to the session's loop thread.
final class SessionHandle: Sendable {
    private let thread: LoopThread
    private let session: LoopBound<ReportingSession>
    /// The unique name of the session's connection, nil while it has none.
    let connectionName: Locked<String?>

    /// - Parameter thread: the loop to work on: a thread of the session's own
    ///   (`LoopThread()`), or the app's loop (`LoopThread(sharing:)`).
    /// - Parameter readInterval: how often the session's connection is read at most; nil for
    ///   whenever it is readable.
    init(bus: BusAddress, thread: LoopThread, readInterval: Duration? = nil, problems: @escaping @Sendable (String) -> Void) {
        self.thread = thread
        let reporting = ReportingSession(bus: bus, loop: thread.loop, readInterval: readInterval, problems: problems)
        connectionName = reporting.connectionName
        session = LoopBound(reporting, on: thread)
    }

    deinit {
        session.perform { $0.close() }
        thread.finish()
    }

    /// Runs `work` with the session on its thread.
    func perform(_ work: @escaping @Sendable (ReportingSession) -> Void) {
        session.perform(work)
    }
}
