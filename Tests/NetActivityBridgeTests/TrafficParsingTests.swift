import DesktopApplications
import BusTestSupport
import Glibc
import DBus
import NetActivity
import Platform
@testable import NetActivityBridge
import Testing

/// sock_diag answers and /proc/net texts as the kernel writes them, and as it never should:
/// truncated, lengths past the buffer, unknown attributes. Never a crash, never a made-up socket.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrafficParsingTests {
    // MARK: - Crafted messages

    /// An `nlattr`: length, type, value, padded to 4 bytes.
    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        let length = UInt16(4 + value.count)
        var bytes = le16(length) + le16(type) + value
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func le16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func le64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

    /// A `tcp_info` of 232 bytes with the two counters set.
    static func tcpInfo(received: UInt64, acked: UInt64) -> [UInt8] {
        var info = [UInt8](repeating: 0, count: 232)
        info.replaceSubrange(120..<128, with: le64(acked))
        info.replaceSubrange(128..<136, with: le64(received))
        return info
    }

    /// An `inet_diag_msg` for an IPv4 socket 10.0.0.2:40000 → 10.0.0.1:443 and its attributes.
    static func diagMessage(
        cookie: UInt64, uid: UInt32 = 1000, inode: UInt32 = 77, family: UInt8 = 2, attributes: [UInt8]
    ) -> [UInt8] {
        var body: [UInt8] = [family, 1, 0, 0]
        body += [0x9C, 0x40, 0x01, 0xBB]  // ports, big-endian: 40000, 443
        body += [10, 0, 0, 2] + [UInt8](repeating: 0, count: 12)
        body += [10, 0, 0, 1] + [UInt8](repeating: 0, count: 12)
        body += le32(0) + le32(UInt32(cookie & 0xFFFF_FFFF)) + le32(UInt32(cookie >> 32))
        body += le32(0) + le32(0) + le32(0) + le32(uid) + le32(inode)
        return netlink(type: 20, body + attributes)
    }

    static func netlink(type: UInt16, _ payload: [UInt8]) -> [UInt8] {
        var bytes = le32(UInt32(16 + payload.count)) + le16(type) + le16(2) + le32(1) + le32(0) + payload
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static let done = netlink(type: 3, le32(0))

    static func socket(cookie: UInt64, received: UInt64, acked: UInt64, cgroup: UInt64 = 4242) -> [UInt8] {
        diagMessage(
            cookie: cookie,
            attributes: attribute(2, tcpInfo(received: received, acked: acked)) + attribute(21, le64(cgroup)))
    }

    @Test func aDumpGivesEverySocketAndItsCounters() throws {
        let datagram = Self.socket(cookie: 0x1_0000_0002, received: 5_000_000, acked: 300)
            + Self.socket(cookie: 7, received: 1, acked: 2, cgroup: 1) + Self.done
        let parsed = SocketRecord.parse(datagram: datagram[...])
        #expect(parsed.done)
        try #require(parsed.records.count == 2)
        let first = parsed.records[0]
        #expect(first.cookie == 0x1_0000_0002)
        #expect(first.localPort == 40000 && first.remotePort == 443)
        #expect(first.uid == 1000 && first.inode == 77)
        #expect(first.bytesReceived == 5_000_000 && first.bytesAcked == 300)
        #expect(first.cgroupID == 4242)
        #expect(!first.isLoopback)
        #expect(parsed.records[1].cgroupID == 1)
    }

    @Test func lookupAnswersCountTheirOwnSequencesOnly() {
        func numbered(_ message: [UInt8], _ sequence: UInt32) -> [UInt8] {
            Array(message[..<8]) + Self.le32(sequence) + message[12...]
        }
        // Lookups 5, 6 and 7: a socket for 5, an error (gone) for 6, and a socket of another batch.
        let datagram = numbered(Self.socket(cookie: 1, received: 10, acked: 20), 5)
            + numbered(Self.netlink(type: 2, Self.le32(UInt32(bitPattern: -2))), 6)
            + numbered(Self.socket(cookie: 2, received: 1, acked: 2), 9)
        let answers = SocketRecord.parse(lookupAnswers: datagram[...], firstSequence: 5, count: 3)
        #expect(answers.answered == 2)
        #expect(answers.records.map(\.cookie) == [1])
    }

    @Test func unknownAttributesAreSkipped() {
        let attributes = Self.attribute(99, [1, 2, 3]) + Self.attribute(0x8000 | 21, Self.le64(5))
            + Self.attribute(2, Self.tcpInfo(received: 10, acked: 20))
        let parsed = SocketRecord.parse(datagram: Self.diagMessage(cookie: 1, attributes: attributes)[...])
        #expect(parsed.records.first?.cgroupID == 5, "the nested flag is masked off")
        #expect(parsed.records.first?.bytesReceived == 10)
    }

    @Test func aShortTcpInfoGivesNoCounters() {
        let parsed = SocketRecord.parse(
            datagram: Self.diagMessage(cookie: 1, attributes: Self.attribute(2, [UInt8](repeating: 1, count: 100)))[...])
        #expect(parsed.records.count == 1)
        #expect(parsed.records.first?.bytesReceived == nil)
        #expect(parsed.records.first?.bytesAcked == nil)
    }

    @Test func everyTruncationOfADumpIsSafe() {
        let datagram = Self.socket(cookie: 1, received: 10, acked: 20) + Self.socket(cookie: 2, received: 30, acked: 40)
        for cut in 0...datagram.count {
            let parsed = SocketRecord.parse(datagram: datagram[..<cut])
            #expect(parsed.records.count <= 2)
            for record in parsed.records { #expect(record.cookie == 1 || record.cookie == 2) }
        }
        // And cut from the front: whatever is left is garbage, never a crash.
        for start in 0...datagram.count { _ = SocketRecord.parse(datagram: datagram[start...]) }
    }

    @Test func lengthsPastTheBufferStopTheParse() {
        var message = Self.socket(cookie: 1, received: 10, acked: 20)
        message.replaceSubrange(0..<4, with: Self.le32(UInt32(message.count + 1)))
        #expect(SocketRecord.parse(datagram: message[...]).records.isEmpty)
        message.replaceSubrange(0..<4, with: Self.le32(UInt32.max))
        #expect(SocketRecord.parse(datagram: message[...]).records.isEmpty)
        message.replaceSubrange(0..<4, with: Self.le32(3))
        #expect(SocketRecord.parse(datagram: message[...]).records.isEmpty)
        // An attribute claiming more than its message holds: the message keeps what it has.
        var attribute = Self.attribute(21, Self.le64(9))
        attribute.replaceSubrange(0..<2, with: Self.le16(400))
        let parsed = SocketRecord.parse(datagram: Self.diagMessage(cookie: 3, attributes: attribute)[...])
        #expect(parsed.records.first?.cookie == 3)
        #expect(parsed.records.first?.cgroupID == nil)
        var zero = Self.attribute(21, Self.le64(9))
        zero.replaceSubrange(0..<2, with: Self.le16(0))
        #expect(SocketRecord.parse(datagram: Self.diagMessage(cookie: 4, attributes: zero)[...]).records.first?.cgroupID == nil)
    }

    @Test func otherFamiliesAndShortMessagesAreNoSockets() {
        #expect(SocketRecord.parse(datagram: Self.diagMessage(cookie: 1, family: 1, attributes: [])[...]).records.isEmpty)
        #expect(SocketRecord.parse(datagram: Self.netlink(type: 20, [2, 1, 0, 0])[...]).records.isEmpty)
        let error = Self.netlink(type: 2, Self.le32(UInt32(bitPattern: -1)))
        #expect(SocketRecord.parse(datagram: error[...]).done)
    }

    /// Seeded, so a failure names the seed that replays it.
    @Test(arguments: 0..<4 as Range<UInt64>) func randomBytesNeverCrash(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let valid = Self.socket(cookie: 1, received: 10, acked: 20) + Self.done
        for _ in 0..<500 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = SocketRecord.parse(datagram: bytes[...])
        }
    }

    @Test func loopbackEnds() {
        let v4 = SocketRecord(
            cookie: 1, localAddress: [127, 0, 0, 1] + [UInt8](repeating: 0, count: 12),
            remoteAddress: [127, 0, 0, 53] + [UInt8](repeating: 0, count: 12))
        #expect(v4.isLoopback)
        let one = [UInt8](repeating: 0, count: 15) + [1]
        #expect(SocketRecord(cookie: 1, family: 10, localAddress: one, remoteAddress: one).isLoopback)
        let mapped = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 127, 0, 0, 1]
        #expect(SocketRecord(cookie: 1, family: 10, localAddress: mapped, remoteAddress: one).isLoopback)
        let outward = SocketRecord(
            cookie: 1, localAddress: [127, 0, 0, 1] + [UInt8](repeating: 0, count: 12))
        #expect(!outward.isLoopback, "one end elsewhere")
    }

    @Test func theDumpRequestIsAnInetDiagReqV2() {
        let request = socketDumpRequest(family: 10, protocolNumber: 6, states: 0x2, sequence: 9)
        #expect(request.count == 72)
        #expect(Array(request[0..<4]) == Self.le32(72))
        #expect(Array(request[4..<6]) == Self.le16(20))
        #expect(Array(request[6..<8]) == Self.le16(0x301))
        #expect(Array(request[16..<20]) == [10, 6, 2, 0])
        #expect(Array(request[20..<24]) == Self.le32(2))
    }

    @Test func aLookupRequestRepeatsTheSocketsIdAsTheKernelGaveIt() {
        var socket = SocketRecord(cookie: 0x1122_3344_5566_7788, family: 10, localPort: 0x1234, remotePort: 443)
        socket.interface = 3
        let request = socketLookupRequest(socket, protocolNumber: 6, sequence: 9)
        #expect(request.count == 72)
        #expect(Array(request[6..<8]) == Self.le16(0x1), "NLM_F_REQUEST alone: no dump")
        #expect(Array(request[16..<20]) == [10, 6, 2, 0])
        #expect(Array(request[24..<28]) == [0x12, 0x34, 0x01, 0xBB], "ports in network order")
        #expect(Array(request[28..<44]) == socket.localAddress && Array(request[44..<60]) == socket.remoteAddress)
        #expect(Array(request[60..<64]) == Self.le32(3))
        #expect(Array(request[64..<72]) == Self.le32(0x5566_7788) + Self.le32(0x1122_3344))
        // What a dump says of a socket, parsed, asks for that very socket.
        var message = Self.le32(88) + Self.le16(20) + Self.le16(0) + Self.le32(9) + Self.le32(0)
        message += [10, 1, 0, 0] + Array(request[24..<72]) + Self.le32(0) + Self.le32(0) + Self.le32(0) + Self.le32(1000) + Self.le32(5)
        let parsed = SocketRecord.parse(datagram: message[...]).records
        #expect(parsed.first.map { socketLookupRequest($0, protocolNumber: 6, sequence: 9) } == request)
    }

    // MARK: - /proc/net

    static let dev = """
        Inter-|   Receive                                                |  Transmit
         face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
            lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0
          eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0
          wlan0:500 5 0 0 0 0 0 0 600 6 0 0 0 0 0 0
          veth1: 99 1 0 0 0 0 0 0 99 1 0 0 0 0 0 0
          broken: x y
        """

    static let route = """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
        eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
        veth1\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
        """

    static let ipv6Route = """
        fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000002 00000000 00000003    wlan0
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
        """

    @Test func defaultRouteInterfacesAloneCount() {
        let counters = InterfaceCounters.defaultRouteCounters(dev: Self.dev, route: Self.route, ipv6Route: Self.ipv6Route)
        #expect(Set(counters.keys) == ["eth0", "wlan0"])
        #expect(counters["eth0"] == .init(received: 1000, sent: 2000))
        #expect(counters["wlan0"] == .init(received: 500, sent: 600))
        #expect(InterfaceCounters.defaultRouteCounters(dev: "", route: "", ipv6Route: "").isEmpty)
        #expect(InterfaceCounters.defaultRouteInterfaces(route: "garbage\n\t\t\n") == [])
    }

    @Test func movedCountsInterfacesInBothReadings() {
        let before: [String: InterfaceCounters.Bytes] = ["eth0": .init(received: 100, sent: 10), "gone": .init(received: 5, sent: 5)]
        let after: [String: InterfaceCounters.Bytes] = [
            "eth0": .init(received: 1100, sent: 5), "new": .init(received: 1_000_000, sent: 0),
        ]
        #expect(InterfaceCounters.moved(from: before, to: after) == .init(received: 1000, sent: 0))
    }

    // MARK: - cgroups

    @Test func theCgroup2MountIsFoundInMountinfo() throws {
        let hybrid = """
            31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
            40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:5 - cgroup2 cgroup2 rw
            """
        let mount = try #require(CgroupTree.cgroup2Mount(in: ProcFS.mounts(in: hybrid)))
        #expect(mount.path == "/sys/fs/cgroup/unified" && mount.root == "/")
        let escaped = "29 1 0:26 /user.slice /my\\040cgroups rw shared:4 - cgroup2 cgroup2 rw,nsdelegate"
        let other = try #require(CgroupTree.cgroup2Mount(in: ProcFS.mounts(in: escaped)))
        #expect(other.path == "/my cgroups" && other.root == "/user.slice")
        #expect(CgroupTree.cgroup2Mount(in: ProcFS.mounts(in: "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n- - -\n")) == nil)
    }

    @Test func aCgroupIdIsItsDirectorysInode() throws {
        let tree = CgroupTree()
        let mount = try #require(tree.mount, "no cgroup2 mount in /proc/self/mountinfo")
        var status = stat()
        try #require(stat(mount.path, &status) == 0)
        #expect(tree.path(of: UInt64(status.st_ino)) == mount.root, "the mount's own directory is its root cgroup")
        #expect(tree.path(of: UInt64.max) == nil)
    }
}

/// The source where the kernel refuses sock_diag (a sandbox): it says so when it starts, once,
/// and the bridge goes on with its other sources.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrafficSandboxTests {
    final class NoSockDiag: TrafficSystem, SocketOwnerLookup {
        func interfaces() -> [String: InterfaceCounters.Bytes] { [:] }
        func sockets() throws(TrafficProblem) -> (tcp: [SocketRecord], udp: [SocketRecord]) {
            throw TrafficProblem("no sock_diag socket: Operation not permitted")
        }
        func destroyed() -> [SocketRecord] { [] }
        func startFollowing() {}
        func stopFollowing() {}
        var owners: SocketOwnerLookup { self }
        func owners(of sockets: [SocketRecord]) -> [UInt64: SocketOwner] { [:] }
    }

    @Test func aSandboxWithoutSockDiagIsSaidWhenTheSourceStarts() throws {
        let loop = try EventLoop()
        let context = BridgeContext(
            loop: loop, client: NetActivityClient(bus: .address("unix:path=/nonexistent"), problems: { _ in }),
            sessionBus: .session, systemBus: .system, processes: Processes(), problems: { _ in })
        let source = TrafficSource(context, settings: TrafficSettings(), system: NoSockDiag())
        #expect {
            try source.start()
        } throws: { error in
            (error as? BusError)?.message.contains("sock_diag is not available") == true
        }
    }
}

extension TrafficParsingTests {
    @Test func anEarlierDumpsLateAnswersAreSkipped() {
        // diagMessage writes sequence 1.
        let datagram = Self.socket(cookie: 1, received: 10, acked: 20) + Self.done
        #expect(SocketRecord.parse(datagram: datagram[...], sequence: 1).records.count == 1)
        let stale = SocketRecord.parse(datagram: datagram[...], sequence: 2)
        #expect(stale.records.isEmpty && !stale.done)
    }
}
