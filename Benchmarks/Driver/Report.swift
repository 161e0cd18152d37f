/// The figures as tables, then one line with every ratio.
struct Report {
    let cases: [ThroughputCase]
    let figures: [ThroughputFigures]
    let serviceLatency: [LatencySample]
    let floorLatency: [LatencySample]
    let footprints: [(String, FootprintFigures)]
    let idleSeconds: Int
    let scale: [ScaleFigures]
    let bridge: BridgeFigures?
    let traffic: TrafficFigures?

    func print() {
        var ratios: [String] = []
        if !cases.isEmpty {
            var table = Table([
                "case", "floor", "calls/s", "floor calls/s", "ratio", "CPU µs/call", "floor µs/call", "CPU ratio",
                "bus µs/call", "signals/call",
            ], leftAligned: 2)
            for (item, figure) in zip(cases, figures) {
                table.add([
                    item.description, item.floor.label, fixed(figure.serviceRate, 0), fixed(figure.floorRate, 0),
                    fixed(figure.rateRatio), fixed(figure.serviceCPU, 1), fixed(figure.floorCPU, 1),
                    fixed(figure.cpuRatio), fixed(figure.serviceBusCPU, 1) + " / " + fixed(figure.floorBusCPU, 1),
                    fixed(figure.serviceSignals, 3) + " / " + fixed(figure.floorSignals, 3),
                ])
                if figure.errors > 0 { say("warning: \(figure.errors) error replies in \(item.name)") }
            }
            say("")
            say("Throughput: netactivityd against its floor (medians; ratio = service/floor per pair of adjacent windows, median; two CPUs: two pairs a round)")
            say(table.text)
            say("goal: ratio ≥ 0.95 and CPU ratio ≤ 1.5 (UpdateActivity against version 2: CPU ratio ≤ 1.1); "
                + "bus µs/call and signals/call: service / floor")
            ratios += zip(cases, figures).map { "\($0.name) \(fixed($1.rateRatio))" }
            ratios += zip(cases, figures).map { "cpu-\($0.name) \(fixed($1.cpuRatio))" }
        }

        if !serviceLatency.isEmpty {
            let service = median(serviceLatency.map(\.signal))
            let floor = median(floorLatency.map(\.signal))
            let ping = median((serviceLatency + floorLatency).map(\.ping))
            var table = Table(["Push/Pop → PropertiesChanged at a 2nd connection", "µs", "÷ bus Ping"])
            table.add(["netactivityd", fixed(service / 1e3, 1), fixed(median(serviceLatency.map(\.ratio)))])
            table.add(["c-floor (libdbus)", fixed(floor / 1e3, 1), fixed(median(floorLatency.map(\.ratio)))])
            table.add(["org.freedesktop.DBus.Peer.Ping round trip", fixed(ping / 1e3, 1), "1.00"])
            say("")
            say("Signal latency (medians)")
            say(table.text)
            ratios.append("latency/ping \(fixed(median(serviceLatency.map(\.ratio))))")
            ratios.append("floor-latency/ping \(fixed(median(floorLatency.map(\.ratio))))")
        }

        for (variant, figure) in footprints {
            var table = Table(["netactivityd (\(variant))", "VmRSS", "anon", "file", "goal"])
            table.add([
                "idle", mebibytes(figure.idle.rss), mebibytes(figure.idle.anonymous), mebibytes(figure.idle.file),
                "≤ 8 MiB",
            ])
            table.add([
                "\(Footprint.connections) connections × \(Footprint.activitiesPerConnection) activities",
                mebibytes(figure.loaded.rss), mebibytes(figure.loaded.anonymous), mebibytes(figure.loaded.file),
                "≤ 16 MiB",
            ])
            table.add([
                "idle again after they left", mebibytes(figure.drained.rss), mebibytes(figure.drained.anonymous),
                mebibytes(figure.drained.file), "",
            ])
            say("")
            say("Memory")
            say(table.text)
            let release = fixed(Double(figure.releaseNanoseconds) / 1e6, 2)
            say(
                "release of 1 connection with \(Footprint.activitiesPerConnection) activities: \(release) ms from "
                    + "its disconnect to PropertiesChanged at a watcher; \(figure.releaseSignals) signal(s) (must be 1), "
                    + "Count then \(figure.countAfterRelease.map { String($0) } ?? "absent"); the service spent "
                    + "\(fixed(Double(figure.releaseCPU) / 1e6, 2)) ms CPU on it")
            let key = variant.hasPrefix("-") ? String(variant.dropFirst()) : variant
            ratios.append("rss-\(key) \(mebibytes(figure.idle.rss))/\(mebibytes(figure.loaded.rss))")
            if variant == footprints.first?.0 {
                ratios.append("release \(release) ms \(figure.releaseSignals) signal(s)")
            }
            if let switches = figure.idleSwitches, let cpu = figure.idleCPU {
                say(
                    "idle for \(idleSeconds) s: \(switches) context switches, \(fixed(Double(cpu) / 1e3, 0)) µs CPU "
                        + "(goal 0)")
                ratios.append("idle \(switches) switches \(fixed(Double(cpu) / 1e3, 0)) µs")
            }
        }
        if !scale.isEmpty {
            var holding = Table([
                "live activities", "connections", "begin all", "RSS", "GetManagedObjects", "of which service CPU",
                "same bytes client to client", "release of 1,024", "watch: peak RSS", "watch: CPU",
                "watch: µs/signal", "C watcher: µs/signal", "ratio", "fewest signals",
            ])
            for row in scale {
                holding.add([
                    String(row.live), String(row.connections), fixed(Double(row.beginNanoseconds) / 1e9, 2) + " s",
                    mebibytes(row.rss), fixed(Double(row.managedObjectsNanoseconds) / 1e6, 1) + " ms",
                    fixed(Double(row.managedObjectsCPU) / 1e6, 1) + " ms", fixed(Double(row.relayNanoseconds) / 1e6, 1) + " ms",
                    row.releaseNanoseconds.map { fixed(Double($0) / 1e6, 1) + " ms" } ?? "–",
                    row.watch.map { mebibytes($0.peakKiB) } ?? "–",
                    row.watch.map { fixed($0.cpuShare * 100, 0) + " %" } ?? "–",
                    row.watch.map { fixed($0.cpuPerSignal, 1) } ?? "–",
                    row.watch?.floorCPUPerSignal.map { fixed($0, 1) } ?? "–",
                    row.watch?.floorRatio.map { fixed($0) } ?? "–",
                    row.watch.map { String($0.fewestSignals) } ?? "–",
                ])
            }
            var changes = Table([
                "live activities", "updates go to", "UpdateActivity/s", "CPU µs/update", "watcher bytes/update",
                "against", "ratio", "CPU ratio",
            ])
            let runs = scale.flatMap(\.updates)
            for run in runs {
                changes.add([
                    String(run.live), run.pattern == .oneActivity ? "one of them" : "each in turn", fixed(run.perSecond, 0),
                    fixed(run.cpuPerUpdate / 1e3, 1), fixed(run.bytesPerUpdate, 0),
                    "\(run.referenceLive) activit\(run.referenceLive == 1 ? "y" : "ies")", fixed(run.rateRatio),
                    fixed(run.cpuRatio),
                ])
            }
            say("")
            say("Scale: holding 1 to 65,536 live activities (256-byte labels, 1,024 a connection)")
            say(holding.text)
            say("goals at 65,536: begin all < 15 s; RSS < 96 MiB; GetManagedObjects < 1 s; release < 100 ms")
            say("watch: `netactivity watch --format waybar` started with them live; CPU while each is updated in turn, "
                + "in % of a core, over a window of 1 s, or up to \(Scale.followedSeconds) s until it brings "
                + "\(Scale.followedSignals) signals (fewest: the least any window brought); its CPU per signal against "
                + "the C watcher's (Benchmarks/floor/c-watcher.c, which decodes the same signals into a table), "
                + "alternating windows, median of 3 ratios; goal ≤ 2")
            say("")
            say("Scale: UpdateActivity with them live (32 in flight from each owner, one watcher of every signal; "
                + "\(Scale.windowMilliseconds) ms windows, each beside one against a reference service that sends as many "
                + "signals per update: one of them against 1 activity, each in turn against 1,024; medians of per-pair ratios)")
            say(changes.text)
            say("goals at 65,536: ratio ≥ 0.8 and CPU ratio ≤ 1.25; under 1 KiB a watcher per update in every row")
            if let last = scale.first(where: { $0.live == 64 * 1_024 }) {
                for run in last.updates {
                    let name = run.pattern == .oneActivity ? "scale-one" : "scale-each"
                    ratios.append("\(name)-rate \(fixed(run.rateRatio))")
                    ratios.append("\(name)-cpu \(fixed(run.cpuRatio))")
                }
                ratios.append("scale-bytes \(fixed(runs.map(\.bytesPerUpdate).max() ?? 0, 0))")
                ratios.append("scale-rss \(mebibytes(last.rss))")
                if let watch = last.watch {
                    ratios.append("scale-watch-rss \(mebibytes(watch.peakKiB))")
                    ratios.append("scale-watch-cpu \(fixed(watch.cpuShare * 100, 0)) %")
                    if let ratio = watch.floorRatio { ratios.append("scale-watch/c-watcher \(fixed(ratio))") }
                }
                ratios.append("scale-gmo \(fixed(Double(last.managedObjectsNanoseconds) / 1e9, 2)) s")
                ratios.append("scale-gmo/relay \(fixed(Double(last.managedObjectsNanoseconds) / Double(max(last.relayNanoseconds, 1))))")
            }
        }
        if let bridge {
            var table = Table(["netactivity bridge", "RSS", "context switches", "CPU"])
            table.add([
                "idle, \(bridge.idleSeconds) s", mebibytes(bridge.idleRSSKiB), String(bridge.idleSwitches),
                fixed(Double(bridge.idleCPU) / 1e6, 1) + " ms",
            ])
            table.add([
                "following, \(BridgeCost.followSeconds) s", mebibytes(bridge.followingRSSKiB),
                "\(bridge.followingSwitches) (\(fixed(Double(bridge.followingSwitches) / Double(max(bridge.launcherUpdates, 1)), 2)) an update)",
                fixed(bridge.followingCPUShare * 100, 2) + " % of a core",
            ])
            say("")
            say("Bridge: idle with PackageKit present (no transaction), then following a transaction downloading "
                + "(\(bridge.packageKitUpdates) DownloadSizeRemaining changes, 2 a second) and a launcher entry "
                + "(\(bridge.launcherUpdates) updates, 100 a second), both mirrored to a stand-in plasmashell "
                + "(\(bridge.jobCalls) job view calls), measured from \(BridgeCost.warmUpSeconds) s in, once both are jobs")
            say(table.text)
            say("goals: idle 0 context switches, RSS ≤ 12 MiB; following ≤ 1 % of a core (read one by one, the "
                + "launcher updates alone would be 1 context switch each; the bridge reads them every 50 ms)")
            ratios.append("bridge-idle-switches \(bridge.idleSwitches)")
            ratios.append("bridge-rss \(mebibytes(bridge.idleRSSKiB))")
            ratios.append("bridge-cpu \(fixed(bridge.followingCPUShare * 100, 2)) %")
        }
        if let traffic {
            var dumps = Table(["one dump", "traffic source", "ss -tinie", "ratio"])
            for dump in traffic.dumps {
                dumps.add(["\(dump.sockets) TCP sockets", fixed(dump.ours, 1) + " ms", fixed(dump.ss, 1) + " ms", fixed(dump.ratio)])
                ratios.append("traffic-dump-\(dump.sockets) \(fixed(dump.ratio))")
            }
            say("")
            say("Traffic source: one sock_diag dump (median of \(TrafficCost.rounds), wall time) beside ss -tinie dumping the same")
            say(dumps.text)
            say("goal: ratio ≤ 1")
            /// One side's rows: idle, then following a transfer, with their goals and ratios.
            func sourceCost(
                _ heading: String, following: String, idleWakeUps: Double, idleCPU: Double, followingCPU: Double,
                shown: Bool, ratioPrefix: String
            ) {
                var rows = Table([heading, "wake-ups a second", "CPU"])
                rows.add(["idle, \(traffic.idleSeconds) s", fixed(idleWakeUps, 2), fixed(idleCPU * 100, 3) + " % of a core"])
                rows.add([
                    "following \(TrafficCost.rate / 1_000_000) MB/s\(following), \(traffic.followingSeconds) s"
                        + (shown ? "" : " (not shown!)"), "", fixed(followingCPU * 100, 2) + " % of a core",
                ])
                say(rows.text)
                say("goals: idle ≤ 0.5 wake-ups a second and ≤ 0.02 % of a core; following ≤ 0.5 % of a core")
                ratios.append("\(ratioPrefix)-idle-wakeups \(fixed(idleWakeUps, 2))/s")
                ratios.append("\(ratioPrefix)-idle-cpu \(fixed(idleCPU * 100, 3)) %")
                ratios.append("\(ratioPrefix)-cpu \(fixed(followingCPU * 100, 2)) %")
            }
            sourceCost(
                "netactivity bridge --only traffic", following: "", idleWakeUps: traffic.idleWakeUpsPerSecond,
                idleCPU: traffic.idleCPUShare, followingCPU: traffic.followingCPUShare, shown: traffic.followingShown,
                ratioPrefix: "traffic")
            if let system = traffic.system {
                say("")
                say("System-side traffic source (medians of \(SystemTrafficFigures.runs) runs)")
                sourceCost(
                    "netactivity --system bridge", following: " of a system unit", idleWakeUps: system.idleWakeUpsPerSecond,
                    idleCPU: system.idleCPUShare, followingCPU: system.followingCPUShare, shown: system.followingShown,
                    ratioPrefix: "system-traffic")
                if let exposure = system.exposure {
                    say(
                        "systemd-analyze security: netactivity-bridge-system.service \(fixed(exposure.bridge, 1)), "
                            + "netactivityd-system.service \(fixed(exposure.service, 1)) (goal: no more than the service's)")
                    ratios.append("system-traffic-exposure \(fixed(exposure.bridge, 1))/\(fixed(exposure.service, 1))")
                }
            }
        }
        say("")
        say("ratios: " + ratios.joined(separator: ", "))
    }
}
