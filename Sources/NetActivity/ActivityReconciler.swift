import DBus
import NetActivityContract

/// The app's activities as it reported them, and the calls that bring the service in line.
///
/// Confined to the client's loop thread. The app's view (its live activities with label and
/// last progress) is the truth; the service's view is brought in line by `reconcile()`, which
/// runs after every change, reply and service restart. Each reply names the service instance
/// (unique name) that answered, so after a restart the reconciler knows exactly what the new
/// instance holds and re-asserts the rest. Calls go through the `ServiceLink`.
final class ActivityReconciler {
    private struct Tracked {
        var label: String
        var hints: ActivityHints
        var progress = Activity.Progress.bytes(0, 0)
        /// The service's id, and the instance that holds it.
        var remote: (id: UInt32, owner: String)?
        var beginInFlight = false
        /// Progress the service has not been sent yet.
        var progressDirty = false
        /// An `UpdateActivity` is on its way: the next waits for its reply.
        var updateInFlight = false
        var lastUpdate: ContinuousClock.Instant?
        /// Set while an update waits out `minimumUpdateSpacing`.
        var updateTimer: EventLoop.TimerID?
        var ended = false
        /// The service refused it for good (e.g. LimitsExceeded); it stays local only.
        var refused = false
    }

    /// The least time between two `UpdateActivity` calls for one activity. The service merges
    /// progress over its own 50 ms throttle window anyway; more calls would only cost.
    static let minimumUpdateSpacing: Duration = .milliseconds(25)
    /// A fraction sent to a version 2 service is this many bytes' worth.
    static let fractionScale: UInt64 = 10_000

    /// Called after every `reconcile()`, when what could be sent is sent: flush waiters may go.
    var reconciled: () -> Void = {}

    private let link: ServiceLink
    private let loop: EventLoop
    /// Counts the updates waiting out their spacing.
    private let flush: Flush
    private let problems: @Sendable (String) -> Void
    private let clock = ContinuousClock()

    private var activities: [Int: Tracked] = [:]
    /// Activities whose state changed since `reconcile()` last looked at them, so a change to
    /// one of many live activities costs one, not all.
    private var needsAttention: Set<Int> = []
    /// The service instance that answered `UnknownMethod` to a version 3 method: it predates
    /// interface version 3, so activities begin without hints and fractions go as bytes.
    private var versionTwoService: String?
    /// Once per client: the problem of an old service is no news after the first time.
    private var reportedVersionTwo = false

    init(link: ServiceLink, loop: EventLoop, flush: Flush, problems: @escaping @Sendable (String) -> Void) {
        self.link = link
        self.loop = loop
        self.flush = flush
        self.problems = problems
    }

    /// Whether the app holds live activities (or ended ones the service has not heard of yet).
    var isEmpty: Bool { activities.isEmpty }

    // MARK: - What the app says

    func begin(_ localID: Int, label: String, hints: ActivityHints) {
        activities[localID] = Tracked(label: label, hints: hints)
        needsAttention.insert(localID)
        reconcile()
    }

    func update(_ localID: Int, _ progress: Activity.Progress) {
        guard var activity = activities[localID], !activity.ended else { return }
        guard activity.progress != progress else { return }
        activity.progress = progress
        activity.progressDirty = true
        activities[localID] = activity
        needsAttention.insert(localID)
        reconcile()
    }

    func end(_ localID: Int) {
        activities[localID]?.ended = true
        needsAttention.insert(localID)
        reconcile()
    }

    // MARK: - What the link says

    /// The service instance changed: every activity is looked at again at the next `reconcile()`.
    func serviceChanged() {
        needsAttention.formUnion(activities.keys)
    }

    /// The connection went: a new one may reach a new bus whose service has the same unique
    /// name and counts ids from 1 again, so nothing held on the old one can be trusted.
    func connectionLost() {
        for localID in activities.keys {
            activities[localID]?.remote = nil
            activities[localID]?.beginInFlight = false
            activities[localID]?.updateInFlight = false
        }
    }

    // MARK: - Keeping the service in step

    /// Sends whatever brings the service in line with the app's view.
    func reconcile() {
        guard link.readyToSend() else {
            reconciled()
            return
        }
        let due = needsAttention
        needsAttention.removeAll()
        for localID in due {
            if let activity = activities[localID] { reconcileActivity(localID, activity) }
        }
        reconciled()
    }

    private func reconcileActivity(_ localID: Int, _ activity: Tracked) {
        var activity = activity
        guard !activity.beginInFlight else { return }
        if let remote = activity.remote, remote.owner != link.serviceOwner {
            activity.remote = nil  // that instance is gone, and its activities with it
            activity.updateInFlight = false
        }
        if activity.ended || activity.refused {
            if activity.ended, let remote = activity.remote {
                // A report made before the end reaches the service before it: one connection's
                // calls are answered in order, so the update needs no waiting for.
                if activity.progressDirty { sendProgress(of: activity, to: remote.id) { _ in } }
                let method = NetActivityInterface.endActivity
                link.call(method.name, method.arguments(remote.id)) { _ in }
            }
            if let timer = activity.updateTimer {
                loop.cancel(timer)
                flush.finished()
            }
            activities[localID] = nil
            return
        }
        if let remote = activity.remote {
            if activity.progressDirty, !activity.updateInFlight {
                let now = clock.now
                if let last = activity.lastUpdate, now - last < Self.minimumUpdateSpacing {
                    // Held. A stream of reports sends with the first one past the spacing, in the
                    // turn that brought it; the timer only catches the last of a stream, so a
                    // steady stream wakes the loop for nothing else.
                    if activity.updateTimer == nil {
                        flush.started()
                        activity.updateTimer = loop.schedule(after: Self.minimumUpdateSpacing) { [self] in
                            flush.finished()
                            activities[localID]?.updateTimer = nil
                            needsAttention.insert(localID)
                            reconcile()
                        }
                    }
                } else {
                    if let timer = activity.updateTimer {
                        loop.cancel(timer)
                        activity.updateTimer = nil
                        flush.finished()
                    }
                    activity.progressDirty = false
                    activity.updateInFlight = true
                    activity.lastUpdate = now
                    sendProgress(of: activity, to: remote.id) { [self] result in
                        guard activities[localID] != nil else { return }
                        activities[localID]?.updateInFlight = false
                        if case .failure(let error) = result, error.name == .unknownMethod, noteVersionTwo(result) {
                            activities[localID]?.progressDirty = true  // again, as bytes
                        }
                        needsAttention.insert(localID)
                        reconcile()
                    }
                }
            }
        } else {
            activity.beginInFlight = true
            let withHints = !activity.hints.isEmpty && !speaksVersionTwo
            if withHints {
                let method = NetActivityInterface.beginActivityWithHints
                link.call(method.name, method.arguments(activity.label, activity.hints.dictionary)) { [self] result in
                    beginAnswered(localID, result, withHints: true)
                }
            } else {
                let method = NetActivityInterface.beginActivity
                link.call(method.name, method.arguments(activity.label)) { [self] result in
                    beginAnswered(localID, result, withHints: false)
                }
            }
            activity.progressDirty = activity.progress != .bytes(0, 0)
        }
        activities[localID] = activity
    }

    /// `UpdateActivityFraction` for a fraction (as bytes to a version 2 service), else
    /// `UpdateActivity`.
    private func sendProgress(of activity: Tracked, to id: UInt32, _ handler: @escaping (ReplyResult) -> Void) {
        switch activity.progress {
        case .bytes(let completed, let total):
            let method = NetActivityInterface.updateActivity
            link.call(method.name, method.arguments(id, completed, total), handler)
        case .fraction(let fraction) where speaksVersionTwo:
            let completed = UInt64((fraction * Double(Self.fractionScale)).rounded())
            let method = NetActivityInterface.updateActivity
            link.call(method.name, method.arguments(id, completed, Self.fractionScale), handler)
        case .fraction(let fraction):
            let method = NetActivityInterface.updateActivityFraction
            link.call(method.name, method.arguments(id, fraction), handler)
        }
    }

    // MARK: - A version 2 service

    /// Whether the service instance in use predates interface version 3.
    private var speaksVersionTwo: Bool { versionTwoService != nil && versionTwoService == link.serviceOwner }

    /// A version 3 call got `UnknownMethod`: its sender predates version 3. Says so once;
    /// returns whether the call is worth making again the version 2 way.
    private func noteVersionTwo(_ result: ReplyResult) -> Bool {
        guard case .failure(let error) = result, error.name == .unknownMethod, let owner = link.serviceOwner else {
            return false
        }
        versionTwoService = owner
        if !reportedVersionTwo {
            reportedVersionTwo = true
            problems("the network activity service predates interface version 3 (\(error.message)); "
                + "activities are shown without their hints, and fractions as byte counts")
        }
        return true
    }

    private func beginAnswered(_ localID: Int, _ result: ReplyResult, withHints: Bool) {
        guard var activity = activities[localID] else { return }
        activity.beginInFlight = false
        if withHints, noteVersionTwo(result) {
            // Begun again, without hints.
            activities[localID] = activity
            needsAttention.insert(localID)
            reconcile()
            return
        }
        switch result {
        case .success(let reply):
            if let id = (try? reply.arguments()).flatMap(NetActivityInterface.beginActivity.reply),
                let owner = reply.sender?.rawValue
            {
                link.noteAnswer(from: owner)
                activity.remote = (id, owner)
            }
        case .failure(let error) where ServiceLink.meansUnavailable(error):
            break
        case .failure(let error):
            problems("cannot track '\(activity.label)': \(error.message)")
            activity.refused = true
        }
        activities[localID] = activity
        needsAttention.insert(localID)
        reconcile()
    }
}
