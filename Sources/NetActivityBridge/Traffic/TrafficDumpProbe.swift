#if canImport(Glibc)
import Glibc
#endif

/// One sock_diag dump of this network namespace's TCP sockets in every state that moves data,
/// as the traffic source takes it while the interfaces are busy (connected UDP sockets are read
/// apart, on demand, when the interfaces carry bytes TCP does not explain): what `make bench`
/// times against `ss -tinie` dumping the same.
public final class TrafficDumpProbe {
    private let system = KernelTrafficSystem(uid: getuid())

    public init() {}

    /// Dumps once, parsing every socket as the source does; how many TCP sockets came back.
    public func dump() throws -> Int {
        try system.sockets().tcp.count
    }
}
