import Platform

/// A `NETLINK_SOCK_DIAG` socket: the one place that speaks sock_diag to the kernel, through the
/// platform's `NetlinkSocket`. Everything it receives is handed up as bytes to
/// `SocketRecord.parse(datagram:)`.
final class SockDiagSocket {
    private let socket: NetlinkSocket
    private var sequence: UInt32 = 0
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    /// Opens the socket; with `destroyGroups`, subscribed to the TCP destroy broadcasts, to be
    /// drained without waiting.
    ///
    /// - Throws: the errno when the socket cannot be made or subscribed (a sandbox that forbids
    ///   sock_diag), as a description.
    init(destroyGroups: Bool) throws(TrafficProblem) {
        do {
            // A dump is answered at once; a kernel that never answers must not hang the bridge.
            socket = try NetlinkSocket(
                family: NetlinkSocket.sockDiag, groups: destroyGroups ? NetlinkSocket.tcpDestroyGroups : [],
                receiveTimeout: destroyGroups ? nil : 1)
        } catch {
            throw TrafficProblem(
                destroyGroups ? "cannot subscribe the TCP destroy broadcasts: \(error)" : "no sock_diag socket: \(error)")
        }
    }

    /// Every socket of `protocolNumber` (6 TCP, 17 UDP) in `states`, IPv4 and IPv6.
    ///
    /// - Throws: when the kernel refuses the request or stops answering.
    func dump(protocolNumber: UInt8, states: UInt32) throws(TrafficProblem) -> [SocketRecord] {
        var records: [SocketRecord] = []
        for family in [SocketRecord.familyIPv4, SocketRecord.familyIPv6] {
            sequence &+= 1
            let request = socketDumpRequest(family: family, protocolNumber: protocolNumber, states: states, sequence: sequence)
            // A dump of 10,000 sockets is a few hundred datagrams; more than this is no dump.
            try exchange(request, datagrams: 100_000) { [sequence] datagram in
                let parsed = SocketRecord.parse(datagram: datagram, sequence: sequence)
                records += parsed.records
                return parsed.done
            }
        }
        return records
    }

    /// Requests sent in one datagram at most: the kernel answers them all before this reads
    /// any, and the answers must fit the receive buffer or be dropped.
    static let lookupsPerRequest = 32

    /// The TCP sockets among `sockets` that are still there, with fresh counters: a lookup by
    /// address and cookie each, a hash probe for the kernel where a dump walks every socket of the
    /// machine. One gone (or reused by another socket) is left out.
    ///
    /// - Throws: when the kernel refuses the request or stops answering.
    func lookUp(_ sockets: [SocketRecord], protocolNumber: UInt8) throws(TrafficProblem) -> [SocketRecord] {
        var found: [SocketRecord] = []
        var start = 0
        while start < sockets.count {
            let batch = sockets[start..<min(start + Self.lookupsPerRequest, sockets.count)]
            start = batch.endIndex
            let first = sequence &+ 1
            var request: [UInt8] = []
            for socket in batch {
                sequence &+= 1
                request += socketLookupRequest(socket, protocolNumber: protocolNumber, sequence: sequence)
            }
            // Each request has exactly one answer: the socket, or an error.
            var answered = 0
            try exchange(request, datagrams: 10_000) { datagram in
                let answers = SocketRecord.parse(lookupAnswers: datagram, firstSequence: first, count: batch.count)
                answered += answers.answered
                found += answers.records
                return answered == batch.count
            }
        }
        return found
    }

    /// Sends `request` and hands each datagram of the answer to `take` until it says the answer
    /// is whole, the kernel has nothing more, or `datagrams` have come.
    private func exchange(
        _ request: [UInt8], datagrams: Int, _ take: (ArraySlice<UInt8>) -> Bool
    ) throws(TrafficProblem) {
        do {
            try socket.send(request)
        } catch {
            throw TrafficProblem("sock_diag request failed: \(error)")
        }
        var received = 0
        while received < datagrams {
            received += 1
            let count: Int
            do {
                count = try socket.receive(into: &buffer)
            } catch {
                throw TrafficProblem("sock_diag answer failed: \(error)")
            }
            if count == 0 || take(buffer[0..<count]) { return }
        }
    }

    /// The destroy broadcasts queued since the last call (a subscribed socket only). An
    /// overflowing queue (`ENOBUFS`) loses some: those bytes then stay unexplained.
    func drain() -> [SocketRecord] {
        var records: [SocketRecord] = []
        var turns = 0
        while turns < 100_000 {
            turns += 1
            let count: Int
            do {
                count = try socket.receive(into: &buffer, wait: false)
            } catch .noBufferSpace {
                continue
            } catch {
                break
            }
            if count == 0 { break }
            records += SocketRecord.parse(datagram: buffer[0..<count]).records
        }
        return records
    }
}

/// Why the traffic source cannot see something, as said once in the bridge's problems.
struct TrafficProblem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
