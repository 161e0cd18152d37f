/// What `NetActivityClient.flush()` waits for: the reports still outstanding (calls in flight,
/// updates waiting out their spacing), and the callers waiting for them to be answered.
///
/// Confined to the client's loop thread. `ReportingSession` decides when the waiters go: once
/// nothing is outstanding, or when the link is down and nothing will be answered.
final class Flush {
    private var outstanding = 0
    private var waiters: [@Sendable () -> Void] = []

    /// Whether every report has been answered and none waits out its spacing.
    var isIdle: Bool { outstanding == 0 }

    /// A report is outstanding: a call sent, or an update held back by its spacing.
    func started() { outstanding += 1 }

    /// An outstanding report is done: its call was answered, or its update's wait for the
    /// spacing ended or was cancelled.
    func finished() { outstanding -= 1 }

    /// Adds `done` to the callers waiting.
    func wait(_ done: @escaping @Sendable () -> Void) {
        waiters.append(done)
    }

    /// Calls every waiter once, in the order they came.
    func resumeWaiters() {
        let waiting = waiters
        waiters.removeAll()
        for waiter in waiting { waiter() }
    }
}
