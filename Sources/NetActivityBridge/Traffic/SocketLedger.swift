/// What each socket moved between two dumps, and whose it was: deltas of `tcp_info`'s counters
/// keyed by cookie, owners looked up once per socket, a closing socket's last bytes from the
/// destroy broadcasts (or, without them, from what the interfaces carried beyond the rest), and
/// what no socket explains. Pure Swift, fed parsed dumps.
final class SocketLedger {
    /// The only user whose sockets are credited; every user's explain the interfaces.
    let uid: UInt32
    let headerAllowance: Double
    private let lookup: SocketOwnerLookup
    /// Whether the table holds a full dump to take deltas from.
    private var baselined = false
    private var sockets: [UInt64: Followed] = [:]
    private var udpOwners: [UInt64: SocketOwner?] = [:]

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

    init(uid: UInt32, headerAllowance: Double, lookup: SocketOwnerLookup) {
        self.uid = uid
        self.headerAllowance = headerAllowance
        self.lookup = lookup
    }

    /// Forgets every socket: the next dump is a baseline again.
    func reset() {
        sockets.removeAll()
        udpOwners.removeAll()
        baselined = false
    }

    /// What each application of `uid` moved since the previous dump, by application; nil for
    /// the first dump after `reset()`, which only sets the counters to take deltas from.
    /// `interfaces` is what the default-route interfaces carried meanwhile, when known: what
    /// the sockets do not explain goes to the one QUIC application, or to "Other traffic".
    func account(_ sample: TrafficSample.Sockets, interfaces: InterfaceCounters.Bytes?) -> [String: (SocketOwner, UInt64, UInt64)]? {
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
                if followed.uid == uid, delta.received &+ delta.sent > 0, followed.owner == nil {
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
            let followed = seen.removeValue(forKey: record.cookie) ?? sockets[record.cookie]
            // Counted here, so never again as a socket that vanished.
            sockets[record.cookie] = nil
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
        guard !first else { return nil }
        var applications: [String: (SocketOwner, UInt64, UInt64)] = [:]
        func credit(_ owner: SocketOwner, _ received: UInt64, _ sent: UInt64) {
            applications[owner.application, default: (owner, 0, 0)].1 &+= received
            applications[owner.application, default: (owner, 0, 0)].2 &+= sent
        }
        for (cookie, delta) in moved.byCookie {
            guard let followed = seen[cookie] ?? gone[cookie], followed.uid == uid,
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
                if followed.uid == uid, let owner = followed.owner ?? nil { credit(owner, received, sent) }
            }
            let unmeasured = vanished.filter { !$0.measured }
            if !unmeasured.isEmpty {
                let share = InterfaceCounters.Bytes(
                    received: extra.received / UInt64(unmeasured.count), sent: extra.sent / UInt64(unmeasured.count))
                for followed in unmeasured where followed.uid == uid {
                    if let owner = followed.owner ?? nil { credit(owner, share.received, share.sent) }
                }
                extra = .init(received: 0, sent: 0)
            }
            if extra.received &+ extra.sent > 0 {
                credit(quicOwner(sample.udpSockets) ?? .otherTraffic, extra.received, extra.sent)
            }
        }
        return applications
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

    /// The one application of this user with UDP sockets connected to remote port 443, if
    /// exactly one has them.
    private func quicOwner(_ udp: [SocketRecord]) -> SocketOwner? {
        let quic = udp.filter {
            $0.uid == uid && $0.remotePort == 443 && $0.state == SocketRecord.established && !$0.isLoopback
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
}
