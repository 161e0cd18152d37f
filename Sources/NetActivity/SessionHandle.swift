import DBus

/// The app-facing side of a `ReportingSession`: hands work to the session's loop thread.
final class SessionHandle: Sendable {
    private let thread: LoopThread
    private let session: LoopBound<ReportingSession>

    /// - Parameter loop: the app's own loop to work on, or nil for a thread of the session's own.
    init(bus: BusAddress, loop: EventLoop? = nil, problems: @escaping @Sendable (String) -> Void) throws(BusError) {
        thread = if let loop { LoopThread(sharing: loop) } else { try LoopThread() }
        session = LoopBound(ReportingSession(bus: bus, loop: thread.loop, problems: problems), on: thread)
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
