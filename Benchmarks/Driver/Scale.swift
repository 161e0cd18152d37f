import DBus
import NetActivityContract
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Which activities a run of `UpdateActivity` calls goes to.
enum UpdatePattern: Equatable {
    /// Every live activity in turn: each update is the first change of its object in its
    /// throttle window, so each sends a `PropertiesChanged` of its own.
    case everyActivityInTurn
    /// One activity over and over while the others stay live: what holding them costs a change.
    case oneActivity
}

/// The service holding `live` activities: what beginning, holding, listing and releasing
/// them costs.
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
}

/// A run of `UpdateActivity` calls against the service.
struct UpdateFigures {
    var live: Int
    var pattern: UpdatePattern
    var updates: Int
    var nanoseconds: UInt64
    var serviceCPU: UInt64
    /// Bytes a watcher subscribed to every signal of the service received for the updates.
    var watcherBytes: Int

    var perSecond: Double { Double(updates) / (Double(nanoseconds) / 1e9) }
    var cpuPerUpdate: Double { Double(serviceCPU) / Double(max(updates, 1)) }
    var bytesPerUpdate: Double { Double(watcherBytes) / Double(max(updates, 1)) }
}

/// `UpdateActivity` with 1 to 65,536 live activities (256-byte labels): what one change costs
/// the service and each watcher must not grow with the number of activities.
///
/// A change costs the service a reply and, unless the throttle merges it, a signal. So each
/// run is compared with one that sends as many signals per update: updates to one of the
/// activities (merged by its throttle) with the 1-activity row, updates to each in turn (a
/// signal each) with the 1,024 row, the fewest activities at which every update is the first
/// of its object's window. What remains between the two is what the other live activities cost.
enum Scale {
    static let rows: [(live: Int, connections: Int)] = [(1, 1), (1_024, 1), (16 * 1_024, 16), (64 * 1_024, 64)]
    static let inFlight = 32
    static let label = String(repeating: "x", count: NetActivityBus.Limits.labelBytes)

    static func measure(service path: String, on bus: Bus, seconds: Int, wrapper: [String]) throws(BenchError) -> [ScaleFigures] {
        try rows.map { row throws(BenchError) in
            try measure(service: path, live: row.live, connections: row.connections, on: bus, seconds: seconds, wrapper: wrapper)
        }
    }

    /// The run `run` is compared with: for updates to one activity, the 1-activity run; for
    /// updates to each activity in turn, the 1,024-activity one, the fewest at which each
    /// update is a change of its own.
    static func reference(for run: UpdateFigures, in figures: [ScaleFigures]) -> UpdateFigures? {
        let live = run.pattern == .oneActivity ? 1 : 1_024
        return figures.lazy.flatMap(\.updates).first { $0.live == live && $0.pattern == run.pattern }
    }

    private static func measure(
        service path: String, live: Int, connections count: Int, on bus: Bus, seconds: Int, wrapper: [String]
    ) throws(BenchError) -> ScaleFigures {
        let child = try Contender.service(path: path, arguments: []).start(on: bus, wrapper: wrapper)
        defer { try? Contender.stop(child, on: bus) }
        var owners: [(connection: Connection, ids: [UInt32])] = []
        for _ in 0..<count { owners.append((try bus.connect(), [])) }

        let beginStart = Clock.now
        let perOwner = live / count
        for index in owners.indices {
            let begins = try (0..<perOwner).map { _ throws(BenchError) in
                try Calls.checked(NetActivityBus.Member.beginActivity, [.string(label)])
            }
            owners[index].ids = try Calls.pipeline(owners[index].connection, begins)
                .map { reply throws(BenchError) in
                    guard let id = (try? reply.arguments())?.first?.uint32 else { throw BenchError("BeginActivity refused") }
                    return id
                }
        }
        let beginNanoseconds = Clock.now - beginStart
        Clock.sleep(milliseconds: 1_300)

        let patterns: [UpdatePattern] = live == 1 ? [.oneActivity] : [.oneActivity, .everyActivityInTurn]
        var updates: [UpdateFigures] = []
        for pattern in patterns {
            updates.append(
                try update(owners, pattern, seconds: seconds, service: child, on: bus))
        }
        let rss = Memory.sample(child.pid).rss

        let reader = try bus.connect()
        let managedCPUBefore = ProcessStats.sample(child.pid).cpuNanoseconds
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
        let managedObjectsCPU = ProcessStats.sample(child.pid).cpuNanoseconds - managedCPUBefore
        let relayNanoseconds = try relay(managedObjects, on: bus)

        var releaseNanoseconds: UInt64?
        if perOwner == NetActivityBus.Limits.activitiesPerOwner {
            var leaving: Connection? = owners.removeLast().connection
            releaseNanoseconds = try release(&leaving, activities: perOwner, watchedOn: bus)
        }
        return ScaleFigures(
            live: live, connections: count, beginNanoseconds: beginNanoseconds, rss: rss,
            managedObjectsNanoseconds: managedObjectsNanoseconds, managedObjectsCPU: managedObjectsCPU,
            relayNanoseconds: relayNanoseconds,
            releaseNanoseconds: releaseNanoseconds,
            updates: updates)
    }

    /// `seconds` of `UpdateActivity` calls, 32 in flight from one owner at a time, while a
    /// watcher counts the bytes of every signal.
    private static func update(
        _ owners: [(connection: Connection, ids: [UInt32])], _ pattern: UpdatePattern, seconds: Int, service child: Child,
        on bus: Bus
    ) throws(BenchError) -> UpdateFigures {
        let live = owners.reduce(0) { $0 + $1.ids.count }
        let watcher = try Watcher(bus: bus)
        let cpuBefore = ProcessStats.sample(child.pid).cpuNanoseconds
        let start = Clock.now
        let deadline = start + UInt64(seconds) * 1_000_000_000
        var updates = 0
        var round: UInt64 = 0
        var cursor = owners.map { _ in 0 }
        var owner = 0
        while Clock.now < deadline {
            let (connection, ids) = owners[owner]
            var batch: [Message] = []
            for _ in 0..<inFlight {
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
                batch.append(
                    try Calls.checked(
                        NetActivityBus.Member.updateActivity,
                        [.uint32(id), .uint64(round * 1_000 + UInt64(updates % 1_000)), .uint64(1 << 40)]))
                updates += 1
            }
            _ = try Calls.pipeline(connection, batch)
            if pattern == .everyActivityInTurn { owner = (owner + 1) % owners.count }
        }
        let nanoseconds = Clock.now - start
        let serviceCPU = ProcessStats.sample(child.pid).cpuNanoseconds - cpuBefore
        // The last throttled values go out by the end of their window.
        Clock.sleep(milliseconds: 200)
        return UpdateFigures(
            live: live, pattern: pattern, updates: updates,
            nanoseconds: nanoseconds, serviceCPU: serviceCPU, watcherBytes: watcher.stop())
    }

    /// Sends `reply`'s arguments as a signal from one client to another and times it from the
    /// send until the receiver has the whole message, checked by its libdbus as any reply is.
    private static func relay(_ reply: Message, on bus: Bus) throws(BenchError) -> UInt64 {
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
    private static func release(
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
            }
        }
    }

    /// Stops reading; returns the bytes received.
    func stop() -> Int {
        stopping.store(true, ordering: .releasing)
        pthread_join(thread, nil)
        return bytes.load(ordering: .relaxed)
    }
}
