import DBus
import NetActivityContract
import PrivateBusLauncher
#if canImport(Glibc)
import Glibc
#endif

/// The calls a throughput measurement repeats.
enum Workload {
    /// Push, Pop, Push, Pop, … in sending order (so pipelined calls keep the counter within
    /// one of where it started).
    case pushPop
    /// BeginActivity("…") then EndActivity(its id), per lane.
    case beginEnd
    /// BeginActivity("…") once per lane, then UpdateActivity on it with the bytes growing, so
    /// every update moves its progress (and, from interface version 3, its Fraction and Rate).
    case update
}

/// What one measured window saw.
struct WindowResult {
    var calls = 0
    var nanoseconds: UInt64 = 0
    var errors = 0
    var signals = 0
    var serviceCPU: UInt64 = 0
    var busCPU: UInt64 = 0
    /// CPU the driver's client spent (the same client for every contender).
    var clientCPU: UInt64 = 0
    /// Context switches of the service (voluntary + not) in the window.
    var serviceSwitches: UInt64 = 0
    /// The contender's process id, to match profiler output to the figures.
    var pid: Int32 = 0

    var callsPerSecond: Double { nanoseconds == 0 ? 0 : Double(calls) * 1e9 / Double(nanoseconds) }
    var serviceMicrosecondsPerCall: Double { calls == 0 ? 0 : Double(serviceCPU) / 1e3 / Double(calls) }
    var busMicrosecondsPerCall: Double { calls == 0 ? 0 : Double(busCPU) / 1e3 / Double(calls) }
    var signalsPerCall: Double { calls == 0 ? 0 : Double(signals) / Double(calls) }
    var clientMicrosecondsPerCall: Double { calls == 0 ? 0 : Double(clientCPU) / 1e3 / Double(calls) }
    var switchesPerCall: Double { calls == 0 ? 0 : Double(serviceSwitches) / Double(calls) }
}

/// One client connection driving a workload with a fixed number of calls in flight, built on
/// the DBus layer's plain send and readMessage (no event loop), the same for every contender.
/// The connection is subscribed to the object's PropertiesChanged, as a panel would be, so
/// every signal the contender sends is delivered and counted.
final class CallLoop {
    private let connection: Connection
    private let workload: Workload
    private let inFlight: Int
    private var nextIsPush = true
    // Per lane: the id to end next, or nil when the lane begins next (beginEnd only).
    private var lanes: [ActivityLane]
    private var laneOfSerial: [UInt32: Int] = [:]
    private var outstanding = 0
    private var completed = 0
    private var errors = 0
    private var signals = 0
    private var failure: BusError?

    private enum ActivityLane {
        case begin
        case end(UInt32)
        case update(UInt32, completed: UInt64)
    }

    /// The total every update reports: never reached within a run.
    static let updateTotal: UInt64 = 1 << 50

    init(connection: Connection, workload: Workload, inFlight: Int) throws(BenchError) {
        self.connection = connection
        self.workload = workload
        self.inFlight = inFlight
        lanes = Array(repeating: .begin, count: inFlight)
        do {
            try connection.addMatch(Calls.propertiesChangedRule)
        } catch {
            throw BenchError("AddMatch failed: \(error)")
        }
    }

    /// Runs `warmup` nanoseconds, then measures a window of about `window` nanoseconds, sampling
    /// the CPU time of `service` and `bus` at its edges. The window ends when every call sent
    /// in it has its reply.
    func measure(warmup: UInt64, window: UInt64, service: Int32, bus: Int32) throws(BenchError) -> WindowResult {
        try run(for: warmup)
        try drain()
        completed = 0
        errors = 0
        signals = 0
        let serviceStart = ProcessStatistics.sample(service)
        let serviceBefore = serviceStart.cpuNanoseconds
        let busBefore = ProcessStatistics.sample(bus).cpuNanoseconds
        let clientBefore = ProcessStatistics.sample(getpid()).cpuNanoseconds
        let start = Clock.now
        try run(for: window)
        try drain()
        let end = Clock.now
        let clientCPU = ProcessStatistics.sample(getpid()).cpuNanoseconds - clientBefore
        let serviceEnd = ProcessStatistics.sample(service)
        return WindowResult(
            calls: completed, nanoseconds: end - start, errors: errors, signals: signals,
            serviceCPU: serviceEnd.cpuNanoseconds - serviceBefore,
            busCPU: ProcessStatistics.sample(bus).cpuNanoseconds - busBefore, clientCPU: clientCPU,
            serviceSwitches: serviceEnd.contextSwitches - serviceStart.contextSwitches, pid: service)
    }

    // MARK: - Driving

    private func run(for nanoseconds: UInt64) throws(BenchError) {
        let deadline = Clock.now + nanoseconds
        var turns = 0
        while true {
            while outstanding < inFlight { try sendNext(lane: laneToFill()) }
            try receive()
            turns += 1
            if turns & 31 == 0, Clock.now >= deadline { return }
        }
    }

    /// Reads until every sent call has its reply.
    private func drain() throws(BenchError) {
        while outstanding > 0 { try receive() }
    }

    private var freeLanes: [Int] = []
    private var freeLanesInitialised = false

    private func laneToFill() -> Int {
        if !freeLanesInitialised {
            freeLanes = Array((0..<inFlight).reversed())
            freeLanesInitialised = true
        }
        return freeLanes.popLast() ?? 0
    }

    private func sendNext(lane: Int) throws(BenchError) {
        let message: Message
        do {
            switch workload {
            case .pushPop:
                message = nextIsPush ? try Calls.push() : try Calls.pop()
                nextIsPush.toggle()
            case .beginEnd, .update:
                switch lanes[lane] {
                case .begin: message = try Calls.begin()
                case .end(let id): message = try Calls.end(id)
                case .update(let id, let completed):
                    message = try Calls.call(
                        NetActivityBus.Member.updateActivity,
                        [.uint32(id), .uint64(completed + 1_000), .uint64(Self.updateTotal)])
                }
            }
            let serial = try connection.send(message)
            laneOfSerial[serial] = lane
        } catch {
            throw BenchError("sending a call failed: \(error)")
        }
        outstanding += 1
    }

    /// Takes the next incoming message: a reply frees its lane, a signal is counted.
    private func receive() throws(BenchError) {
        guard let message = connection.readMessage(timeout: .seconds(10)) else {
            throw BenchError("no reply within 10 s (\(outstanding) calls outstanding)")
        }
        switch message.kind {
        case .signal:
            if message.member?.rawValue == "PropertiesChanged" { signals += 1 }
        case .methodReturn, .error:
            guard let lane = laneOfSerial.removeValue(forKey: message.replySerial) else { return }
            outstanding -= 1
            completed += 1
            freeLanes.append(lane)
            if message.kind == .error {
                errors += 1
                lanes[lane] = .begin
            } else if workload == .beginEnd {
                switch lanes[lane] {
                case .begin:
                    // dbus-test-tool echo answers with no id; End(0) keeps the traffic the same.
                    let id = (try? message.arguments())?.first?.uint32 ?? 0
                    lanes[lane] = .end(id)
                case .end, .update:
                    lanes[lane] = .begin
                }
            } else if workload == .update {
                switch lanes[lane] {
                case .begin, .end:
                    lanes[lane] = .update((try? message.arguments())?.first?.uint32 ?? 0, completed: 0)
                case .update(let id, let completed):
                    lanes[lane] = .update(id, completed: completed + 1_000)
                }
            }
        default:
            break
        }
    }
}

/// The calls and match rules the benchmark sends.
enum Calls {
    static let propertiesChangedRule =
        "type='signal',sender='\(NetActivityBus.name)',path='\(NetActivityBus.path)',"
        + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"

    static func call(_ member: MemberName, _ arguments: [Value] = []) throws(BusError) -> Message {
        try Message.methodCall(
            destination: NetActivityBus.name, path: NetActivityBus.path, interface: NetActivityBus.interface,
            member: member, arguments: arguments)
    }

    static func push() throws(BusError) -> Message { try call(NetActivityBus.Member.push) }
    static func pop() throws(BusError) -> Message { try call(NetActivityBus.Member.pop) }
    static func begin(_ label: String = "bench download") throws(BusError) -> Message {
        try call(NetActivityBus.Member.beginActivity, [.string(label)])
    }
    static func end(_ id: UInt32) throws(BusError) -> Message { try call(NetActivityBus.Member.endActivity, [.uint32(id)]) }

    /// The bus's own Peer.Ping.
    static func pingBus() throws(BusError) -> Message {
        try Message.methodCall(
            destination: .bus, path: "/org/freedesktop/DBus", interface: .peer, member: "Ping")
    }

    /// Calls `message` and waits for its reply; an error reply is thrown.
    static func roundTrip(_ connection: Connection, _ message: Message) throws(BenchError) {
        do {
            _ = try connection.call(message, timeout: .seconds(10))
        } catch {
            throw BenchError("\(message.member?.rawValue ?? "call") failed: \(error)")
        }
    }

    /// The value of `Active` a PropertiesChanged carries, if it carries one.
    static func active(in message: Message) -> Bool? {
        guard message.kind == .signal, message.member?.rawValue == "PropertiesChanged",
            let arguments = try? message.arguments(), arguments.count >= 2,
            let entries = arguments[1].stringKeyedEntries
        else { return nil }
        return entries[NetActivityInterface.active.name.rawValue]?.unwrapped?.bool
    }

    /// The value of `Count` a PropertiesChanged carries, if it carries one.
    static func count(in message: Message) -> UInt32? {
        guard message.kind == .signal, message.member?.rawValue == "PropertiesChanged",
            let arguments = try? message.arguments(), arguments.count >= 2,
            let entries = arguments[1].stringKeyedEntries
        else { return nil }
        return entries[NetActivityInterface.count.name.rawValue]?.unwrapped?.uint32
    }

    /// A call to the service, its failure to build as a `BenchError`.
    static func checked(_ member: MemberName, _ arguments: [Value]) throws(BenchError) -> Message {
        do {
            return try Calls.call(member, arguments)
        } catch {
            throw BenchError("building \(member) failed: \(error)")
        }
    }

    /// Sends every message, then collects their replies in order; an error reply is thrown.
    static func pipeline(_ connection: Connection, _ messages: [Message]) throws(BenchError) -> [Message] {
        var serials: [UInt32: Int] = [:]
        do {
            for (index, message) in messages.enumerated() { serials[try connection.send(message)] = index }
        } catch {
            throw BenchError("sending failed: \(error)")
        }
        connection.flush()
        var replies = [Message?](repeating: nil, count: messages.count)
        while !serials.isEmpty {
            guard let reply = connection.readMessage(timeout: .seconds(30)) else {
                throw BenchError("\(serials.count) replies did not come within 30 s")
            }
            guard let index = serials.removeValue(forKey: reply.replySerial) else { continue }
            if let error = reply.error { throw BenchError("call refused: \(error)") }
            replies[index] = reply
        }
        return replies.compactMap { $0 }
    }
}
