import DBus
import NetActivityContract
import PrivateBusLauncher
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Which activities a run of `UpdateActivity` calls goes to.
enum UpdatePattern: Equatable {
    /// One activity over and over while the others stay live: what holding them costs a change.
    case oneActivity
    /// Every live activity in turn: each update is the first change of its object in its
    /// throttle window, so each sends a `PropertiesChanged` of its own.
    case everyActivityInTurn
}

/// The service holding `live` activities: what beginning, holding, listing and releasing
/// them costs, and what an update costs with them live.
struct ScaleFigures {
    var live: Int
    var connections: Int
    /// Beginning all of them, pipelined from every connection in turn.
    var beginNanoseconds: UInt64
    var rss: UInt64
    var managedObjectsNanoseconds: UInt64
    /// The service's CPU time for GetManagedObjects; the rest of the wait is the bus and the
    /// caller moving and checking the reply.
    var managedObjectsCPU: UInt64
    /// The same reply's contents sent from one client to another through the bus, as a signal:
    /// what moving and checking them costs the bus and the receiver, with no service involved.
    var relayNanoseconds: UInt64
    /// One owner with 1,024 activities leaving: until the watcher has every InterfacesRemoved
    /// and the new Count.
    var releaseNanoseconds: UInt64?
    var updates: [UpdateFigures]
    /// `netactivity watch --format waybar` following them all (none for the 1-activity row).
    var watch: WatchFigures? = nil
}

/// What following every object costs a watcher: `netactivity watch --format waybar`, started
/// once the activities are live (so it reads them all with GetManagedObjects first), then one
/// window of updates to each in turn.
struct WatchFigures {
    /// VmHWM: the most it held, reading them all included.
    var peakKiB: UInt64
    /// Its CPU time over the window's, while every update sends a signal it follows.
    var cpuShare: Double
    /// Its CPU per signal, in µs, and the C watcher's (Benchmarks/floor/c-watcher.c) over the
    /// same kind of window; nil without the C watcher.
    var cpuPerSignal: Double
    var floorCPUPerSignal: Double?
    /// Median over alternating windows of the two's CPU per signal.
    var floorRatio: Double?
    /// The fewest signals any of those windows brought, Swift's or C's.
    var fewestSignals: Int
}

/// `UpdateActivity` windows against a service, each beside one against its reference.
struct UpdateFigures {
    var live: Int
    var pattern: UpdatePattern
    /// Medians over the windows.
    var perSecond: Double
    var cpuPerUpdate: Double
    var bytesPerUpdate: Double
    /// Medians of each window's figure over its adjacent reference window's.
    var rateRatio: Double
    var cpuRatio: Double
    /// How many live activities the reference held.
    var referenceLive: Int
}

/// `UpdateActivity` with 1 to 65,536 live activities (256-byte labels): what one change costs
/// the service and each watcher must not grow with the number of activities.
///
/// A change costs the service a reply and, unless the throttle merges it, a signal. So each
/// pattern is compared with a reference that sends as many signals per update: updates to one
/// of the activities (merged by its throttle) with a service holding 1 activity, updates to each
/// in turn (a signal each) with one holding 1,024, the fewest at which every update is the first
/// of its object's window. What remains between the two is what the other live activities cost.
/// The references run on buses of their own for the whole measurement, so their windows
/// alternate with the measured service's, as the throughput rows' do with their floors: on a
/// shared machine two 2-second runs a minute apart differ by more than what is measured.
enum Scale {
    static let rows: [(live: Int, connections: Int)] = [(1_024, 1), (16 * 1_024, 16), (64 * 1_024, 64)]
    static let inFlight = 32
    static let label = String(repeating: "x", count: NetActivityBus.Limits.labelBytes)
    static let windowMilliseconds: UInt64 = 300
    /// The fewest signals a watcher's CPU per signal is taken over, and the most seconds of
    /// updates spent reaching them.
    static let followedSignals = 2_000
    static let followedSeconds = 5

    static func measure(
        service path: String, cli: String, watcherFloor: String?, on bus: Bus, rounds: Int, wrapper: [String]
    ) throws(BenchError) -> [ScaleFigures] {
        let one = try Holder(service: path, live: 1, connections: 1, bus: try Bus(), wrapper: wrapper)
        let each = try Holder(service: path, live: 1_024, connections: 1, bus: try Bus(), wrapper: wrapper)
        defer {
            one.stop()
            each.stop()
        }
        var figures = [try one.holding(updates: [])]
        for row in rows {
            let holder = try Holder(service: path, live: row.live, connections: row.connections, bus: bus, wrapper: wrapper)
            defer { holder.stop() }
            let updates = [
                try compare(holder, against: one, .oneActivity, rounds: rounds),
                try compare(holder, against: each, .everyActivityInTurn, rounds: rounds),
            ]
            figures.append(
                try holder.holding(updates: updates) { holder throws(BenchError) in
                    try holder.watching(cli: cli, floor: watcherFloor)
                })
        }
        return figures
    }

    /// `rounds` windows of `pattern` on `holder`, each beside one on `reference`, in turns.
    private static func compare(
        _ holder: Holder, against reference: Holder, _ pattern: UpdatePattern, rounds: Int
    ) throws(BenchError) -> UpdateFigures {
        var measured: [Window] = []
        var rates: [Double] = []
        var cpus: [Double] = []
        for round in 0..<rounds {
            let pair: (Window, Window)
            if round % 2 == 0 {
                let first = try holder.window(pattern, milliseconds: windowMilliseconds)
                pair = (first, try reference.window(pattern, milliseconds: windowMilliseconds))
            } else {
                let second = try reference.window(pattern, milliseconds: windowMilliseconds)
                pair = (try holder.window(pattern, milliseconds: windowMilliseconds), second)
            }
            measured.append(pair.0)
            rates.append(pair.0.perSecond / pair.1.perSecond)
            cpus.append(pair.0.cpuPerUpdate / pair.1.cpuPerUpdate)
        }
        return UpdateFigures(
            live: holder.live, pattern: pattern, perSecond: median(measured.map(\.perSecond)),
            cpuPerUpdate: median(measured.map(\.cpuPerUpdate)), bytesPerUpdate: median(measured.map(\.bytesPerUpdate)),
            rateRatio: median(rates), cpuRatio: median(cpus), referenceLive: reference.live)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// One window of `UpdateActivity` calls.
    struct Window {
        var updates: Int
        var nanoseconds: UInt64
        var serviceCPU: UInt64
        var watcherBytes: Int
        var watcherSignals: Int

        var perSecond: Double { Double(updates) / (Double(nanoseconds) / 1e9) }
        var cpuPerUpdate: Double { Double(serviceCPU) / Double(max(updates, 1)) }
        var bytesPerUpdate: Double { Double(watcherBytes) / Double(max(updates, 1)) }
    }

    /// A service on `bus` holding `live` activities, begun pipelined from `connections`
    /// connections (1,024 each).
    private final class Holder {
        let live: Int
        let bus: Bus
        let child: Child
        var owners: [(connection: Connection, ids: [UInt32])] = []
        let beginNanoseconds: UInt64
        private var cursor: [Int]
        private var owner = 0
        private var round: UInt64 = 0
        private var sent = 0

        init(service path: String, live: Int, connections count: Int, bus: Bus, wrapper: [String]) throws(BenchError) {
            self.live = live
            self.bus = bus
            child = try Contender.service(path: path, arguments: []).start(on: bus, wrapper: wrapper)
            for _ in 0..<count { owners.append((try bus.connect(), [])) }
            let start = Clock.now
            for index in owners.indices {
                let begins = try (0..<(live / count)).map { _ throws(BenchError) in
                    try Calls.checked(NetActivityBus.Member.beginActivity, [.string(Scale.label)])
                }
                owners[index].ids = try Calls.pipeline(owners[index].connection, begins)
                    .map { reply throws(BenchError) in
                        guard let id = (try? reply.arguments())?.first?.uint32 else { throw BenchError("BeginActivity refused") }
                        return id
                    }
            }
            beginNanoseconds = Clock.now - start
            cursor = owners.map { _ in 0 }
            // Past the activation delay, so Visible has settled before anything is measured.
            Clock.sleep(milliseconds: 1_300)
        }

        func stop() {
            owners.removeAll()
            try? Contender.stop(child, on: bus)
        }

        /// `milliseconds` of `UpdateActivity` calls, 32 in flight from one owner at a time,
        /// while a watcher counts the bytes of every signal.
        func window(_ pattern: UpdatePattern, milliseconds: UInt64) throws(BenchError) -> Window {
            let watcher = try Watcher(bus: bus)
            let cpuBefore = ProcessStatistics.sample(child.pid).cpuNanoseconds
            let start = Clock.now
            let deadline = start + milliseconds * 1_000_000
            var updates = 0
            while Clock.now < deadline {
                let (connection, ids) = owners[pattern == .oneActivity ? 0 : owner]
                var batch: [Message] = []
                for _ in 0..<Scale.inFlight {
                    let id: UInt32
                    switch pattern {
                    case .oneActivity:
                        id = ids[0]
                        round += 1
                    case .everyActivityInTurn:
                        id = ids[cursor[owner]]
                        cursor[owner] = (cursor[owner] + 1) % ids.count
                        if cursor[owner] == 0 { round += 1 }
                    }
                    sent += 1
                    batch.append(
                        try Calls.checked(
                            NetActivityBus.Member.updateActivity,
                            [.uint32(id), .uint64(round * 1_000 + UInt64(sent % 1_000)), .uint64(1 << 40)]))
                    updates += 1
                }
                _ = try Calls.pipeline(connection, batch)
                if pattern == .everyActivityInTurn { owner = (owner + 1) % owners.count }
            }
            let nanoseconds = Clock.now - start
            let serviceCPU = ProcessStatistics.sample(child.pid).cpuNanoseconds - cpuBefore
            // The last throttled values go out by the end of their window (50 ms).
            Clock.sleep(milliseconds: 80)
            let (bytes, signals) = watcher.stop()
            return Window(
                updates: updates, nanoseconds: nanoseconds, serviceCPU: serviceCPU, watcherBytes: bytes,
                watcherSignals: signals)
        }

        /// `netactivity watch` following every object: its peak memory, and its CPU while each
        /// activity in turn is updated. Measured after the ratios, which it would otherwise share
        /// the CPUs with.
        func watching(cli: String, floor: String?) throws(BenchError) -> WatchFigures {
            let watch = try Child(cli, ["--address", bus.address, "watch", "--format", "waybar"])
            defer { watch.stop() }
            try settle(watch, "netactivity watch exited: is \(cli) built?")
            let (window, cpu) = try followed(by: watch)
            let peak = ProcessMemory.sample(watch.pid).peak
            var figures = WatchFigures(
                peakKiB: peak, cpuShare: Double(cpu) / Double(max(window.nanoseconds, 1)),
                cpuPerSignal: Self.perSignal(cpu, window), fewestSignals: window.watcherSignals)
            guard let floor else { return figures }
            watch.stop()
            // Alternating windows, one watcher at a time, as the throughput rows do.
            var ratios: [Double] = []
            var floorFigures: [Double] = []
            var swiftFigures = [figures.cpuPerSignal]
            for round in 0..<3 {
                if round > 0 {
                    let again = try Child(cli, ["--address", bus.address, "watch", "--format", "waybar"])
                    defer { again.stop() }
                    try settle(again, "netactivity watch exited")
                    let (window, cpu) = try followed(by: again)
                    swiftFigures.append(Self.perSignal(cpu, window))
                    figures.fewestSignals = min(figures.fewestSignals, window.watcherSignals)
                }
                let cWatcher = try Child(floor, ["--address", bus.address])
                defer { cWatcher.stop() }
                try settle(cWatcher, "the C watcher exited: is \(floor) built?")
                let (floorWindow, floorCPU) = try followed(by: cWatcher)
                floorFigures.append(Self.perSignal(floorCPU, floorWindow))
                figures.fewestSignals = min(figures.fewestSignals, floorWindow.watcherSignals)
                ratios.append(swiftFigures[round] / max(floorFigures[round], 1e-9))
            }
            figures.cpuPerSignal = Scale.median(swiftFigures)
            figures.floorCPUPerSignal = Scale.median(floorFigures)
            figures.floorRatio = Scale.median(ratios)
            return figures
        }

        /// Waits until `watcher` has read every object (GetManagedObjects) and gone quiet.
        private func settle(_ watcher: Child, _ failure: String) throws(BenchError) {
            var last = ProcessStatistics.sample(watcher.pid).cpuNanoseconds
            let deadline = Clock.now + 60_000_000_000
            repeat {
                Clock.sleep(milliseconds: 200)
                let now = ProcessStatistics.sample(watcher.pid).cpuNanoseconds
                defer { last = now }
                if now > 0, now - last < 2_000_000 { break }
            } while Clock.now < deadline && watcher.isRunning
            guard watcher.isRunning else { throw BenchError(failure) }
        }

        /// Seconds of updates to each activity in turn, until the signals they brought number
        /// `Scale.followedSignals` (at most `Scale.followedSeconds`), and `watcher`'s CPU over
        /// them. On a busy host one second may bring only a few signals, when the bus falls
        /// behind and the service holds its throttled ones back: a figure per signal over so
        /// few is mostly the watcher's fixed costs.
        private func followed(by watcher: Child) throws(BenchError) -> (Window, UInt64) {
            let cpuBefore = ProcessStatistics.sample(watcher.pid).cpuNanoseconds
            var followed = try window(.everyActivityInTurn, milliseconds: 1_000)
            for _ in 1..<Scale.followedSeconds where followed.watcherSignals < Scale.followedSignals {
                let more = try window(.everyActivityInTurn, milliseconds: 1_000)
                followed.updates += more.updates
                followed.nanoseconds += more.nanoseconds
                followed.serviceCPU += more.serviceCPU
                followed.watcherBytes += more.watcherBytes
                followed.watcherSignals += more.watcherSignals
            }
            // The last signals are still in the watcher's queue when the window ends.
            Clock.sleep(milliseconds: 100)
            return (followed, ProcessStatistics.sample(watcher.pid).cpuNanoseconds - cpuBefore)
        }

        private static func perSignal(_ cpu: UInt64, _ window: Window) -> Double {
            Double(cpu) / 1e3 / Double(max(window.watcherSignals, 1))
        }

        /// What holding the activities costs: RSS, GetManagedObjects, its bytes between two
        /// clients, what `watch` measures of a watcher following them all, and one owner with
        /// 1,024 of them leaving.
        func holding(updates: [UpdateFigures], watch: (Holder) throws(BenchError) -> WatchFigures? = { _ in nil })
            throws(BenchError) -> ScaleFigures
        {
            // Before anything reads every object: a reply that large leaves the heap bigger.
            let rss = ProcessMemory.sample(child.pid).rss
            let reader = try bus.connect()
            let managedCPUBefore = ProcessStatistics.sample(child.pid).cpuNanoseconds
            let managedStart = Clock.now
            let managedObjects: Message
            do {
                let request = try Message.methodCall(
                    destination: NetActivityBus.name, path: NetActivityBus.path, interface: .objectManager,
                    member: "GetManagedObjects")
                managedObjects = try reader.call(request, timeout: .seconds(60))
            } catch {
                throw BenchError("GetManagedObjects failed: \(error)")
            }
            let managedObjectsNanoseconds = Clock.now - managedStart
            let managedObjectsCPU = ProcessStatistics.sample(child.pid).cpuNanoseconds - managedCPUBefore
            let relayNanoseconds = try Scale.relay(managedObjects, on: bus)
            // Before one owner leaves: with every activity still live.
            let watch = try watch(self)

            var releaseNanoseconds: UInt64?
            let perOwner = live / owners.count
            if perOwner == NetActivityBus.Limits.activitiesPerOwner {
                var leaving: Connection? = owners.removeLast().connection
                releaseNanoseconds = try Scale.release(&leaving, activities: perOwner, watchedOn: bus)
            }
            return ScaleFigures(
                live: live, connections: owners.count + (releaseNanoseconds == nil ? 0 : 1),
                beginNanoseconds: beginNanoseconds, rss: rss, managedObjectsNanoseconds: managedObjectsNanoseconds,
                managedObjectsCPU: managedObjectsCPU, relayNanoseconds: relayNanoseconds,
                releaseNanoseconds: releaseNanoseconds, updates: updates, watch: watch)
        }
    }

    /// Sends `reply`'s arguments as a signal from one client to another and times it from the
    /// send until the receiver has the whole message, checked by its libdbus as any reply is.
    fileprivate static func relay(_ reply: Message, on bus: Bus) throws(BenchError) -> UInt64 {
        let sender = try bus.connect()
        let receiver = try bus.connect()
        let signal: Message
        do {
            try receiver.addMatch("type='signal',sender='\(sender.uniqueName)',member='Relay'")
            _ = try receiver.call(try Calls.pingBus())
            signal = try Message.signal(
                path: "/io/github/netactivity/Bench", interface: "io.github.netactivity.Bench", member: "Relay",
                arguments: try reply.arguments())
        } catch {
            throw BenchError("preparing the relay failed: \(error)")
        }
        let start = Clock.now
        // The sender's socket takes a fraction of 40 MB at a time: another thread writes the
        // rest while this one reads.
        let writing = Flusher(sender, signal)
        defer { writing.join() }
        while let message = receiver.readMessage(timeout: .seconds(30)) {
            if message.member?.rawValue == "Relay" { return Clock.now - start }
        }
        throw BenchError("the relayed reply did not arrive within 30 s")
    }

    /// Closes `owner`'s connection and times until a watcher has seen every InterfacesRemoved
    /// and then the Count that follows them.
    fileprivate static func release(
        _ owner: inout Connection?, activities: Int, watchedOn bus: Bus
    ) throws(BenchError) -> UInt64 {
        let watcher = try bus.connect()
        do {
            try watcher.addMatch("type='signal',sender='\(NetActivityBus.name)'")
            _ = try watcher.call(try Calls.pingBus())
        } catch {
            throw BenchError("watching the release failed: \(error)")
        }
        let start = Clock.now
        owner = nil  // closes the connection: the bus tells the service it left
        var removed = 0
        while let message = watcher.readMessage(timeout: .seconds(10)) {
            if message.member?.rawValue == "InterfacesRemoved" { removed += 1 }
            if removed == activities, Calls.count(in: message) != nil { return Clock.now - start }
        }
        throw BenchError("the release of \(activities) activities was not seen within 10 s (\(removed) removed)")
    }

}

/// Sends a message and writes it out on a thread of its own.
private final class Flusher: @unchecked Sendable {
    private let connection: Connection
    private let message: Message
    private var thread = pthread_t()

    init(_ connection: Connection, _ message: Message) {
        self.connection = connection
        self.message = message
        let box = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { box in
            let flusher = Unmanaged<Flusher>.fromOpaque(box!).takeRetainedValue()
            _ = try? flusher.connection.send(flusher.message)
            flusher.connection.flush()
            return nil
        }, box)
    }

    func join() { pthread_join(thread, nil) }
}

/// A connection subscribed to every signal of the service, read on a thread of its own, that
/// adds up the bytes it receives.
private final class Watcher: @unchecked Sendable {
    private let connection: Connection
    private let bytes = Atomic<Int>(0)
    private let signals = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private var thread = pthread_t()

    init(bus: Bus) throws(BenchError) {
        connection = try bus.connect()
        do {
            try connection.addMatch("type='signal',sender='\(NetActivityBus.name)'")
        } catch {
            throw BenchError("AddMatch failed: \(error)")
        }
        let box = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { box in
            let watcher = Unmanaged<Watcher>.fromOpaque(box!).takeRetainedValue()
            watcher.read()
            return nil
        }, box)
    }

    private func read() {
        while !stopping.load(ordering: .acquiring) {
            if let message = connection.readMessage(timeout: .milliseconds(20)), message.kind == .signal {
                bytes.add(message.wireSize, ordering: .relaxed)
                signals.add(1, ordering: .relaxed)
            }
        }
    }

    /// Stops reading; returns the bytes and the signals received.
    func stop() -> (bytes: Int, signals: Int) {
        stopping.store(true, ordering: .releasing)
        pthread_join(thread, nil)
        return (bytes.load(ordering: .relaxed), signals.load(ordering: .relaxed))
    }
}
