internal import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// A netlink socket to the kernel (`AF_NETLINK`, datagrams): requests go out as bytes, answers
/// come back as bytes for the caller to parse. The corresponding C functions are `socket`,
/// `bind`, `setsockopt`, `send` and `recv`.
public final class NetlinkSocket {
    private let descriptor: FileDescriptor

    /// The sock_diag family: the kernel's socket statistics, readable by any user.
    public static let sockDiag = Int32(NETLINK_SOCK_DIAG)
    /// The sock_diag broadcast groups of TCP sockets being destroyed, IPv4 and IPv6.
    public static let tcpDestroyGroups: [UInt32] = [
        UInt32(SKNLGRP_INET_TCP_DESTROY.rawValue), UInt32(SKNLGRP_INET6_TCP_DESTROY.rawValue),
    ]

    /// Opens a socket of `family`.
    ///
    /// - Parameters:
    ///   - groups: the broadcast groups to join. The socket is then bound first, so the kernel
    ///     gives it a port id: a broadcast skips every socket whose port id is the sender's, and
    ///     the kernel sends from 0, an unbound socket's.
    ///   - receiveTimeout: how long `receive` waits at most, in seconds; nil for no limit.
    public init(family: Int32, groups: [UInt32] = [], receiveTimeout: Int? = nil) throws(Errno) {
        let raw = system_socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), family)
        guard raw >= 0 else { throw .current }
        descriptor = FileDescriptor(rawValue: raw)
        if !groups.isEmpty {
            var address = sockaddr_nl()
            address.nl_family = sa_family_t(AF_NETLINK)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_bind(raw, $0, socklen_t(MemoryLayout<sockaddr_nl>.size)) }
            }
            guard bound == 0 else {
                let error = Errno.current
                descriptor.close()
                throw error
            }
            for group in groups {
                var value = group
                let joined = system_setsockopt(
                    raw, CLinux_SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &value, socklen_t(MemoryLayout<UInt32>.size))
                guard joined == 0 else {
                    let error = Errno.current
                    descriptor.close()
                    throw error
                }
            }
        }
        if let receiveTimeout {
            // A kernel that never answers must not hang the caller.
            var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
            system_setsockopt(raw, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit { descriptor.close() }

    /// Sends one request datagram whole.
    public func send(_ request: [UInt8]) throws(Errno) {
        let sent = request.withUnsafeBytes { bytes in system_send(descriptor.rawValue, bytes.baseAddress, bytes.count, 0) }
        guard sent == request.count else { throw sent < 0 ? .current : Errno(rawValue: EMSGSIZE) }
    }

    /// Receives one datagram into `buffer`; its length (cut to the buffer), or 0 when the
    /// kernel closed. Without `wait`, `Errno.wouldBlock` when nothing is queued.
    /// `Errno.noBufferSpace` says broadcasts were lost to a full queue; the next call goes on.
    public func receive(into buffer: inout [UInt8], wait: Bool = true) throws(Errno) -> Int {
        let flags = wait ? 0 : Int32(MSG_DONTWAIT)
        let count = buffer.withUnsafeMutableBytes { bytes in system_recv(descriptor.rawValue, bytes.baseAddress, bytes.count, flags) }
        guard count >= 0 else { throw .current }
        return min(count, buffer.count)
    }
}

/// A sock_diag request for internet sockets (`nlmsghdr` and `inet_diag_req_v2`), laid out by
/// the kernel's own structs.
public struct InetDiagRequest {
    /// Which sockets: family (`AF_INET`, `AF_INET6`), protocol (6 TCP, 17 UDP), states (a
    /// bit per TCP state), extensions (a bit per `INET_DIAG_*` attribute, less one).
    public var family: UInt8
    public var protocolNumber: UInt8
    public var states: UInt32
    public var extensions: UInt8

    public init(family: UInt8, protocolNumber: UInt8, states: UInt32, extensions: UInt8) {
        self.family = family
        self.protocolNumber = protocolNumber
        self.states = states
        self.extensions = extensions
    }

    /// One socket, found by its ports, addresses (16 bytes, an IPv4 one in the first 4),
    /// interface and cookie.
    public struct Socket {
        public var localPort: UInt16
        public var remotePort: UInt16
        public var localAddress: [UInt8]
        public var remoteAddress: [UInt8]
        public var interface: UInt32
        public var cookie: UInt64

        public init(localPort: UInt16, remotePort: UInt16, localAddress: [UInt8], remoteAddress: [UInt8], interface: UInt32, cookie: UInt64) {
            self.localPort = localPort
            self.remotePort = remotePort
            self.localAddress = localAddress
            self.remoteAddress = remoteAddress
            self.interface = interface
            self.cookie = cookie
        }
    }

    /// The request's bytes: a dump of every matching socket without `socket`, the one socket
    /// with it (answered only while its cookie is the same).
    public func bytes(sequence: UInt32, socket: Socket? = nil) -> [UInt8] {
        var message = Message()
        message.header.nlmsg_len = UInt32(MemoryLayout<Message>.size)
        message.header.nlmsg_type = UInt16(SOCK_DIAG_BY_FAMILY)
        message.header.nlmsg_flags = socket == nil ? CLinux_NLM_F_REQUEST | CLinux_NLM_F_DUMP : CLinux_NLM_F_REQUEST
        message.header.nlmsg_seq = sequence
        message.request.sdiag_family = family
        message.request.sdiag_protocol = protocolNumber
        message.request.idiag_ext = extensions
        message.request.idiag_states = states
        if let socket {
            message.request.id.idiag_sport = socket.localPort.bigEndian
            message.request.id.idiag_dport = socket.remotePort.bigEndian
            withUnsafeMutableBytes(of: &message.request.id.idiag_src) { Self.copy(socket.localAddress, into: $0) }
            withUnsafeMutableBytes(of: &message.request.id.idiag_dst) { Self.copy(socket.remoteAddress, into: $0) }
            message.request.id.idiag_if = socket.interface
            message.request.id.idiag_cookie = (UInt32(truncatingIfNeeded: socket.cookie), UInt32(truncatingIfNeeded: socket.cookie >> 32))
        }
        return withUnsafeBytes(of: &message) { Array($0) }
    }

    private static func copy(_ address: [UInt8], into bytes: UnsafeMutableRawBufferPointer) {
        guard address.count == bytes.count else { return }
        bytes.copyBytes(from: address)
    }

    private struct Message {
        var header = nlmsghdr()
        var request = inet_diag_req_v2()
    }
}
