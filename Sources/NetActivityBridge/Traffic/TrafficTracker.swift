/// The traffic source's decisions, in pure Swift: when to follow sockets, and when an
/// application's activity begins, progresses and ends (what each application moved is the
/// `SocketLedger`'s). Fed one `TrafficSample` at a time with the time it was read (any monotonic
/// origin), so tests drive it with made-up samples and times, in microseconds.
///
/// Not thread-safe: the source calls it on the bridge's loop.
final class TrafficTracker {
    let settings: TrafficSettings

    /// The counters of the previous sample, and when it was read.
    private var previousInterfaces: [String: InterfaceCounters.Bytes]?
    private var previousTime: Duration?
    /// When the interfaces last moved a tenth of the threshold per window; nil when quiet.
    private var lastBusy: Duration?
    private let ledger: SocketLedger
    private var applications: [String: Application] = [:]

    /// One application's recent bytes and what is shown of it.
    private struct Application {
        var owner: SocketOwner
        var history: [(time: Duration, received: UInt64, sent: UInt64)] = []
        /// What it moved before its window while idle, and its sockets before they were
        /// followed: an activity's first `completed` counts it too, so it counts from the
        /// sockets' first bytes rather than from the moment the threshold was crossed.
        var earlier = InterfaceCounters.Bytes(received: 0, sent: 0)
        var state: State = .idle
        /// Since when its window has been below a tenth of the threshold.
        var quietSince: Duration?

        enum State: Equatable {
            case idle
            case shown(download: Bool, completed: UInt64)
            /// Someone else reports it, or did until lately.
            case heldBack
        }
    }

    /// Applications followed at most at once: beyond it the quietest idle ones are forgotten.
    static let applicationLimit = 1_024

    init(settings: TrafficSettings, lookup: SocketOwnerLookup) {
        self.settings = settings
        // Unexplained at the quiet rate or faster (a tenth of the threshold per window) is worth a dump.
        let trigger = TrafficTracker.perWindow(settings.quietBytes, over: settings.window, window: settings.socketInterval)
        ledger = SocketLedger(
            audience: settings.audience, headerAllowance: settings.headerAllowance, unexplainedTrigger: trigger, lookup: lookup)
    }

    /// The sockets the next sample need only look up, or nil when it needs a full dump.
    var socketsToLookUp: [SocketRecord]? { ledger.socketsToLookUp }

    /// Whether the next sample should carry the sockets: the interfaces moved a tenth of the
    /// threshold within the last `quietAfter`.
    private(set) var followsSockets = false

    /// How long until the next sample.
    var nextInterval: Duration { followsSockets ? settings.socketInterval : settings.counterInterval }

    /// Takes one sample read at `now` and says what to show.
    func take(_ sample: TrafficSample, at now: Duration) -> [TrafficEvent] {
        let moved = previousInterfaces.map { InterfaceCounters.moved(from: $0, to: sample.interfaces) }
        let elapsed = previousTime.map { now - $0 } ?? settings.counterInterval
        previousInterfaces = sample.interfaces
        previousTime = now
        if let moved, Self.perWindow(moved.received &+ moved.sent, over: elapsed, window: settings.window) >= settings.quietBytes {
            lastBusy = now
        }
        var events: [TrafficEvent] = []
        if let sockets = sample.sockets {
            events += update(ledger.account(sockets, interfaces: moved) ?? [:], reported: sockets.reported, at: now)
        } else if followsSockets {
            // The dump failed: what is shown still ages and ends, rather than hang on.
            events += update([:], reported: [], at: now)
        }
        let busy = lastBusy.map { now - $0 < settings.quietAfter } ?? false
        if followsSockets && !busy {
            events += stopFollowing()
        }
        followsSockets = busy
        return events
    }

    /// Ends everything shown and forgets every socket: the source stops, or sockets are no
    /// longer followed.
    func stopFollowing() -> [TrafficEvent] {
        var events: [TrafficEvent] = []
        for (key, application) in applications.sorted(by: { $0.key < $1.key }) {
            if case .shown = application.state { events.append(.ended(key: key)) }
        }
        applications.removeAll()
        ledger.reset()
        return events
    }

    // MARK: - Applications

    private func update(
        _ moved: [String: ApplicationBytes], reported: [ReportedActivity], at now: Duration
    ) -> [TrafficEvent] {
        var earlierNow: [String: InterfaceCounters.Bytes] = [:]
        for (key, bytes) in moved {
            var application = applications[key] ?? Application(owner: bytes.owner)
            application.owner.merge(bytes.owner)
            application.history.append((now, bytes.received, bytes.sent))
            application.earlier.received &+= bytes.earlier.received
            application.earlier.sent &+= bytes.earlier.sent
            earlierNow[key] = bytes.earlier
            applications[key] = application
        }
        var events: [TrafficEvent] = []
        for key in applications.keys.sorted() {
            guard var application = applications[key] else { continue }
            if application.state == .idle {
                for old in application.history where now - old.time >= settings.window {
                    application.earlier.received &+= old.received
                    application.earlier.sent &+= old.sent
                }
            }
            application.history.removeAll { now - $0.time >= settings.window }
            let received = application.history.reduce(0) { $0 &+ $1.received }
            let sent = application.history.reduce(0) { $0 &+ $1.sent }
            let quiet = received &+ sent < settings.quietBytes
            if quiet {
                application.quietSince = application.quietSince ?? now
            } else {
                application.quietSince = nil
            }
            let quietLongEnough = application.quietSince.map { now - $0 >= settings.endAfter } ?? false
            let covered = reported.contains { $0.covers(application.owner) }
            let latest = application.history.last.flatMap { $0.time == now ? $0 : nil }
            switch application.state {
            case .idle:
                if covered {
                    application.state = .heldBack
                    application.earlier = .init(received: 0, sent: 0)
                } else if received &+ sent >= settings.threshold, !application.owner.isIgnored(by: settings.ignored) {
                    let download = received >= sent
                    let owner = application.owner
                    let completed = download ? received &+ application.earlier.received : sent &+ application.earlier.sent
                    application.state = .shown(download: download, completed: completed)
                    application.earlier = .init(received: 0, sent: 0)
                    events.append(
                        .began(
                            ObservedActivity(
                                key: key, label: owner.label, application: owner == .otherTraffic ? nil : owner.application,
                                icon: owner.icon, download: download, completed: completed)))
                } else if quietLongEnough {
                    // A trickle long since stopped is no part of the next transfer.
                    application.earlier = .init(received: 0, sent: 0)
                }
            case .shown(let download, let completed):
                let joined = earlierNow[key].map { download ? $0.received : $0.sent } ?? 0
                application.earlier = .init(received: 0, sent: 0)
                if covered {
                    application.state = .heldBack
                    events.append(.ended(key: key))
                } else if quietLongEnough {
                    application.state = .idle
                    events.append(.ended(key: key))
                } else if let latest {
                    // A socket of the baseline that joins the transfer brings its bytes from its first.
                    let more = (download ? latest.received : latest.sent) &+ joined
                    if more > 0 {
                        application.state = .shown(download: download, completed: completed &+ more)
                        events.append(.progressed(key: key, completed: completed &+ more))
                    }
                }
            case .heldBack:
                // Until its own traffic has been low for the end period, or a second activity
                // would begin the moment the reporter's ends.
                application.earlier = .init(received: 0, sent: 0)
                if !covered && quietLongEnough { application.state = .idle }
            }
            if application.state == .idle && application.history.isEmpty {
                applications[key] = nil
            } else {
                applications[key] = application
            }
        }
        if applications.count > Self.applicationLimit {
            for key in applications.filter({ $0.value.state == .idle }).keys.prefix(applications.count - Self.applicationLimit) {
                applications[key] = nil
            }
        }
        return events
    }

    /// Bytes moved in `elapsed` scaled to bytes per `window`.
    static func perWindow(_ bytes: UInt64, over elapsed: Duration, window: Duration) -> UInt64 {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seconds > 0 else { return bytes }
        let windowSeconds = Double(window.components.seconds) + Double(window.components.attoseconds) / 1e18
        return UInt64(min(Double(UInt64.max / 2), Double(bytes) * windowSeconds / seconds))
    }
}

extension SocketOwner {
    /// Learns what another socket of the same application adds: its cgroup, its processes.
    mutating func merge(_ other: SocketOwner) {
        if cgroup == nil { cgroup = other.cgroup }
        if processes.count < 256 { processes.formUnion(other.processes) }
    }
}
