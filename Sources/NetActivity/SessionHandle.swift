import DBus

/// The app-facing side of a `ReportingSession`: hands work to the session's loop thread.
final class SessionHandle: Sendable {
    private let thread: LoopThread
    private let session: LoopBound<ReportingSession>

    /// A session on a thread of its own.
    ///
    /// - Throws: `BusError` when that thread cannot be started.
    convenience init(bus: BusAddress, problems: @escaping @Sendable (String) -> Void) throws(BusError) {
        self.init(bus: bus, thread: try LoopThread(), problems: problems)
    }

    /// A session on `loop`, the app's own loop, which the app runs.
    convenience init(bus: BusAddress, loop: EventLoop, problems: @escaping @Sendable (String) -> Void) {
        self.init(bus: bus, thread: LoopThread(sharing: loop), problems: problems)
    }

    private init(bus: BusAddress, thread: LoopThread, problems: @escaping @Sendable (String) -> Void) {
        self.thread = thread
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
