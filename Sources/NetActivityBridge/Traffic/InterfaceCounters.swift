/// The byte counters of the interfaces that carry a default route, from `/proc/net/dev`,
/// `/proc/net/route` and `/proc/net/ipv6_route` (the network namespace's own files; every user
/// may read them). Parsed from text, so a line of another shape is skipped, never trusted.
///
/// Only default-route interfaces count: loopback, a container bridge and its veths, and the
/// physical interface under a VPN's tunnel would count the same bytes again, or bytes that
/// never leave the machine.
enum InterfaceCounters {
    /// Received and sent bytes of one interface.
    struct Bytes: Equatable, Sendable {
        var received: UInt64
        var sent: UInt64
    }

    /// Each interface's counters in a `/proc/net/dev` text.
    static func parseDev(_ text: String) -> [String: Bytes] {
        var result: [String: Bytes] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].filter { $0 != " " && $0 != "\t" }
            let fields = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard !name.isEmpty, fields.count >= 16, let received = UInt64(fields[0]), let sent = UInt64(fields[8])
            else { continue }
            result[String(name)] = Bytes(received: received, sent: sent)
        }
        return result
    }

    /// The interfaces of the IPv4 default routes (destination and mask 0) in a `/proc/net/route` text.
    static func defaultRouteInterfaces(route text: String) -> Set<String> {
        var result: Set<String> = []
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000", fields[0] != "lo",
                let flags = UInt32(fields[3], radix: 16), flags & 0x0001 != 0  // RTF_UP
            else { continue }
            result.insert(String(fields[0]))
        }
        return result
    }

    /// The interfaces of the IPv6 default routes (`::/0`, not a reject route) in a
    /// `/proc/net/ipv6_route` text.
    static func defaultRouteInterfaces(ipv6Route text: String) -> Set<String> {
        var result: Set<String> = []
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 10, fields[0].allSatisfy({ $0 == "0" }), fields[0].count == 32, fields[1] == "00",
                fields[9] != "lo", let flags = UInt32(fields[8], radix: 16),
                flags & 0x0001 != 0, flags & 0x0200 == 0  // RTF_UP, not RTF_REJECT
            else { continue }
            result.insert(String(fields[9]))
        }
        return result
    }

    /// The counters of the default-route interfaces, from the three files' texts.
    static func defaultRouteCounters(dev: String, route: String, ipv6Route: String) -> [String: Bytes] {
        let names = defaultRouteInterfaces(route: route).union(defaultRouteInterfaces(ipv6Route: ipv6Route))
        return parseDev(dev).filter { names.contains($0.key) }
    }

    /// The bytes moved between two readings, summed over the interfaces in both (one that
    /// appeared or vanished in between says nothing), each counter that went backwards (an
    /// interface re-made under the same name) counted as 0.
    static func moved(from earlier: [String: Bytes], to later: [String: Bytes]) -> Bytes {
        var total = Bytes(received: 0, sent: 0)
        for (name, now) in later {
            guard let before = earlier[name] else { continue }
            total.received &+= now.received >= before.received ? now.received - before.received : 0
            total.sent &+= now.sent >= before.sent ? now.sent - before.sent : 0
        }
        return total
    }
}
