#if canImport(Glibc)
import Glibc
#endif

/// A `NETLINK_SOCK_DIAG` socket: the one place that holds the descriptor and speaks to the
/// kernel. Everything it receives is handed up as bytes to `SocketRecord.parse(datagram:)`.
final class SockDiagSocket {
    private let descriptor: Int32
    private var sequence: UInt32 = 0
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)

    static let netlinkSockDiag: Int32 = 4
    static let solNetlink: Int32 = 270
    static let addMembership: Int32 = 1
    /// `SKNLGRP_INET_TCP_DESTROY` and `SKNLGRP_INET6_TCP_DESTROY`.
    static let tcpDestroyGroups: [Int32] = [1, 3]

    /// Opens the socket; with `destroyGroups`, subscribed to the TCP destroy broadcasts and
    /// non-blocking, to be drained.
    ///
    /// - Throws: the errno when the socket cannot be made or subscribed (a sandbox that forbids
    ///   sock_diag), as a description.
    init(destroyGroups: Bool) throws(TrafficProblem) {
        descriptor = socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Self.netlinkSockDiag)
        guard descriptor >= 0 else { throw TrafficProblem("no sock_diag socket: \(String(cString: strerror(errno)))") }
        if destroyGroups {
            // Bound, so the kernel gives the socket a port id: a broadcast skips every socket
            // whose port id is the sender's, and the kernel sends from 0, an unbound socket's.
            // `struct sockaddr_nl` (linux/netlink.h, not in Glibc's module): family, padding, port
            // id 0 (the kernel picks one), no groups.
            var address = [UInt8](repeating: 0, count: 12)
            withUnsafeBytes(of: UInt16(AF_NETLINK).littleEndian) { address.replaceSubrange(0..<2, with: $0) }
            let bound = address.withUnsafeBytes {
                bind(descriptor, $0.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
            }
            guard bound == 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw TrafficProblem("cannot bind the sock_diag socket: \(reason)")
            }
            for group in Self.tcpDestroyGroups {
                var value = group
                guard setsockopt(descriptor, Self.solNetlink, Self.addMembership, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
                else {
                    let reason = String(cString: strerror(errno))
                    close(descriptor)
                    throw TrafficProblem("cannot subscribe the TCP destroy broadcasts: \(reason)")
                }
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        } else {
            // A dump is answered at once; a kernel that never answers must not hang the bridge.
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit { close(descriptor) }

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
                for message in Netlink.messages(in: datagram) where message.sequence &- first < UInt32(batch.count) {
                    answered += 1
                    if message.type == Netlink.sockDiagByFamily, let record = SocketRecord(payload: message.payload) {
                        found.append(record)
                    }
                }
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
        let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        guard sent == request.count else { throw TrafficProblem("sock_diag request failed: \(String(cString: strerror(errno)))") }
        var received = 0
        while received < datagrams {
            received += 1
            let count = receive(flags: 0)
            if count < 0 {
                if errno == EINTR { continue }
                throw TrafficProblem("sock_diag answer failed: \(String(cString: strerror(errno)))")
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
            let count = receive(flags: Int32(MSG_DONTWAIT))
            if count < 0 {
                if errno == EINTR || errno == ENOBUFS { continue }
                break
            }
            if count == 0 { break }
            records += SocketRecord.parse(datagram: buffer[0..<count]).records
        }
        return records
    }

    private func receive(flags: Int32) -> Int {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, flags) }
        return min(count, buffer.count)
    }
}

/// Why the traffic source cannot see something, as said once in the bridge's problems.
struct TrafficProblem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
