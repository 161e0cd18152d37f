/// What each socket moved between two samples, and whose it was: deltas of `tcp_info`'s
/// counters keyed by cookie, owners looked up once per socket, a closing socket's last bytes from
/// the destroy broadcasts (or, without them, from what the interfaces carried beyond the rest), and
/// what no socket explains. Pure Swift, fed parsed sockets.
///
/// A full dump walks every socket of the machine, so the ledger asks for one only every
/// `samplesPerDump` samples; in between it names the sockets that lately moved
/// (`socketsToLookUp`) and takes their fresh counters alone. Bytes the interfaces carried that
/// those do not explain mean a socket it has not seen: it reads a full dump in the same sample.
final class SocketLedger {
    /// Whose sockets are credited; everyone's explain the interfaces.
    let audience: TrafficAudience
    let headerAllowance: Double
    /// Unexplained bytes in one sample, beyond the header allowance, that make lookups
    /// insufficient: below it they could begin nothing.
    let unexplainedTrigger: UInt64
    private let lookup: SocketOwnerLookup
    /// Whether the table holds a full dump to take deltas from.
    private var baselined = false
    private var sockets: [UInt64: Followed] = [:]
    private var udpOwners: [UInt64: SocketOwner?] = [:]
    /// Samples since the last full dump.
    private var samplesSinceDump = 0
    /// Whether the last full dump left bytes unexplained (QUIC moves them): they ask for no
    /// dump again before the next regular one.
    private var unexplainedIsNotTCP = false

    /// A full dump at least this often, in samples: a transfer that begins behind a busier one,
    /// within its header allowance, is seen by then.
    static let samplesPerDump = 5
    /// Sockets looked up one by one at most; beyond it a dump is cheaper.
    static let lookupLimit = 256
    /// Samples a socket stays looked up after it last moved, so one that pauses stays known.
    static let idleSamplesLookedUp = 3

    /// One socket followed: its counters at the last dump and its owner, looked up once.
    private struct Followed {
        /// As last read: the address and cookie a lookup asks by.
        var record: SocketRecord
        var received: UInt64
        var acked: UInt64
        var uid: UInt32
        /// Whether the audience counts it, decided once from its cgroup and uid when it first
        /// moves; nil until then.
        var counted: Bool? = nil
        /// Looked up once: nil until then, `.some(nil)` when nobody was found.
        var owner: SocketOwner?? = nil
        /// What its counters held when the ledger first read them (its bytes from its first
        /// one, before the baseline), until they are credited with its first move.
        var earlier = InterfaceCounters.Bytes(received: 0, sent: 0)
        /// What it moved between the last two readings.
        var lastDelta = InterfaceCounters.Bytes(received: 0, sent: 0)
        /// Whether it was in two readings, so `lastDelta` says how fast it goes.
        var measured = false
        /// Readings since it last moved; one never seen moving counts as long idle.
        var idleSamples = SocketLedger.idleSamplesLookedUp

        init(_ record: SocketRecord) {
            self.record = record
            received = 0
            acked = 0
            uid = record.uid
        }

        /// What it moved since these counters, none where a counter went backwards.
        func delta(to received: UInt64, _ acked: UInt64) -> InterfaceCounters.Bytes {
            .init(
                received: received >= self.received ? received - self.received : 0,
                sent: acked >= self.acked ? acked - self.acked : 0)
        }
    }

    init(audience: TrafficAudience, headerAllowance: Double, unexplainedTrigger: UInt64, lookup: SocketOwnerLookup) {
        self.audience = audience
        self.headerAllowance = headerAllowance
        self.unexplainedTrigger = max(1, unexplainedTrigger)
        self.lookup = lookup
    }

    /// Forgets every socket: the next dump is a baseline again.
    func reset() {
        sockets.removeAll()
        udpOwners.removeAll()
        baselined = false
        samplesSinceDump = 0
        unexplainedIsNotTCP = false
    }

    /// The sockets the next sample need only look up, or nil when it needs a full dump: before
    /// the baseline, every `samplesPerDump` samples, and when too many sockets are to be read.
    var socketsToLookUp: [SocketRecord]? {
        guard baselined, samplesSinceDump < Self.samplesPerDump - 1 else { return nil }
        var active: [SocketRecord] = []
        // The baseline's sockets are read once more, so each is measured before it may vanish.
        for followed in sockets.values where followed.idleSamples < Self.idleSamplesLookedUp || !followed.measured {
            guard active.count < Self.lookupLimit else { return nil }
            active.append(followed.record)
        }
        return active
    }

    /// What each application of the audience moved since the previous sample, by application;
    /// nil for the first dump after `reset()`, which only sets the counters to take deltas from
    /// (and the bytes each socket held then are credited, as `earlier`, with its first move).
    /// `interfaces` is what the default-route interfaces carried meanwhile, when known: what
    /// the sockets do not explain goes to the one QUIC application, or to "Other traffic".
    func account(_ sample: TrafficSample.Sockets, interfaces: InterfaceCounters.Bytes?) -> [String: ApplicationBytes]? {
        let first = !baselined
        var tally = self.tally(sample.tcp, destroyed: sample.destroyed, lookedUp: sample.lookedUp, first: first)
        var extra = interfaces.map { tally.unexplained(of: $0, allowance: headerAllowance) }
        if sample.lookedUp != nil {
            samplesSinceDump += 1
            if let remaining = extra, remaining.received &+ remaining.sent >= unexplainedTrigger, !unexplainedIsNotTCP,
                let dump = sample.readAllTCP?()
            {
                tally = self.tally(dump, destroyed: sample.destroyed, lookedUp: nil, first: first)
                extra = interfaces.map { tally.unexplained(of: $0, allowance: headerAllowance) }
            }
        }
        if tally.complete {
            samplesSinceDump = 0
            unexplainedIsNotTCP = !first && (extra.map { $0.received &+ $0.sent >= unexplainedTrigger } ?? false)
        }
        // Whose the sockets that began to carry traffic are, from their cgroups; the owners of
        // the audience's, looked up together.
        if !tally.fresh.isEmpty {
            let paths = lookup.cgroupPaths(of: Set(tally.fresh.compactMap(\.cgroupID)))
            var counted: [SocketRecord] = []
            for record in tally.fresh {
                let counts = audience.counts(socketUID: record.uid, cgroup: record.cgroupID.flatMap { paths[$0] })
                tally.seen[record.cookie]?.counted = counts
                if counts { counted.append(record) }
            }
            let owners = counted.isEmpty ? [:] : lookup.owners(of: counted)
            for record in counted { tally.seen[record.cookie]?.owner = .some(owners[record.cookie]) }
        }
        if tally.complete {
            sockets = tally.seen
        } else {
            for cookie in sample.lookedUp ?? [] { sockets[cookie] = nil }
            sockets.merge(tally.seen) { $1 }
        }
        for cookie in tally.gone.keys { sockets[cookie] = nil }
        baselined = true
        guard !first else { return nil }
        var applications: [String: ApplicationBytes] = [:]
        func credit(_ owner: SocketOwner, _ received: UInt64, _ sent: UInt64, earlier: InterfaceCounters.Bytes? = nil) {
            applications[owner.application, default: ApplicationBytes(owner: owner)].received &+= received
            applications[owner.application, default: ApplicationBytes(owner: owner)].sent &+= sent
            if let earlier {
                applications[owner.application, default: ApplicationBytes(owner: owner)].earlier.received &+= earlier.received
                applications[owner.application, default: ApplicationBytes(owner: owner)].earlier.sent &+= earlier.sent
            }
        }
        for (cookie, delta) in tally.moved.byCookie {
            guard let followed = tally.seen[cookie] ?? tally.gone[cookie], followed.counted == true,
                let owner = followed.owner ?? nil
            else { continue }
            // What it held at the baseline goes with its first move, once.
            let earlier = followed.earlier
            if earlier.received &+ earlier.sent > 0 {
                if tally.seen[cookie] != nil { sockets[cookie]?.earlier = .init(received: 0, sent: 0) }
            }
            credit(owner, delta.received, delta.sent, earlier: earlier)
        }
        for (followed, received, sent) in tally.vanishedShares where followed.counted == true {
            if let owner = followed.owner ?? nil { credit(owner, received, sent, earlier: followed.earlier) }
        }
        // What lookups leave unexplained below the trigger may be a socket not looked up, which
        // the next dump credits: only a full reading, or bytes a dump found no TCP's, give it away.
        // The system side gives them to a unit's QUIC alone: "Other traffic" there would show
        // every user's QUIC on the system bus, and again beside each user's own.
        if let extra, extra.received &+ extra.sent > 0, tally.complete || unexplainedIsNotTCP,
            let owner = quicOwner(sample.udpSockets) ?? (audience == .system ? nil : .otherTraffic)
        {
            credit(owner, extra.received, extra.sent)
        }
        return applications
    }

    /// One sample's sockets set against the table, without changing it.
    private struct Tally {
        /// Whether the sockets were a full dump, which every socket not in it has left.
        var complete: Bool
        /// The sockets read, with their new counters.
        var seen: [UInt64: Followed] = [:]
        var moved = Moved()
        /// Sockets that moved for the first time: whether they count, and their owners, are looked up.
        var fresh: [SocketRecord] = []
        /// Sockets whose destroy broadcast came.
        var gone: [UInt64: Followed] = [:]
        /// Sockets gone without a broadcast.
        var vanished: [Followed] = []
        /// What each vanished socket is credited of the unexplained bytes; set by `unexplained`.
        var vanishedShares: [(Followed, UInt64, UInt64)] = []

        /// The bytes the interfaces carried that neither the sockets read nor the vanished ones
        /// explain, after crediting the vanished ones theirs.
        ///
        /// Sockets gone without a broadcast (none subscribed, or its queue overflowed) took their
        /// last bytes with them: of what the interfaces carried beyond the rest, about what each
        /// moved in its last period is theirs; one seen in a single reading (it moved its last
        /// bytes within its first period) may take the rest, shared. Else every transfer would end
        /// with a burst of "Other traffic", another user's too.
        mutating func unexplained(of interfaces: InterfaceCounters.Bytes, allowance: Double) -> InterfaceCounters.Bytes {
            var extra = SocketLedger.unexplained(interfaces, explained: moved.total, allowance: allowance)
            vanishedShares = []
            for followed in vanished where followed.measured && extra.received &+ extra.sent > 0 {
                let received = min(extra.received, followed.lastDelta.received)
                let sent = min(extra.sent, followed.lastDelta.sent)
                extra.received -= received
                extra.sent -= sent
                vanishedShares.append((followed, received, sent))
            }
            let unmeasured = vanished.filter { !$0.measured }
            if !unmeasured.isEmpty {
                let count = UInt64(unmeasured.count)
                for followed in unmeasured {
                    vanishedShares.append((followed, extra.received / count, extra.sent / count))
                }
                extra = .init(received: 0, sent: 0)
            }
            return extra
        }
    }

    private func tally(_ tcp: [SocketRecord], destroyed: [SocketRecord], lookedUp: Set<UInt64>?, first: Bool) -> Tally {
        var tally = Tally(complete: lookedUp == nil)
        for record in tcp where !record.isLoopback {
            guard let received = record.bytesReceived, let acked = record.bytesAcked else { continue }
            var followed = sockets[record.cookie] ?? Followed(record)
            followed.record = record
            if !first {
                // A socket first seen after the baseline was opened since: all it moved is new.
                let delta = followed.delta(to: received, acked)
                followed.lastDelta = delta
                followed.measured = true
                let moved = delta.received &+ delta.sent > 0
                followed.idleSamples = moved ? 0 : min(followed.idleSamples + 1, Self.idleSamplesLookedUp)
                if moved, followed.counted == nil {
                    tally.fresh.append(record)
                }
                tally.moved.add(delta, of: record.cookie)
            }
            if first, sockets[record.cookie] == nil {
                followed.earlier = .init(received: received, sent: acked)
            }
            followed.received = received
            followed.acked = acked
            tally.seen[record.cookie] = followed
        }
        for record in destroyed where !record.isLoopback {
            guard !first, let received = record.bytesReceived, let acked = record.bytesAcked else { continue }
            // The broadcast's uid reads 0: a socket not followed before is nobody's we know.
            // One read this very sample has only what it moved after the reading left to count.
            let followed = tally.seen.removeValue(forKey: record.cookie) ?? sockets[record.cookie]
            var unknown = Followed(record)
            unknown.uid = .max
            tally.moved.add((followed ?? unknown).delta(to: received, acked), of: record.cookie)
            if let followed { tally.gone[record.cookie] = followed }
        }
        guard !first else { return tally }
        // Gone: every socket a full dump lacks, or one a lookup asked after and did not find.
        func vanished(_ cookie: UInt64) -> Bool { tally.seen[cookie] == nil && tally.gone[cookie] == nil }
        if let lookedUp {
            tally.vanished = lookedUp.filter(vanished).compactMap { sockets[$0] }
        } else {
            tally.vanished = sockets.filter { vanished($0.key) }.map(\.value)
        }
        return tally
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
    fileprivate static func unexplained(
        _ interfaces: InterfaceCounters.Bytes, explained: InterfaceCounters.Bytes, allowance headerAllowance: Double
    ) -> InterfaceCounters.Bytes {
        let allowance = 1 + headerAllowance
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

    /// The one application of the audience with UDP sockets connected to remote port 443, if
    /// exactly one has them.
    private func quicOwner(_ udp: [SocketRecord]) -> SocketOwner? {
        let connected = udp.filter { $0.remotePort == 443 && $0.state == SocketRecord.established && !$0.isLoopback }
        let paths = lookup.cgroupPaths(of: Set(connected.compactMap(\.cgroupID)))
        let quic = connected.filter { audience.counts(socketUID: $0.uid, cgroup: $0.cgroupID.flatMap { paths[$0] }) }
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
}
