#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A TCP socket listening on 127.0.0.1, at a port the kernel picks: where the tests' HTTP
/// servers and the benchmark's loopback connections listen. The owner closes `descriptor`.
public struct LoopbackListener: Sendable {
    public let descriptor: Int32
    public let port: UInt16

    /// Binds and listens, with `backlog` connections waiting at most.
    public init(backlog: Int32) throws(LaunchError) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw LaunchError("socket: \(String(cString: strerror(errno)))") }
        var address = Self.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, backlog) == 0 else {
            let message = String(cString: strerror(errno))
            close(listener)
            throw LaunchError("bind/listen on 127.0.0.1: \(message)")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        descriptor = listener
        port = UInt16(bigEndian: address.sin_port)
    }

    /// A new connection to the listener, made at once (the caller accepts it and closes both).
    public func connect() throws(LaunchError) -> Int32 {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard client >= 0 else { throw LaunchError("socket: \(String(cString: strerror(errno)))") }
        var address = Self.address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            close(client)
            throw LaunchError("connect to 127.0.0.1:\(port): \(message)")
        }
        return client
    }

    private static func address(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
