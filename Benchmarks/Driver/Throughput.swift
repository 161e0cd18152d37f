import DBus

/// One throughput comparison: a workload with some calls in flight, against a service and the
/// floor that sends the same bus traffic.
struct ThroughputCase {
    var name: String
    var description: String
    var workload: Workload
    var inFlight: Int
    /// Client, bus and contender confined to one CPU during the window (see `Affinity`).
    var oneCPU = false
    /// Calls made once before the warm-up (one Push keeps `Active` true throughout).
    var primingPushes: Int
    var service: Contender
    var floor: Contender
}

/// The medians over rounds of one case, for each contender.
struct ThroughputFigures {
    var service: [WindowResult] = []
    var floor: [WindowResult] = []

    var serviceRate: Double { median(service.map(\.callsPerSecond)) }
    var floorRate: Double { median(floor.map(\.callsPerSecond)) }
    /// Median over rounds of each round's service/floor rate ratio.
    var rateRatio: Double { median(zip(service, floor).map { $0.callsPerSecond / $1.callsPerSecond }) }
    var serviceCPU: Double { median(service.map(\.serviceMicrosecondsPerCall)) }
    var floorCPU: Double { median(floor.map(\.serviceMicrosecondsPerCall)) }
    var cpuRatio: Double {
        median(zip(service, floor).map { $0.serviceMicrosecondsPerCall / max($1.serviceMicrosecondsPerCall, 1e-9) })
    }
    var serviceBusCPU: Double { median(service.map(\.busMicrosecondsPerCall)) }
    var floorBusCPU: Double { median(floor.map(\.busMicrosecondsPerCall)) }
    var serviceSignals: Double { median(service.map(\.signalsPerCall)) }
    var floorSignals: Double { median(floor.map(\.signalsPerCall)) }
    var errors: Int { (service + floor).reduce(0) { $0 + $1.errors } }
}

extension ThroughputCase {
    /// Starts `contender` fresh, drives the workload from a new connection, stops it.
    func measure(
        _ contender: Contender, on bus: Bus, warmup: UInt64, window: UInt64, wrapper: [String]
    ) throws(BenchError) -> WindowResult {
        let child = try contender.start(on: bus, wrapper: wrapper)
        defer { try? Contender.stop(child, on: bus) }
        let connection = try bus.connect()
        do {
            for _ in 0..<primingPushes { _ = try connection.call(try Calls.push(), timeout: .seconds(10)) }
        } catch {
            throw BenchError("priming \(contender.label) failed: \(error)")
        }
        let loop = try CallLoop(connection: connection, workload: workload, inFlight: inFlight)
        guard oneCPU else {
            return try loop.measure(warmup: warmup, window: window, service: child.pid, bus: bus.daemon.pid)
        }
        return try Affinity.onOneCPU([child.pid, bus.daemon.pid]) { () throws(BenchError) in
            try loop.measure(warmup: warmup, window: window, service: child.pid, bus: bus.daemon.pid)
        }
    }
}

/// The middle value (mean of the two middle values for an even count); 0 for none.
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
