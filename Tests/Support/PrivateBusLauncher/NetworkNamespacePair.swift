import Platform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Two network namespaces joined by a veth pair, for what crosses a network in the tests and the
/// benchmark: a server at `SUBNET.1` (and `PREFIX::1`), a client at `SUBNET.2` (`PREFIX::2`) whose
/// default routes go through the veth, so the client's veth is the one interface a traffic
/// counter sees. Nothing is routed anywhere else, so traffic never leaves them. Needs root.
///
/// Enter them with `nsenter --net=/run/netns/NAME` (`enter`), not `ip netns exec`, which
/// remounts /sys and so hides the cgroup tree. Deleting the namespaces (`remove()`) deletes the
/// veth pair with them.
public struct NetworkNamespacePair: Sendable {
    public let server: String
    public let client: String
    public let serverAddress: String
    public let clientAddress: String
    public let serverAddress6: String
    public let clientAddress6: String

    /// Makes the pair, named `PREFIX-sTAG` and `PREFIX-cTAG`, on `subnet` (`10.213.0`) and
    /// `prefix6` (`fd00:213:`).
    public init(prefix: String, tag: String, subnet: String, prefix6: String) throws(LaunchError) {
        server = "\(prefix)-s\(tag)"
        client = "\(prefix)-c\(tag)"
        serverAddress = subnet + ".1"
        clientAddress = subnet + ".2"
        serverAddress6 = prefix6 + ":1"
        clientAddress6 = prefix6 + ":2"
        let serverLink = "nas\(tag)"
        let clientLink = "nac\(tag)"
        do {
            try Self.ip(["netns", "add", server])
            try Self.ip(["netns", "add", client])
            try Self.ip(["link", "add", clientLink, "type", "veth", "peer", "name", serverLink])
            try Self.ip(["link", "set", clientLink, "netns", client])
            try Self.ip(["link", "set", serverLink, "netns", server])
            try Self.ip(["-n", server, "addr", "add", "\(serverAddress)/24", "dev", serverLink])
            try Self.ip(["-n", client, "addr", "add", "\(clientAddress)/24", "dev", clientLink])
            // No duplicate address detection: the addresses work at once, not 2 s later.
            try Self.ip(["-n", server, "addr", "add", "\(serverAddress6)/64", "dev", serverLink, "nodad"])
            try Self.ip(["-n", client, "addr", "add", "\(clientAddress6)/64", "dev", clientLink, "nodad"])
            for (namespace, link) in [(server, serverLink), (client, clientLink)] {
                try Self.ip(["-n", namespace, "link", "set", "lo", "up"])
                try Self.ip(["-n", namespace, "link", "set", link, "up"])
            }
            try Self.ip(["-n", client, "route", "add", "default", "via", serverAddress])
            try Self.ip(["-n", client, "-6", "route", "add", "default", "via", serverAddress6])
        } catch {
            remove()
            throw error
        }
    }

    /// Deletes both namespaces, and the veth pair with them.
    public func remove() {
        for namespace in [client, server] { _ = try? Self.ip(["netns", "del", namespace]) }
    }

    /// `nsenter` arguments that run `command` in `namespace`.
    public func enter(_ namespace: String, _ command: [String]) -> [String] {
        ["--net=/run/netns/\(namespace)"] + command
    }

    /// Deletes the namespaces `PREFIX-?PIDx…` of processes that died before they could.
    public static func removeStale(prefix: String) {
        guard let names = try? directoryNames("/run/netns") else { return }
        for name in names where name.hasPrefix(prefix + "-") {
            let digits = name.dropFirst(prefix.count + 2).prefix { $0.isNumber }
            guard let pid = Int32(digits), kill(pid, 0) != 0, errno == ESRCH else { continue }
            _ = try? ip(["netns", "del", name])
        }
    }

    private static func ip(_ arguments: [String]) throws(LaunchError) {
        let pid = try launch("ip", arguments, environment: busFreeEnvironment(adding: [:]), stdout: .null, stderr: .null)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard status == 0 else { throw LaunchError("ip \(arguments.joined(separator: " ")) failed (status \(status))") }
    }

    private static func directoryNames(_ path: String) throws(LaunchError) -> [String] {
        guard let entries = Directory.entries(of: path) else { throw LaunchError("cannot read \(path)") }
        return entries.map(\.name)
    }
}
