#if canImport(Glibc)
import Glibc
#endif

/// The whole run: throughput rounds (contenders alternating), signal latency, then memory,
/// release and idle cost; prints the tables and, last, the line of ratios.
struct Benchmark {
    let options: Options

    init(_ options: Options) { self.options = options }

    func run() throws(BenchError) {
        let floorPath = try cFloor()
        let service = Contender.service(path: options.service, arguments: [])
        let shapes: [(name: String, description: String, workload: Workload, primingPushes: Int, floor: Contender)] = [
            ("steady", "Push/Pop steady", .pushPop, 1, .echo),
            ("toggle", "Push/Pop toggling", .pushPop, 0, .cFloor(path: floorPath)),
            ("begin-end", "Begin/EndActivity", .beginEnd, 1, .cFloor(path: floorPath)),
        ]
        // Each shape three ways: one call in flight where the scheduler puts things, one call in
        // flight on one shared CPU (the CPU per call without the cost of cross-CPU wake-ups), and
        // 32 in flight.
        let shapeCases = shapes.flatMap { shape in
            [("seq", ", 1 in flight", 1, false), ("seq-1cpu", ", 1 in flight, 1 CPU", 1, true), ("pipe", ", 32 in flight", 32, false)]
                .map { variant, suffix, inFlight, oneCPU in
                    ThroughputCase(
                        name: shape.name + "-" + variant, description: shape.description + suffix,
                        workload: shape.workload, inFlight: inFlight, oneCPU: oneCPU,
                        primingPushes: shape.primingPushes, service: service, floor: shape.floor)
                }
        } + updateCases(service: options.service)
        let cases = shapeCases.filter { options.wants($0.name) }

        let bus = try Bus()
        say("netactivity-bench: \(machineDescription())")
        say(
            "private dbus-daemon; netactivityd with its default flags (--throttle-ms 50, --activation-delay 1, "
                + "--completion-delay 0.17); \(options.rounds) rounds of \(options.windowMilliseconds) ms windows "
                + "after \(options.warmupMilliseconds) ms warm-up, contenders alternating, medians")

        var figures = cases.map { _ in ThroughputFigures() }
        var serviceLatency: [LatencySample] = []
        var floorLatency: [LatencySample] = []
        let warmup = UInt64(options.warmupMilliseconds) * 1_000_000
        let window = UInt64(options.windowMilliseconds) * 1_000_000
        for round in 0..<options.rounds {
            let serviceFirst = round % 2 == 0
            progress("round \(round + 1)/\(options.rounds)")
            for (index, item) in cases.enumerated() {
                // Rows on two CPUs swing most from window to window (busy processes placed anew
                // for every window, a wake-up crossing to the other CPU or not): they get a second
                // pair per round, in the other order (service, floor, floor, service), for twice
                // the samples. On one CPU every placement is the same.
                let pair = serviceFirst ? [item.service, item.floor] : [item.floor, item.service]
                let order = item.oneCPU ? pair : pair + pair.reversed()
                for contender in order {
                    let result = try item.measure(
                        contender, on: bus, warmup: warmup, window: window, wrapper: options.wrapper)
                    if options.verbose {
                        progress(
                            "  \(item.name) \(contender.label) pid \(result.pid): \(result.calls) calls in "
                                + "\(fixed(Double(result.nanoseconds) / 1e6, 1)) ms, CPU \(result.serviceCPU / 1000) µs, "
                                + "bus \(result.busCPU / 1000) µs, client \(result.clientCPU / 1000) µs, \(result.signals) signals, \(result.errors) errors, "
                                + "\(fixed(result.switchesPerCall, 2)) switches/call")
                    }
                    if contender == item.service {
                        figures[index].service.append(result)
                    } else {
                        figures[index].floor.append(result)
                    }
                }
            }
            if options.wants("latency") {
                let floor = Contender.cFloor(path: floorPath)
                for contender in serviceFirst ? [service, floor] : [floor, service] {
                    let sample = try Latency.measure(
                        contender, on: bus, samples: options.latencySamples, wrapper: options.wrapper)
                    if contender == service { serviceLatency.append(sample) } else { floorLatency.append(sample) }
                }
            }
        }

        var footprints: [(String, FootprintFigures)] = []
        if options.wants("footprint") {
            progress("memory, release and \(options.idleSeconds) s idle")
            footprints.append(
                (linkage(of: options.service), try Footprint.measure(
                    service: options.service, on: bus, idleSeconds: options.idleSeconds, wrapper: options.wrapper)))
            if let path = options.compareService {
                footprints.append((linkage(of: path), try Footprint.measure(service: path, on: bus, idleSeconds: nil)))
            }
        }
        var scale: [ScaleFigures] = []
        if options.wants("scale") {
            progress("scale: 1 to 65,536 live activities")
            scale = try Scale.measure(
                service: options.service, cli: options.cli, watcherFloor: try watcherFloor(), on: bus,
                rounds: options.scaleRounds, wrapper: options.wrapper)
        }
        var bridge: BridgeFigures?
        if options.wants("bridge") {
            progress("bridge: \(options.idleSeconds) s idle, then \(BridgeCost.followSeconds) s following")
            bridge = try BridgeCost.measure(service: options.service, cli: options.cli, idleSeconds: options.idleSeconds)
        }
        var traffic: TrafficFigures?
        if options.wants("traffic") {
            progress("traffic: dumps of \(TrafficCost.socketCounts.map { "\($0)" }.joined(separator: " and ")) sockets, "
                + "then the source idle and following \(TrafficCost.rate / 1_000_000) MB/s, then the system side's "
                + "(\(SystemTrafficFigures.runs) runs)")
            traffic = try TrafficCost.measure(service: options.service, cli: options.cli, idleSeconds: options.idleSeconds)
        }
        progress("done")

        Report(
            cases: cases, figures: figures, serviceLatency: serviceLatency, floorLatency: floorLatency,
            footprints: footprints, idleSeconds: options.idleSeconds, scale: scale, bridge: bridge, traffic: traffic
        ).print()
    }

    /// UpdateActivity with every change announced (`--throttle-ms 0`), against a service of
    /// interface version 2 when one is given: what Fraction and Rate add to an update.
    private func updateCases(service: String) -> [ThroughputCase] {
        guard let previous = options.versionTwoService else { return [] }
        let unthrottled = ["--throttle-ms", "0"]
        return [("seq", ", 1 in flight", 1), ("pipe", ", 32 in flight", 32)].map { variant, suffix, inFlight in
            ThroughputCase(
                name: "update-" + variant, description: "UpdateActivity, every change announced" + suffix,
                workload: .update, inFlight: inFlight, primingPushes: 1,
                service: .service(path: service, arguments: unthrottled),
                floor: .versionTwo(path: previous, arguments: unthrottled))
        }
    }

    /// The C watcher (Benchmarks/floor/c-watcher.c), built beside the C floor; nil when it
    /// cannot be.
    private func watcherFloor() throws(BenchError) -> String? {
        let directory = options.floor.split(separator: "/").dropLast().joined(separator: "/")
        let binary = (directory.isEmpty ? "." : directory) + "/c-watcher"
        let source = "Benchmarks/floor/c-watcher.c"
        let command = "cc -O2 -o '\(binary)' '\(source)' $(pkg-config --cflags --libs dbus-1)"
        guard access(source, R_OK) == 0 else { return access(binary, X_OK) == 0 ? binary : nil }
        guard system(command) == 0 else { throw BenchError("building \(binary) failed") }
        return binary
    }

    /// The C floor binary, compiled with cc when it is missing or older than its source.
    private func cFloor() throws(BenchError) -> String {
        var binary = stat()
        var source = stat()
        let haveBinary = stat(options.floor, &binary) == 0
        guard stat(options.floorSource, &source) == 0 else {
            if haveBinary { return options.floor }
            throw BenchError("no \(options.floor) and no \(options.floorSource) to build it from")
        }
        if haveBinary, binary.st_mtim.tv_sec >= source.st_mtim.tv_sec { return options.floor }
        let directory = options.floor.split(separator: "/").dropLast().joined(separator: "/")
        let command = "mkdir -p '\(directory.isEmpty ? "." : directory)' && cc -O2 -o '\(options.floor)' "
            + "'\(options.floorSource)' $(pkg-config --cflags --libs dbus-1)"
        progress("building the C floor: \(command)")
        guard system(command) == 0 else { throw BenchError("building \(options.floor) failed") }
        return options.floor
    }

    /// "-static-stdlib" when `path` carries the Swift runtime, "dynamic" when it loads
    /// libswiftCore.so (what ldd reports).
    private func linkage(of path: String) -> String {
        guard let pipe = popen("ldd '\(path)' 2>/dev/null", "r") else { return "dynamic" }
        defer { pclose(pipe) }
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), pipe) != nil {
            let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if text.contains("libswiftCore.so") { return "dynamic" }
        }
        return "-static-stdlib"
    }

    private func progress(_ text: String) {
        complain("netactivity-bench: \(text)")
    }
}
