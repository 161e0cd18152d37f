import DBus
import NetActivityContract
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One row of the scale table: the service with `live` activities.
struct ScaleFigures {
    var live: Int
    var connections: Int
    /// Beginning all of them, pipelined from every connection in turn.
    var beginNanoseconds: UInt64
    var updates: Int
    var updateNanoseconds: UInt64
    var serviceCPU: UInt64
    /// Bytes a watcher subscribed to every signal of the service received for the updates.
    var watcherBytes: Int
    var rss: UInt64
    var managedObjectsNanoseconds: UInt64
    /// One owner with 1,024 activities leaving: until the watcher has every InterfacesRemoved
    /// and the new Count.
    var releaseNanoseconds: UInt64?

    var updatesPerSecond: Double { Double(updates) / (Double(updateNanoseconds) / 1e9) }
    var cpuPerUpdate: Double { Double(serviceCPU) / Double(max(updates, 1)) }
    var bytesPerUpdate: Double { Double(watcherBytes) / Double(max(updates, 1)) }
}

/// `UpdateActivity` with 1 to 65,536 live activities (256-byte labels): what one change costs
/// the service and each watcher must not grow with the number of activities.
enum Scale {
    static let rows: [(live: Int, connections: Int)] = [(1, 1), (1_024, 1), (16 * 1_024, 16), (64 * 1_024, 64)]
    static let inFlight = 32
    static let label = String(repeating: "x", count: NetActivityBus.Limits.labelBytes)

    static func measure(service path: String, on bus: Bus, seconds: Int, wrapper: [String]) throws(BenchError) -> [ScaleFigures] {
        try rows.map { row throws(BenchError) in
            try measure(service: path, live: row.live, connections: row.connections, on: bus, seconds: seconds, wrapper: wrapper)
        }
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

        let watcher = try Watcher(bus: bus)
        let cpuBefore = ProcessStats.sample(child.pid).cpuNanoseconds
        let updateStart = Clock.now
        let deadline = updateStart + UInt64(seconds) * 1_000_000_000
        var updates = 0
        var round: UInt64 = 0
        // Every activity in turn, 32 calls in flight from its owner, so each update is a change
        // of its own: the 1-activity row updates one object over and over, the others each once
        // per pass.
        var cursor = owners.map { _ in 0 }
        var owner = 0
        while Clock.now < deadline {
            let (connection, ids) = owners[owner]
            var batch: [Message] = []
            for _ in 0..<inFlight {
                let id = ids[cursor[owner]]
                cursor[owner] = (cursor[owner] + 1) % ids.count
                if cursor[owner] == 0 { round += 1 }
                batch.append(try Calls.checked(NetActivityBus.Member.updateActivity, [.uint32(id), .uint64(round * 1_000 + UInt64(updates % 1_000)), .uint64(1 << 40)]))
                updates += 1
            }
            _ = try Calls.pipeline(connection, batch)
            owner = (owner + 1) % owners.count
        }
        let updateNanoseconds = Clock.now - updateStart
        let serviceCPU = ProcessStats.sample(child.pid).cpuNanoseconds - cpuBefore
        // The last throttled values go out by the end of their window.
        Clock.sleep(milliseconds: 200)
        let watcherBytes = watcher.stop()
        let rss = Memory.sample(child.pid).rss

        let reader = try bus.connect()
        let managedStart = Clock.now
        do {
            let request = try Message.methodCall(
                destination: NetActivityBus.name, path: NetActivityBus.path, interface: .objectManager,
                member: "GetManagedObjects")
            _ = try reader.call(request, timeout: .seconds(60))
        } catch {
            throw BenchError("GetManagedObjects failed: \(error)")
        }
        let managedObjectsNanoseconds = Clock.now - managedStart

        var releaseNanoseconds: UInt64?
        if perOwner == NetActivityBus.Limits.activitiesPerOwner {
            var leaving: Connection? = owners.removeLast().connection
            releaseNanoseconds = try release(&leaving, activities: perOwner, watchedOn: bus)
        }
        return ScaleFigures(
            live: live, connections: count, beginNanoseconds: beginNanoseconds, updates: updates,
            updateNanoseconds: updateNanoseconds, serviceCPU: serviceCPU, watcherBytes: watcherBytes, rss: rss,
            managedObjectsNanoseconds: managedObjectsNanoseconds, releaseNanoseconds: releaseNanoseconds)
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
