import DBus
import DesktopApplications
import NetActivity
import NetActivityContract
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// Transfers no program announces, observed: each application of this user that moves more
/// than the threshold over TCP (and QUIC, roughly) is an activity while it does. See
/// docs/bridges.md, "traffic".
///
/// Costs nothing while nothing moves: a timer reads the default-route interfaces' counters
/// every 2 s. Once they carry a tenth of the threshold, it reads the TCP sockets with sock_diag
/// once a second (a full dump every few seconds, the sockets that move looked up one by one in
/// between, and the QUIC sockets when bytes are left unexplained), listens to the TCP destroy
/// broadcasts, and after 10 s of quiet goes back to counters alone. The decisions are `TrafficTracker`'s; this
/// class reads the kernel and reports.
final class TrafficSource: BridgeSource {
    private let context: BridgeContext
    private let tracker: TrafficTracker
    private let system: TrafficSystem
    private var timer: EventLoop.TimerID?
    private var shown: [String: Activity] = [:]
    private var observation: Observation?
    /// The service's activities, as the client's observer (on the client's thread) last saw them.
    private let reported = LatestActivities()
    private var saidBroken = false
    /// The cgroups of reporters' processes, read once each.
    private var reporterCgroups: [UInt32: String?] = [:]

    init(_ context: BridgeContext, settings: TrafficSettings, system: TrafficSystem? = nil) {
        self.context = context
        self.system =
            system
            ?? KernelTrafficSystem(
                owners: settings.systemSide
                    ? SystemUnitOwners(
                        descriptions: UnitDescriptions(
                            bus: context.systemBus,
                            searchPath: UnitDescriptions.searchPath(environment: getenv("SYSTEMD_UNIT_PATH").map { String(cString: $0) })))
                    : ProcessSocketOwners(uid: settings.uid, processes: context.processes))
        tracker = TrafficTracker(settings: settings, lookup: self.system.owners)
    }

    func start() throws(BusError) {
        // One dump up front: a sandbox without sock_diag is said now, once, and the source stays off.
        do {
            _ = try system.sockets()
        } catch {
            throw BusError(.failed, "sock_diag is not available (\(error.description)); traffic is not observed")
        }
        // No socket held while nothing moves.
        system.stopFollowing()
        observation = context.client.observe { [reported] snapshot in
            reported.value.withLock { $0 = snapshot.activities }
        }
        // The first reading now: the first timer's then tells what moved since.
        _ = tracker.take(TrafficSample(interfaces: system.interfaces()), at: Self.now)
        schedule()
    }

    func stop() {
        if let timer { context.loop.cancel(timer) }
        timer = nil
        observation?.cancel()
        observation = nil
        apply(tracker.stopFollowing())
        system.stopFollowing()
        for activity in shown.values { activity.end() }
        shown.removeAll()
    }

    private func schedule() {
        timer = context.loop.schedule(after: tracker.nextInterval) { [weak self] in self?.sample() }
    }

    private func sample() {
        let following = tracker.followsSockets
        apply(tracker.take(read(withSockets: following), at: Self.now))
        if tracker.followsSockets {
            system.startFollowing()
            // The interfaces just got busy: the baseline dump now, so the next sample has
            // deltas, or a transfer's begin would wait one period more.
            if !following { apply(tracker.take(read(withSockets: true), at: Self.now)) }
        } else {
            system.stopFollowing()
            reporterCgroups.removeAll()
        }
        schedule()
    }

    private func read(withSockets: Bool) -> TrafficSample {
        var sample = TrafficSample(interfaces: system.interfaces())
        guard withSockets else { return sample }
        do {
            var sockets: TrafficSample.Sockets
            if let known = tracker.socketsToLookUp {
                sockets = .init(tcp: try system.lookUp(known), lookedUp: Set(known.map(\.cookie)), readAllTCP: system.tcpReader)
            } else {
                let dump = try system.sockets()
                sockets = .init(tcp: dump.tcp, udp: dump.udp)
            }
            sockets.destroyed = system.destroyed()
            sockets.readUDP = system.udpReader
            sockets.reported = reportedByOthers()
            sample.sockets = sockets
        } catch {
            if !saidBroken { context.problems("cannot read sockets: \(error.description)") }
            saidBroken = true
        }
        return sample
    }

    private static var now: Duration { .nanoseconds(Clocks.monotonicNanoseconds()) }

    private func apply(_ events: [TrafficEvent]) {
        for event in events {
            switch event {
            case .began(let observed):
                let activity = context.client.begin(
                    observed.label,
                    hints: ActivityHints(
                        application: observed.application, icon: observed.icon, kind: observed.download ? .download : .upload))
                activity.report(completed: observed.completed, total: 0)
                shown[observed.key] = activity
            case .progressed(let key, let completed):
                shown[key]?.report(completed: completed, total: 0)
            case .ended(let key):
                shown.removeValue(forKey: key)?.end()
            }
        }
    }

    /// The activities others report: everything the service holds but this source's own, which
    /// it reports on a connection of its own (the bridge gives it one), so they are known by
    /// their owner. The bridge's other sources report from this process too, so an activity of
    /// this process counts only by the application it claims, never by its process or cgroup.
    private func reportedByOthers() -> [ReportedActivity] {
        let own = context.client.connectionName
        let activities = reported.value.withLock { $0 }.filter { own == nil || $0.owner != own }
        let me = UInt32(bitPattern: getpid())
        return activities.map { activity in
            guard let pid = activity.processID, pid != me else {
                return ReportedActivity(processID: nil, cgroup: nil, claimedApplication: activity.claimedApplication)
            }
            if reporterCgroups[pid] == nil {
                if reporterCgroups.count >= 1_024 { reporterCgroups.removeAll() }
                reporterCgroups[pid] = .some(ProcFS().cgroup(of: pid))
            }
            return ReportedActivity(processID: pid, cgroup: reporterCgroups[pid] ?? nil, claimedApplication: activity.claimedApplication)
        }
    }
}

/// The latest activities the client observed, handed from its thread to the loop's.
private final class LatestActivities: Sendable {
    let value = Locked<[ActivityInfo]>([])
}
