import DBus
import DesktopApplications
import NetActivity
import Platform

/// NetActivity's activities as jobs in plasmashell's job list: the session's and the system's
/// activities (merged, as every indicator shows them) that somebody reported, once each has
/// lasted 3 s (`MirrorPlan` decides; this class asks plasmashell). See docs/bridges.md,
/// "Plasma's job list".
///
/// Left out: what a bridge's traffic source observed and the jobs this bridge served (`isOwn`
/// tells them by the connection or process that reports them, never by label), and browser
/// downloads while `plasma-browser-integration-host` runs, which puts them there itself.
/// Views are asked of plasmashell's unique name, never of the well-known name, so a job the
/// mirror makes never reaches the bridge's own server. Confined to the bridge's loop thread.
final class JobMirror {
    private let loop: EventLoop
    private let connection: Connection
    /// plasmashell's unique name.
    let owner: BusName
    private let isOwn: (ActivityInfo) -> Bool
    private var plan = MirrorPlan()
    private var paths: [MirrorPlan.Key: ObjectPath] = [:]
    /// Views asked for whose activity ended before the reply: terminated when it comes.
    private var endedWhileAsking: Set<MirrorPlan.Key> = []
    private var states: MergedStates?
    private var activities: [MirrorPlan.Key: ActivityInfo] = [:]
    private var lastSnapshot: IndicatorSnapshot?
    private var timer: (id: EventLoop.TimerID, deadline: ContinuousClock.Instant)?
    private let clock = ContinuousClock()
    /// How often the services' state is read at most: plasmashell is updated once a second per
    /// job, so reading the progress the service announces 20 times a second 4 times a second is
    /// enough, and wakes the bridge less (docs/benchmarks.md, "The bridge").
    static let readInterval: Duration = .milliseconds(250)
    private let browsers: BrowserIntegration
    private let entries: DesktopEntries
    private var stopped = false

    init(
        loop: EventLoop, connection: Connection, owner: BusName, services: FollowedServices, processes: Processes,
        problems: @escaping @Sendable (String) -> Void, isOwn: @escaping (ActivityInfo) -> Bool
    ) {
        browsers = BrowserIntegration(processes: processes)
        entries = processes.entries
        self.loop = loop
        self.connection = connection
        self.owner = owner
        self.isOwn = isOwn
        states = services.observe(on: loop, problems: problems, sharingLoopReadingAtMostEvery: Self.readInterval) {
            [weak self] snapshot in
            self?.follow(snapshot)
        }
    }

    /// Terminates every job held, and stops following.
    func stop(terminating: Bool = true) {
        guard !stopped else { return }
        stopped = true
        states?.cancel()
        states = nil
        if let timer { loop.cancel(timer.id) }
        timer = nil
        if terminating {
            for key in plan.heldJobs { terminate(key) }
            connection.flush()
        }
        plan.forgetAll()
        paths.removeAll()
        endedWhileAsking.removeAll()
    }

    // MARK: - Following

    /// Judges the activities last seen again, when what `isOwn` knows changed.
    func ownershipChanged() {
        if let snapshot = lastSnapshot { follow(snapshot) }
    }

    private func follow(_ snapshot: IndicatorSnapshot) {
        lastSnapshot = snapshot
        var eligible: [MirrorPlan.Key: ActivityInfo] = [:]
        if snapshot.serviceAvailable {
            for activity in snapshot.activities where !isOwn(activity) && !browsers.showsItself(activity) {
                eligible[MirrorPlan.Key(bus: activity.bus, id: activity.id)] = activity
            }
        }
        activities = eligible
        step()
    }

    private func step() {
        guard !stopped else { return }
        let (actions, next) = plan.step(
            activities.map { ($0.key, $0.value) }, now: clock.now, wallMicroseconds: Clocks.wallMicroseconds())
        for action in actions {
            switch action {
            case .request(let key): request(key)
            case .update(let key, let entries): send(entries, to: key)
            case .terminate(let key): terminate(key)
            }
        }
        // Most states come while a job's update waits out its second: the timer stays as it is.
        guard timer?.deadline != next else { return }
        if let timer { loop.cancel(timer.id) }
        timer = next.map { deadline in
            let id = loop.schedule(after: max(.zero, deadline - clock.now)) { [weak self] in
                self?.timer = nil
                self?.step()
            }
            return (id, deadline)
        }
    }

    // MARK: - Calls to plasmashell

    private func request(_ key: MirrorPlan.Key) {
        guard let activity = activities[key] else { return }
        let (desktopEntry, hints) = Self.application(of: activity, in: entries)
        connection.call(
            JobViewInterfaces.requestViewV2, desktopEntry, 0, VariantDictionary(hints), destination: owner,
            path: JobViewInterfaces.serverPath
        ) { [weak self] result in
            guard let self, !self.stopped else { return }
            guard case .success(let path) = result else {
                // plasmashell refused or left: nothing to terminate.
                self.endedWhileAsking.remove(key)
                return
            }
            self.paths[key] = path
            if self.endedWhileAsking.remove(key) != nil {
                self.terminate(key)
            } else {
                self.send(self.plan.viewReady(key, now: self.clock.now), to: key)
            }
        }
    }

    private func send(_ entries: [(String, Value)], to key: MirrorPlan.Key) {
        guard let path = paths[key], !entries.isEmpty,
            let message = try? JobViewInterfaces.update.call(VariantDictionary(entries), destination: owner, path: path)
        else { return }
        _ = try? connection.send(message)
    }

    private func terminate(_ key: MirrorPlan.Key) {
        guard let path = paths.removeValue(forKey: key) else {
            endedWhileAsking.insert(key)
            return
        }
        if let message = try? JobViewInterfaces.terminateV3.call(0, "", VariantDictionary([]), destination: owner, path: path) {
            _ = try? connection.send(message)
        }
    }

    /// The job's `desktopEntry` and hints: the activity's desktop id where an entry is installed
    /// for it (plasmashell then names it and shows its icon), else its application's name and
    /// its `icon` hint.
    static func application(of activity: ActivityInfo, in entries: DesktopEntries) -> (String, [(String, Value)]) {
        for id in [activity.application, activity.claimedApplication] where DesktopEntries.isDesktopID(id) {
            guard let entry = entries.entry(of: id) else { continue }
            var hints: [(String, Value)] = [("application-display-name", .string(entry.name ?? id))]
            if let icon = entry.icon { hints.append(("application-icon-name", .string(icon))) }
            return (id, hints)
        }
        let name = [activity.claimedApplication, activity.application].first { !$0.isEmpty } ?? "NetActivity"
        var hints: [(String, Value)] = [("application-display-name", .string(name))]
        if !activity.icon.isEmpty { hints.append(("application-icon-name", .string(activity.icon))) }
        return ("", hints)
    }
}
