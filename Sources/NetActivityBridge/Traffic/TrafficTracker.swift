/// The traffic source's decisions, in pure Swift: when to follow sockets, what each socket
/// moved, which application that was, and when an application's activity begins, progresses
/// and ends. Fed one `TrafficSample` at a time with the time it was read (any monotonic
/// origin), so tests drive it with made-up samples and times, in microseconds.
///
/// Not thread-safe: the source calls it on the bridge's loop.
final class TrafficTracker {
    let settings: TrafficSettings
    private let lookup: SocketOwnerLookup

    /// The counters of the previous sample, and when it was read.
    private var previousInterfaces: [String: InterfaceCounters.Bytes]?
    private var previousTime: Duration?
    /// When the interfaces last moved a tenth of the threshold per window; nil when quiet.
    private var lastBusy: Duration?
    /// Whether the socket table holds a full dump to take deltas from.
    private var baselined = false
    private var sockets: [UInt64: Followed] = [:]
    private var udpOwners: [UInt64: SocketOwner?] = [:]
    private var applications: [String: Application] = [:]

    /// One socket followed: its counters at the last dump and its owner, looked up once.
    private struct Followed {
        var received: UInt64
        var acked: UInt64
        var uid: UInt32
        /// Looked up once: nil until then, `.some(nil)` when nobody was found.
        var owner: SocketOwner?? = nil
        /// What it moved between the last two dumps.
        var lastDelta = InterfaceCounters.Bytes(received: 0, sent: 0)
        /// Whether it was in two dumps, so `lastDelta` says how fast it goes.
        var measured = false

        /// What it moved since these counters, none where a counter went backwards.
        func delta(to received: UInt64, _ acked: UInt64) -> InterfaceCounters.Bytes {
            .init(
                received: received >= self.received ? received - self.received : 0,
                sent: acked >= self.acked ? acked - self.acked : 0)
        }
    }

    /// One application's recent bytes and what is shown of it.
    private struct Application {
        var owner: SocketOwner
        var history: [(time: Duration, received: UInt64, sent: UInt64)] = []
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
        self.lookup = lookup
    }

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
            events += follow(sockets, interfaces: moved, at: now)
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
        sockets.removeAll()
        udpOwners.removeAll()
        baselined = false
        return events
    }

    // MARK: - Sockets

    private func follow(_ sample: TrafficSample.Sockets, interfaces: InterfaceCounters.Bytes?, at now: Duration) -> [TrafficEvent] {
        var moved = Moved()
        let first = !baselined
        var seen: [UInt64: Followed] = [:]
        var fresh: [SocketRecord] = []
        for record in sample.tcp where !record.isLoopback {
            guard let received = record.bytesReceived, let acked = record.bytesAcked else { continue }
            var followed = sockets[record.cookie] ?? Followed(received: 0, acked: 0, uid: record.uid)
            if !first {
                // A socket first seen after the baseline was opened since: all it moved is new.
                let delta = followed.delta(to: received, acked)
                followed.lastDelta = delta
                followed.measured = true
                if followed.uid == settings.uid, delta.received &+ delta.sent > 0, followed.owner == nil {
                    fresh.append(record)
                }
                moved.add(delta, of: record.cookie)
            }
            followed.received = received
            followed.acked = acked
            seen[record.cookie] = followed
        }
        // Owners of the sockets that began to carry traffic, looked up together.
        if !fresh.isEmpty {
            let owners = lookup.owners(of: fresh)
            for record in fresh { seen[record.cookie]?.owner = .some(owners[record.cookie]) }
        }
        var gone: [UInt64: Followed] = [:]
        for record in sample.destroyed where !record.isLoopback {
            guard !first, let received = record.bytesReceived, let acked = record.bytesAcked else { continue }
            // The broadcast's uid reads 0: a socket not followed before is nobody's we know.
            // One dumped this very sample has only what it moved after the dump left to count.
            let followed = seen.removeValue(forKey: record.cookie) ?? sockets.removeValue(forKey: record.cookie)
            moved.add((followed ?? Followed(received: 0, acked: 0, uid: .max)).delta(to: received, acked), of: record.cookie)
            if let followed { gone[record.cookie] = followed }
        }
        // Sockets gone without a broadcast (none subscribed, or its queue overflowed) took
        // their last bytes with them: of what the interfaces carried beyond the rest, about
        // what each moved in its last period is theirs; one seen in a single dump (it moved
        // its last bytes within its first period) may take the rest, shared. Else every
        // transfer would end with a burst of "Other traffic", another user's too.
        let vanished = first ? [] : sockets.filter { seen[$0.key] == nil }.map(\.value)
        sockets = seen
        baselined = true
        guard !first else { return update([:], reported: sample.reported, at: now) }
        var applications: [String: (SocketOwner, UInt64, UInt64)] = [:]
        func credit(_ owner: SocketOwner, _ received: UInt64, _ sent: UInt64) {
            applications[owner.application, default: (owner, 0, 0)].1 &+= received
            applications[owner.application, default: (owner, 0, 0)].2 &+= sent
        }
        for (cookie, delta) in moved.byCookie {
            guard let followed = seen[cookie] ?? gone[cookie], followed.uid == settings.uid,
                let owner = followed.owner ?? nil
            else { continue }
            credit(owner, delta.received, delta.sent)
        }
        if let interfaces {
            var extra = unexplained(interfaces, explained: moved.total)
            for followed in vanished where followed.measured && extra.received &+ extra.sent > 0 {
                let received = min(extra.received, followed.lastDelta.received)
                let sent = min(extra.sent, followed.lastDelta.sent)
                extra.received -= received
                extra.sent -= sent
                if followed.uid == settings.uid, let owner = followed.owner ?? nil { credit(owner, received, sent) }
            }
            let unmeasured = vanished.filter { !$0.measured }
            if !unmeasured.isEmpty {
                let share = InterfaceCounters.Bytes(
                    received: extra.received / UInt64(unmeasured.count), sent: extra.sent / UInt64(unmeasured.count))
                for followed in unmeasured where followed.uid == settings.uid {
                    if let owner = followed.owner ?? nil { credit(owner, share.received, share.sent) }
                }
                extra = .init(received: 0, sent: 0)
            }
            if extra.received &+ extra.sent > 0 {
                credit(quicOwner(sample.udp) ?? .otherTraffic, extra.received, extra.sent)
            }
        }
        return update(applications, reported: sample.reported, at: now)
    }

    /// What the sockets of one sample moved, each and together.
    private struct Moved {
        var byCookie: [UInt64: InterfaceCounters.Bytes] = [:]
        var total = InterfaceCounters.Bytes(received: 0, sent: 0)

        mutating func add(_ delta: InterfaceCounters.Bytes, of cookie: UInt64) {
            byCookie[cookie, default: .init(received: 0, sent: 0)].received &+= delta.received
            byCookie[cookie, default: .init(received: 0, sent: 0)].sent &+= delta.sent
            total.received &+= delta.received
            total.sent &+= delta.sent
        }
    }

    /// The bytes the interfaces carried beyond what TCP explains, headers allowed for.
    private func unexplained(_ interfaces: InterfaceCounters.Bytes, explained: InterfaceCounters.Bytes) -> InterfaceCounters.Bytes {
        let allowance = 1 + settings.headerAllowance
        let total = Double(interfaces.received &+ interfaces.sent)
        let covered = Double(explained.received &+ explained.sent) * allowance
        guard total > covered else { return .init(received: 0, sent: 0) }
        // Headers travel both ways (a download's ACKs go out): the allowance is on the sum, and
        // what is left is split by which direction carried more than TCP.
        let extraIn = max(0, Double(interfaces.received) - Double(explained.received) * allowance)
        let extraOut = max(0, Double(interfaces.sent) - Double(explained.sent) * allowance)
        let share = extraIn + extraOut > 0 ? extraIn / (extraIn + extraOut) : 1
        let extra = total - covered
        return .init(received: UInt64(extra * share), sent: UInt64(extra * (1 - share)))
    }

    /// The one application of this user with UDP sockets connected to remote port 443, if
    /// exactly one has them.
    private func quicOwner(_ udp: [SocketRecord]) -> SocketOwner? {
        let quic = udp.filter {
            $0.uid == settings.uid && $0.remotePort == 443 && $0.state == SocketRecord.established && !$0.isLoopback
        }
        let unknown = quic.filter { udpOwners[$0.cookie] == nil }
        if !unknown.isEmpty {
            let owners = lookup.owners(of: unknown)
            for record in unknown { udpOwners[record.cookie] = .some(owners[record.cookie]) }
        }
        let live = Set(quic.map(\.cookie))
        udpOwners = udpOwners.filter { live.contains($0.key) }
        var found: [String: SocketOwner] = [:]
        for record in quic {
            if let owner = udpOwners[record.cookie] ?? nil { found[owner.application] = owner }
        }
        return found.count == 1 ? found.values.first : nil
    }

    // MARK: - Applications

    private func update(
        _ moved: [String: (SocketOwner, UInt64, UInt64)], reported: [ReportedActivity], at now: Duration
    ) -> [TrafficEvent] {
        for (key, (owner, received, sent)) in moved {
            var application = applications[key] ?? Application(owner: owner)
            application.owner.merge(owner)
            application.history.append((now, received, sent))
            applications[key] = application
        }
        var events: [TrafficEvent] = []
        for key in applications.keys.sorted() {
            guard var application = applications[key] else { continue }
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
                } else if received &+ sent >= settings.threshold, !application.owner.isIgnored(by: settings.ignored) {
                    let download = received >= sent
                    let owner = application.owner
                    application.state = .shown(download: download, completed: download ? received : sent)
                    events.append(
                        .began(
                            ObservedActivity(
                                key: key, label: owner.label, application: owner == .otherTraffic ? nil : owner.application,
                                icon: owner.icon, download: download, completed: download ? received : sent)))
                }
            case .shown(let download, let completed):
                if covered {
                    application.state = .heldBack
                    events.append(.ended(key: key))
                } else if quietLongEnough {
                    application.state = .idle
                    events.append(.ended(key: key))
                } else if let latest {
                    let more = download ? latest.received : latest.sent
                    if more > 0 {
                        application.state = .shown(download: download, completed: completed &+ more)
                        events.append(.progressed(key: key, completed: completed &+ more))
                    }
                }
            case .heldBack:
                // Until its own traffic has been low for the end period, or a second activity
                // would begin the moment the reporter's ends.
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
