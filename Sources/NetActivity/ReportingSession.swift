import DBus

/// What one app has told the indicator, and the work of keeping the service in step with it
/// and the app's observers in step with the service.
///
/// Confined to the library's loop thread (`SessionHandle` hands it there in a `LoopBound`).
/// Made of four parts, each in its own file, wired together here:
///
/// - `ServiceLink`, the one owner of the bus connection: reconnecting, the service instance in
///   use and its comings and goings, outages said once. The other parts call through it; what
///   it hears comes here (`ServiceLinkDelegate`) and is passed on.
/// - `ActivityReconciler`: the app's activities, brought in line with the service.
/// - `StateFollower`: the service's state, for the app's observers.
/// - `Flush`: the reports outstanding and the callers waiting for them.
final class ReportingSession {
    private let link: ServiceLink
    /// The link's connection's unique name, readable from any thread.
    var connectionName: Locked<String?> { link.connectionName }
    private let reconciler: ActivityReconciler
    private let follower: StateFollower
    private let flushing: Flush

    init(bus: BusAddress, loop: EventLoop, readInterval: Duration? = nil, problems: @escaping @Sendable (String) -> Void) {
        let flushing = Flush()
        let link = ServiceLink(bus: bus, loop: loop, flush: flushing, readInterval: readInterval, problems: problems)
        self.flushing = flushing
        self.link = link
        reconciler = ActivityReconciler(link: link, loop: loop, flush: flushing, problems: problems)
        follower = StateFollower(link: link, loop: loop)
        link.delegate = self
        reconciler.reconciled = { [unowned self] in resumeWaitersIfSettled() }
    }

    // MARK: - What the app says

    func begin(_ localID: Int, label: String, hints: ActivityHints = ActivityHints()) {
        reconciler.begin(localID, label: label, hints: hints)
    }

    func update(_ localID: Int, _ progress: Activity.Progress) {
        reconciler.update(localID, progress)
    }

    func end(_ localID: Int) {
        reconciler.end(localID)
    }

    /// Calls `done` once every call sent so far has been answered and nothing is left to send.
    func flush(_ done: @escaping @Sendable () -> Void) {
        flushing.wait(done)
        resumeWaitersIfSettled()
    }

    func close() {
        link.close()
        follower.finishAll()
        resumeWaiters()
    }

    // MARK: - Observing

    func addObserver(_ id: Int, _ observer: StateObserver) {
        guard !link.isClosed else {
            observer.finish()
            return
        }
        // A client reads its own writes: a new observer's first state waits until every call
        // made so far is answered (an EndActivity may still wait for its BeginActivity's reply,
        // and a GetManagedObjects sent before it would list the ended activity).
        if isSettled {
            follower.add(id, observer)
        } else {
            follower.hold(id, observer)
        }
    }

    func removeObserver(_ id: Int) {
        follower.remove(id)
    }

    // MARK: - Flush

    /// Whether nothing is left to wait for: every report answered and none waiting out its
    /// spacing, or no service to answer them.
    private var isSettled: Bool { flushing.isIdle || link.isDown }

    private func resumeWaitersIfSettled() {
        if isSettled { resumeWaiters() }
    }

    /// Resumes the flush waiters, then starts the observers held back for them.
    private func resumeWaiters() {
        flushing.resumeWaiters()
        follower.admitHeld()
    }
}

// MARK: - What the link says

extension ReportingSession: ServiceLinkDelegate {
    var needsBus: Bool { !reconciler.isEmpty || follower.hasObservers }

    func serviceOwnerChanged() {
        reconciler.serviceChanged()
    }

    /// Everything the app holds is asserted again, and watchers get a fresh state.
    func reconnected() {
        reconciler.serviceChanged()
        follower.reconnected()
        reconciler.reconcile()
    }

    func serviceAppeared() {
        follower.serviceAppeared()
        reconciler.reconcile()
    }

    func serviceLeft() {
        follower.serviceLeft()
    }

    func connectionLost() {
        reconciler.connectionLost()
        resumeWaiters()
    }

    func callAnswered() {
        resumeWaitersIfSettled()
    }

    func received(_ signal: Message, path: String) {
        follower.received(signal, path: path)
    }
}
