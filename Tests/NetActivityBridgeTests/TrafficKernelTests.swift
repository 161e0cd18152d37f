import BusTestSupport
import DesktopApplications
import Foundation
import Platform
@testable import NetActivityBridge
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The seam's real side against this machine's kernel: a sock_diag dump finds a socket of this
/// process with its counters, `/proc` names its owner, a cgroup id is its directory's inode,
/// and a socket whose process is gone belongs to nobody.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrafficKernelTests {
    /// A loopback TCP connection of this process that has moved `bytes` from client to server.
    final class Connection {
        let listener: Int32
        let client: Int32
        let server: Int32
        let clientPort: UInt16
        let serverPort: UInt16

        init(bytes: Int) throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let connected = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(listener, raw, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, raw, &length) == 0
                        && connect(client, raw, length) == 0
                }
            }
            let server = accept(listener, nil, nil)
            self.listener = listener
            self.client = client
            self.server = server
            var local = sockaddr_in()
            var localLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutablePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(client, $0, &localLength) }
            }
            clientPort = UInt16(bigEndian: local.sin_port)
            serverPort = UInt16(bigEndian: address.sin_port)
            guard connected, server >= 0 else { throw TrafficProblem("cannot connect on loopback: errno \(errno)") }
            let chunk = [UInt8](repeating: 7, count: 16_384)
            var sent = 0
            var sink = [UInt8](repeating: 0, count: 65_536)
            while sent < bytes {
                let count = chunk.withUnsafeBytes { send(client, $0.baseAddress, min($0.count, bytes - sent), 0) }
                guard count > 0 else { break }
                sent += count
                _ = sink.withUnsafeMutableBytes { recv(server, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            }
            while sink.withUnsafeMutableBytes({ recv(server, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        }

        deinit {
            close(server)
            close(client)
            close(listener)
        }
    }

    @Test func aDumpFindsThisProcesssSocketWithItsCounters() throws {
        let connection = try Connection(bytes: 200_000)
        let system = KernelTrafficSystem(uid: getuid())
        let record = try #require(try system.sockets().tcp.first { $0.localPort == connection.clientPort })
        #expect(record.uid == getuid())
        #expect(record.inode != 0 && record.cookie != 0)
        #expect(record.isLoopback, "127.0.0.1 both ends")
        #expect((record.bytesAcked ?? 0) >= 100_000, "\(record)")
        #expect(record.cgroupID != nil, "Linux 5.8 and later report the cgroup")
    }

    @Test func aLookupFindsTheSocketByItsAddressAndCookieWithFreshCounters() throws {
        let connection = try Connection(bytes: 1_000)
        let system = KernelTrafficSystem(uid: getuid())
        let record = try #require(try system.sockets().tcp.first { $0.localPort == connection.clientPort })
        let more = [UInt8](repeating: 1, count: 50_000)
        var sink = [UInt8](repeating: 0, count: 65_536)
        var sent = 0
        while sent < more.count {
            let count = more.withUnsafeBytes { send(connection.client, $0.baseAddress, $0.count - sent, 0) }
            guard count > 0 else { break }
            sent += count
            while sink.withUnsafeMutableBytes({ recv(connection.server, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        }
        let found = try system.lookUp([record])
        #expect(found.map(\.cookie) == [record.cookie])
        #expect((found.first?.bytesAcked ?? 0) >= (record.bytesAcked ?? 0) + 50_000, "\(found)")
        #expect(found.first?.cgroupID == record.cgroupID)
    }

    @Test func aLookupLeavesOutSocketsGoneOrReused() throws {
        let connections = try (0..<40).map { _ in try Connection(bytes: 10) }
        let system = KernelTrafficSystem(uid: getuid())
        let ends = Set(connections.map { [$0.clientPort, $0.serverPort] })
        let records = try system.sockets().tcp.filter { ends.contains([$0.localPort, $0.remotePort]) }
        try #require(records.count == connections.count)
        var reused = records[1]
        reused.cookie &+= 1  // the same ends, another socket
        var missing = records[2]
        missing.remotePort = 1  // nothing listens there
        let found = try system.lookUp([records[0], reused, missing] + records[3...])
        let expected = Set(([records[0]] + records[3...]).map(\.cookie))
        #expect(Set(found.map(\.cookie)) == expected)
        #expect(found.count == records.count - 2, "more than one request's worth, answered whole")
    }

    @Test func aClosedSocketsLastCountersArriveAsADestroyBroadcast() throws {
        let system = KernelTrafficSystem(uid: getuid())
        system.startFollowing()
        defer { system.stopFollowing() }
        var connection: Connection? = try Connection(bytes: 300_000)
        let port = try #require(connection?.clientPort)
        let record = try #require(try system.sockets().tcp.first { $0.localPort == port })
        connection = nil  // both ends closed
        var destroyed: [SocketRecord] = []
        try waitUntil("the closed socket's destroy broadcast", timeout: .seconds(5)) {
            destroyed += system.destroyed()
            return destroyed.contains { $0.cookie == record.cookie }
        }
        let last = try #require(destroyed.first { $0.cookie == record.cookie })
        #expect((last.bytesAcked ?? 0) >= 300_000, "\(last)")
        #expect(last.localPort == port)
    }

    @Test func theSocketsOwnerIsThisProcessAndItsParents() throws {
        let connection = try Connection(bytes: 10)
        let record = try #require(try KernelTrafficSystem(uid: getuid()).sockets().tcp.first { $0.localPort == connection.clientPort })
        let owner = try #require(ProcessSocketOwners(uid: getuid()).owners(of: [record])[record.cookie])
        #expect(owner.processes.contains(UInt32(getpid())))
        #expect(owner.processes.contains(UInt32(getppid())) || getppid() <= 1)
        #expect(owner.program != nil)
    }

    @Test func anotherUsersProcessesAreNotSearched() throws {
        let connection = try Connection(bytes: 10)
        let record = try #require(try KernelTrafficSystem(uid: getuid()).sockets().tcp.first { $0.localPort == connection.clientPort })
        var anonymous = record
        anonymous.cgroupID = nil
        #expect(ProcessSocketOwners(uid: getuid() &+ 12345).owners(of: [anonymous]).isEmpty)
    }

    @Test func aSocketWhoseProcessIsGoneBelongsToNobody() {
        let record = SocketRecord(cookie: 1, uid: getuid(), inode: 4_000_000_000, cgroupID: nil)
        #expect(ProcessSocketOwners(uid: getuid()).owners(of: [record]).isEmpty)
        let noCgroup = SocketRecord(cookie: 2, uid: getuid(), inode: 0, cgroupID: UInt64.max)
        #expect(ProcessSocketOwners(uid: getuid()).owners(of: [noCgroup]).isEmpty)
    }

    @Test func aProcRootWithNoProcessesFindsNothing() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("na-proc-\(getpid())")
        try FileManager.default.createDirectory(at: empty.appendingPathComponent("123/fd"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let record = SocketRecord(cookie: 1, uid: getuid(), inode: 77)
        #expect(ProcessSocketOwners(uid: getuid(), processes: Processes(proc: ProcFS(root: empty.path))).owners(of: [record]).isEmpty)
    }

    @Test(.enabled(if: getuid() == 0, "needs root to make a cgroup"))
    func aCgroupIdIsItsDirectorysInodeAndNamesItsApp() throws {
        let tree = CgroupTree()
        let mount = try #require(tree.mount, "no cgroup2 mount")
        let name = "app-gnome-org.example.Tree-\(getpid()).scope"
        let path = mount.path + "/" + name
        try #require(mkdir(path, 0o755) == 0)
        defer { rmdir(path) }
        var status = stat()
        try #require(stat(path, &status) == 0)
        let cgroup = try #require(tree.path(of: UInt64(status.st_ino)))
        #expect(cgroup == (mount.root == "/" ? "" : mount.root) + "/" + name)
        let owner = try #require(ProcessSocketOwners.owner(cgroup: cgroup, process: nil))
        #expect(owner.application == "org.example.Tree" && owner.desktopID == "org.example.Tree")
        #expect(owner.label == "org.example.Tree", "no desktop entry installed: the id")
    }
}

extension TrafficKernelTests {
    /// A dump spans many datagrams: 600 connections (1,200 sockets with `tcp_info`) all arrive.
    @Test func aDumpOfManySocketsArrivesWhole() throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let count = min(600, Int(limit.rlim_cur) / 4 - 50)
        try #require(count > 100, "too few descriptors allowed: \(limit.rlim_cur)")
        let connections = try (0..<count).map { _ in try Connection(bytes: 1) }
        let ports = Set(connections.map(\.clientPort))
        let start = ContinuousClock.now
        let tcp = try KernelTrafficSystem(uid: getuid()).sockets().tcp
        let elapsed = ContinuousClock.now - start
        #expect(Set(tcp.map(\.localPort)).isSuperset(of: ports))
        #expect(Set(tcp.map(\.cookie)).count == tcp.count, "each socket once")
        #expect(elapsed < .seconds(2), "\(elapsed)")
    }
}
