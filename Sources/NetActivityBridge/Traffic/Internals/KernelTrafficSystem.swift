import DesktopApplications
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// The real kernel: `/proc/net`, sock_diag and `/proc`.
final class KernelTrafficSystem: TrafficSystem {
    private var destroySocket: SockDiagSocket?
    private var dumpSocket: SockDiagSocket?
    let owners: SocketOwnerLookup

    /// Every TCP state a socket that moves data can be in: all but LISTEN, TIME_WAIT and CLOSE,
    /// which have no `tcp_info` of their own.
    static let tcpStates: UInt32 = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 8) | (1 << 9) | (1 << 11)
    static let udpConnected: UInt32 = 1 << 1

    /// The kernel's sockets, their owners found by `owners`.
    init(owners: SocketOwnerLookup) {
        self.owners = owners
    }

    /// The kernel's sockets, their owners the processes and app units of `uid`'s session.
    convenience init(uid: UInt32) {
        self.init(owners: ProcessSocketOwners(uid: uid))
    }

    /// The default-route interfaces as last read, and how many more readings they serve.
    private var routes: (names: Set<String>, interfaces: Set<String>, readingsLeft: Int) = ([], [], 0)
    /// How many readings of the counters one reading of the routing tables serves: routes change
    /// when the network does (a minute's worth of idle readings), and an interface that comes or
    /// goes in between makes them be read again at once.
    static let readingsPerRouteReading = 30

    func interfaces() -> [String: InterfaceCounters.Bytes] {
        func text(_ file: String) -> String {
            ProcFS().contents(file, of: nil, limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
        let counters = InterfaceCounters.parseDev(text("net/dev"))
        let interfaces = Set(counters.keys)
        if routes.readingsLeft == 0 || routes.interfaces != interfaces {
            routes = (
                InterfaceCounters.defaultRouteInterfaces(route: text("net/route")).union(
                    InterfaceCounters.defaultRouteInterfaces(ipv6Route: text("net/ipv6_route"))),
                interfaces, Self.readingsPerRouteReading)
        }
        routes.readingsLeft -= 1
        return counters.filter { routes.names.contains($0.key) }
    }

    func sockets() throws(TrafficProblem) -> (tcp: [SocketRecord], udp: [SocketRecord]) {
        // UDP on demand (`udpReader`): most samples' bytes are all TCP's.
        (try asking { socket throws(TrafficProblem) in try socket.dump(protocolNumber: 6, states: Self.tcpStates) }, [])
    }

    func lookUp(_ known: [SocketRecord]) throws(TrafficProblem) -> [SocketRecord] {
        guard !known.isEmpty else { return [] }
        return try asking { socket throws(TrafficProblem) in try socket.lookUp(known, protocolNumber: 6) }
    }

    /// A full TCP dump on the dump socket, when the ledger asks (within the same sample, on
    /// the loop's thread).
    var tcpReader: (() -> [SocketRecord]?)? {
        let socket = dumpSocket
        return { try? socket?.dump(protocolNumber: 6, states: Self.tcpStates) }
    }

    /// `question` asked on the dump socket, opened if need be.
    private func asking(_ question: (SockDiagSocket) throws(TrafficProblem) -> [SocketRecord]) throws(TrafficProblem) -> [SocketRecord] {
        let socket: SockDiagSocket
        if let dumpSocket {
            socket = dumpSocket
        } else {
            socket = try SockDiagSocket(destroyGroups: false)
            dumpSocket = socket
        }
        do {
            return try question(socket)
        } catch {
            // A fresh socket next time: nothing of the failed request is left to read.
            dumpSocket = nil
            throw error
        }
    }

    /// Dumps the connected UDP sockets on the dump socket `sockets()` opened, when the ledger
    /// asks (within the same sample, on the loop's thread).
    var udpReader: (() -> [SocketRecord])? {
        let socket = dumpSocket
        return { (try? socket?.dump(protocolNumber: 17, states: Self.udpConnected)) ?? [] }
    }

    func destroyed() -> [SocketRecord] {
        destroySocket?.drain() ?? []
    }

    func startFollowing() {
        if destroySocket == nil { destroySocket = try? SockDiagSocket(destroyGroups: true) }
    }

    func stopFollowing() {
        destroySocket = nil
        dumpSocket = nil
    }
}
