@testable import NetActivityBridge

extension FuzzTarget {
    /// The interfaces' byte counters the traffic source reads from `/proc/net/dev`,
    /// `/proc/net/route` and `/proc/net/ipv6_route`: the input read as each of the three.
    public static let interfaceCounters = FuzzTarget("interface-counters") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        let counters = InterfaceCounters.defaultRouteCounters(dev: text, route: text, ipv6Route: text)
        _ = InterfaceCounters.moved(from: InterfaceCounters.parseDev(text), to: counters)
    }
}
