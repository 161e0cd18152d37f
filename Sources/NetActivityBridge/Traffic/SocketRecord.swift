import Platform

/// One socket as sock_diag describes it (`inet_diag_msg` with its attributes): who owns it,
/// where it goes, and, for TCP, how many bytes it has moved in each direction.
struct SocketRecord: Equatable, Sendable {
    /// `idiag_cookie`: the kernel's id for the socket, stable for its life, and the only key a
    /// destroy broadcast carries (its uid, inode and cgroup read 0).
    var cookie: UInt64
    var family: UInt8
    var state: UInt8
    var localPort: UInt16
    var remotePort: UInt16
    /// The 16 address bytes of each end as the kernel gives them (an IPv4 address in the first 4).
    var localAddress: [UInt8]
    var remoteAddress: [UInt8]
    /// `idiag_if`: the interface a link-local socket is bound to, which a lookup must repeat.
    var interface: UInt32 = 0
    var uid: UInt32
    var inode: UInt32
    /// `tcpi_bytes_received`, or nil without `INET_DIAG_INFO` (UDP, or a short attribute).
    var bytesReceived: UInt64?
    /// `tcpi_bytes_acked`: sent and acknowledged.
    var bytesAcked: UInt64?
    /// `INET_DIAG_CGROUP_ID` (Linux 5.8): the inode of the socket's cgroup v2 directory.
    var cgroupID: UInt64?

    static let familyIPv4: UInt8 = 2
    static let familyIPv6: UInt8 = 10
    /// `TCP_ESTABLISHED`; also what a connected UDP socket reports.
    static let established: UInt8 = 1

    // `struct inet_diag_msg`: family, state, timer, retrans; sockid (sport, dport, src[16],
    // dst[16], if, cookie[2]); expires, rqueue, wqueue, uid, inode.
    static let messageSize = 72
    static let attributeInfo: UInt16 = 2  // INET_DIAG_INFO: struct tcp_info
    static let attributeCgroupID: UInt16 = 21  // INET_DIAG_CGROUP_ID
    // Offsets in `struct tcp_info` (linux/tcp.h, stable since 4.1).
    static let bytesAckedOffset = 120
    static let bytesReceivedOffset = 128

    /// The socket a `SOCK_DIAG_BY_FAMILY` payload describes, or nil if it is shorter than
    /// `inet_diag_msg` or of another family. Attributes that are missing, short or unknown are
    /// left out.
    init?(payload: ArraySlice<UInt8>) {
        let base = payload.startIndex
        guard payload.count >= Self.messageSize, let family = payload.first,
            family == Self.familyIPv4 || family == Self.familyIPv6,
            let localPort = payload.loadBigEndianUInt16(at: base + 4),
            let remotePort = payload.loadBigEndianUInt16(at: base + 6),
            let interface = payload.loadUInt32(at: base + 40),
            let cookieLow = payload.loadUInt32(at: base + 44), let cookieHigh = payload.loadUInt32(at: base + 48),
            let uid = payload.loadUInt32(at: base + 64), let inode = payload.loadUInt32(at: base + 68)
        else { return nil }
        self.family = family
        state = payload[base + 1]
        self.localPort = localPort
        self.remotePort = remotePort
        localAddress = Array(payload[(base + 8)..<(base + 24)])
        remoteAddress = Array(payload[(base + 24)..<(base + 40)])
        self.interface = interface
        cookie = UInt64(cookieLow) | UInt64(cookieHigh) << 32
        self.uid = uid
        self.inode = inode
        let attributes = Netlink.attributes(in: payload[(base + Self.messageSize)...])
        if let info = attributes[Self.attributeInfo] {
            bytesAcked = info.loadUInt64(at: info.startIndex + Self.bytesAckedOffset)
            bytesReceived = info.loadUInt64(at: info.startIndex + Self.bytesReceivedOffset)
        }
        if let cgroup = attributes[Self.attributeCgroupID] {
            cgroupID = cgroup.loadUInt64(at: cgroup.startIndex)
        }
    }

    init(
        cookie: UInt64, family: UInt8 = SocketRecord.familyIPv4, state: UInt8 = SocketRecord.established,
        localPort: UInt16 = 40000, remotePort: UInt16 = 443, localAddress: [UInt8] = [10, 0, 0, 2] + Array(repeating: 0, count: 12),
        remoteAddress: [UInt8] = [10, 0, 0, 1] + Array(repeating: 0, count: 12), uid: UInt32 = 1000, inode: UInt32 = 0,
        bytesReceived: UInt64? = nil, bytesAcked: UInt64? = nil, cgroupID: UInt64? = nil
    ) {
        self.cookie = cookie
        self.family = family
        self.state = state
        self.localPort = localPort
        self.remotePort = remotePort
        self.localAddress = localAddress
        self.remoteAddress = remoteAddress
        self.uid = uid
        self.inode = inode
        self.bytesReceived = bytesReceived
        self.bytesAcked = bytesAcked
        self.cgroupID = cgroupID
    }

    /// Whether both ends are loopback addresses (127.0.0.0/8, ::1, or IPv4-mapped 127/8): such
    /// bytes never leave the machine and never count.
    var isLoopback: Bool {
        Self.isLoopback(localAddress, family: family) && Self.isLoopback(remoteAddress, family: family)
    }

    static func isLoopback(_ address: [UInt8], family: UInt8) -> Bool {
        guard address.count == 16 else { return false }
        if family == familyIPv4 { return address[0] == 127 }
        if address[0..<15].allSatisfy({ $0 == 0 }) && address[15] == 1 { return true }
        let mapped = address[0..<10].allSatisfy { $0 == 0 } && address[10] == 0xFF && address[11] == 0xFF
        return mapped && address[12] == 127
    }

    /// All the sockets of a dump's (or a broadcast's) datagram; whether it ended the dump
    /// (`NLMSG_DONE` or an error), so the reader stops asking for more. With `sequence`, only
    /// the answers to that request count: a late part of an earlier, abandoned dump is skipped.
    static func parse(datagram bytes: ArraySlice<UInt8>, sequence: UInt32? = nil) -> (records: [SocketRecord], done: Bool) {
        var records: [SocketRecord] = []
        var done = false
        for message in Netlink.messages(in: bytes) where sequence == nil || message.sequence == sequence {
            switch message.type {
            case Netlink.sockDiagByFamily:
                if let record = SocketRecord(payload: message.payload) { records.append(record) }
            case Netlink.messageDone, Netlink.messageError:
                done = true
            default:
                continue
            }
        }
        return (records, done)
    }
}

extension SocketRecord {
    /// The sockets among the answers to `count` lookups numbered from `firstSequence` in one
    /// datagram, and how many of those lookups it answered (a socket, or an error when it is
    /// gone). Messages of other sequences are skipped.
    static func parse(lookupAnswers bytes: ArraySlice<UInt8>, firstSequence: UInt32, count: Int) -> (records: [SocketRecord], answered: Int) {
        var records: [SocketRecord] = []
        var answered = 0
        for message in Netlink.messages(in: bytes) where message.sequence &- firstSequence < UInt32(count) {
            answered += 1
            if message.type == Netlink.sockDiagByFamily, let record = SocketRecord(payload: message.payload) {
                records.append(record)
            }
        }
        return (records, answered)
    }
}

/// The request for a dump of every `protocolNumber` socket of `family` in `states` (a bit per
/// TCP state), asking for `tcp_info`: an `nlmsghdr` and an `inet_diag_req_v2`.
func socketDumpRequest(family: UInt8, protocolNumber: UInt8, states: UInt32, sequence: UInt32) -> [UInt8] {
    socketDiagRequest(family: family, protocolNumber: protocolNumber, states: states, sequence: sequence, socket: nil)
}

/// The request for `socket` alone, found by its addresses, ports and interface, and answered
/// only while its cookie is the same (a new socket on the same ports is another one): the kernel
/// answers with one `SOCK_DIAG_BY_FAMILY` message, or with an error when it is gone.
func socketLookupRequest(_ socket: SocketRecord, protocolNumber: UInt8, sequence: UInt32) -> [UInt8] {
    socketDiagRequest(family: socket.family, protocolNumber: protocolNumber, states: ~0, sequence: sequence, socket: socket)
}

/// `nlmsghdr` and `inet_diag_req_v2`: a dump without `socket`, an exact lookup with it.
private func socketDiagRequest(family: UInt8, protocolNumber: UInt8, states: UInt32, sequence: UInt32, socket: SocketRecord?) -> [UInt8] {
    let request = InetDiagRequest(
        family: family, protocolNumber: protocolNumber, states: states, extensions: UInt8(1 << (SocketRecord.attributeInfo - 1)))
    return request.bytes(
        sequence: sequence,
        socket: socket.map {
            InetDiagRequest.Socket(
                localPort: $0.localPort, remotePort: $0.remotePort, localAddress: $0.localAddress,
                remoteAddress: $0.remoteAddress, interface: $0.interface, cookie: $0.cookie)
        })
}
