import DesktopApplications
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

    init(uid: UInt32) {
        owners = ProcessSocketOwners(uid: uid)
    }

    func interfaces() -> [String: InterfaceCounters.Bytes] {
        func text(_ path: String) -> String {
            Processes.readFile(path, limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
        return InterfaceCounters.defaultRouteCounters(
            dev: text("/proc/net/dev"), route: text("/proc/net/route"), ipv6Route: text("/proc/net/ipv6_route"))
    }

    func sockets() throws(TrafficProblem) -> (tcp: [SocketRecord], udp: [SocketRecord]) {
        let socket: SockDiagSocket
        if let dumpSocket {
            socket = dumpSocket
        } else {
            socket = try SockDiagSocket(destroyGroups: false)
            dumpSocket = socket
        }
        do {
            let tcp = try socket.dump(protocolNumber: 6, states: Self.tcpStates)
            let udp = (try? socket.dump(protocolNumber: 17, states: Self.udpConnected)) ?? []
            return (tcp, udp)
        } catch {
            // A fresh socket next time: nothing of the failed dump is left to read.
            dumpSocket = nil
            throw error
        }
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
