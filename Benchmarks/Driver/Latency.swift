import DBus

/// Signal latency: from sending Push (or Pop) on one connection to a second, subscribed
/// connection receiving the PropertiesChanged that carries the new `Active`, against the bus's
/// own Peer.Ping round trip measured in between, on the watcher's connection.
struct LatencySample {
    /// Median Push/Pop → PropertiesChanged, nanoseconds.
    var signal: Double
    /// Median Ping round trip to the bus, nanoseconds.
    var ping: Double
    var ratio: Double { signal / ping }
}

enum Latency {
    /// `samples` flips (half Push 0→1, half Pop 1→0) with a Ping before each.
    static func measure(
        _ contender: Contender, on bus: Bus, samples: Int, wrapper: [String]
    ) throws(BenchError) -> LatencySample {
        let child = try contender.start(on: bus, wrapper: wrapper)
        defer { try? Contender.stop(child, on: bus) }
        let caller = try bus.connect()
        let watcher = try bus.connect()
        do {
            try watcher.addMatch(Calls.propertiesChangedRule)
        } catch {
            throw BenchError("AddMatch failed: \(error)")
        }
        var signalTimes: [Double] = []
        var pingTimes: [Double] = []
        var active = false
        for index in 0..<(samples + 20) {
            let pingStart = Clock.now
            try Calls.roundTrip(watcher, try call(Calls.pingBus))
            let pingTime = Double(Clock.now - pingStart)

            let message = active ? try call(Calls.pop) : try call(Calls.push)
            active.toggle()
            let start = Clock.now
            do {
                try caller.send(message)
            } catch {
                throw BenchError("sending failed: \(error)")
            }
            // Throttled Count signals may arrive in between; wait for the one with this flip.
            while true {
                guard let signal = watcher.readMessage(timeout: .seconds(5)) else {
                    throw BenchError("\(contender.label) sent no PropertiesChanged(Active=\(active)) within 5 s")
                }
                if Calls.active(in: signal) == active { break }
            }
            let signalTime = Double(Clock.now - start)
            while true {
                guard let reply = caller.readMessage(timeout: .seconds(5)) else {
                    throw BenchError("\(contender.label) did not reply within 5 s")
                }
                if reply.kind == .methodReturn { break }
                if reply.kind == .error { throw BenchError("\(contender.label) refused: \(reply.error.map { "\($0)" } ?? "")") }
            }
            if index >= 20 {  // the first flips warm up caches and the bus's match tables
                signalTimes.append(signalTime)
                pingTimes.append(pingTime)
            }
        }
        return LatencySample(signal: median(signalTimes), ping: median(pingTimes))
    }

    private static func call(_ make: () throws(BusError) -> Message) throws(BenchError) -> Message {
        do {
            return try make()
        } catch {
            throw BenchError("cannot build a call: \(error)")
        }
    }
}
