#if canImport(Glibc)
import Glibc
#endif

/// One sock_diag dump of this network namespace's sockets, as the traffic source takes it each
/// second while the interfaces are busy (TCP in every state that moves data, and connected UDP):
/// what `make bench` times against `ss -tinie` dumping the same.
public final class TrafficDumpProbe {
    private let system = KernelTrafficSystem(uid: getuid())

    public init() {}

    /// Dumps once, parsing every socket as the source does; how many TCP sockets came back.
    public func dump() throws -> Int {
        try system.sockets().tcp.count
    }
}
