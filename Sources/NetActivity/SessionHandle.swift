import DBus

/// The app-facing side of a `ReportingSession`: hands work to the session's loop thread.
final class SessionHandle: Sendable {
    private let thread: LoopThread
    // Confined to `thread`: only touched inside `perform`.
    nonisolated(unsafe) private let session: ReportingSession

    init(bus: BusAddress, problems: @escaping @Sendable (String) -> Void) throws(BusError) {
        thread = try LoopThread()
        session = ReportingSession(bus: bus, loop: thread.loop, problems: problems)
    }

    deinit {
        let session = self.session
        nonisolated(unsafe) let confined = session
        thread.perform { confined.close() }
        thread.finish()
    }

    /// Runs `work` with the session on its thread.
    func perform(_ work: @escaping @Sendable (ReportingSession) -> Void) {
        nonisolated(unsafe) let confined = session
        thread.perform { work(confined) }
    }
}
