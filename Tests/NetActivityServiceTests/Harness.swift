import BusTestSupport
import DBus
import Foundation
import NetActivityService

/// A private bus with the real `netactivityd` binary serving on it.
final class ServiceUnderTest: @unchecked Sendable {
    let bus: PrivateBus
    let process: ChildProcess

    /// Starts a bus and `netactivityd --address <bus> <arguments>`, and waits until it owns
    /// its name. Defaults to no throttle and no debounce delays so tests see every change at once.
    init(
        _ arguments: [String] = ["--throttle-ms", "0", "--activation-delay", "0", "--completion-delay", "0"],
        bus: PrivateBus? = nil
    ) throws {
        self.bus = try bus ?? PrivateBus()
        process = try ChildProcess(try builtProduct("netactivityd"), ["--address", self.bus.address] + arguments)
        let probe = try TestClient(address: self.bus.address)
        try waitUntil("netactivityd to own \(NetActivityBus.name)") {
            guard process.isRunning else {
                throw BusTestError("netactivityd exited early: \(process.stderrText)")
            }
            return try probe.connection.owner(of: NetActivityBus.name) != nil
        }
    }

    /// A new client connection to the bus.
    func client() throws -> TestClient {
        try TestClient(address: bus.address)
    }

    /// busctl pointed at this bus.
    func busctl(_ arguments: [String]) throws -> ProcessResult {
        try run("busctl", ["--address=\(bus.address)"] + arguments)
    }

    /// `busctl call` on the service object.
    func busctlCall(_ member: String, _ arguments: [String] = []) throws -> ProcessResult {
        try busctl(["call", NetActivityBus.name.rawValue, NetActivityBus.path.rawValue,
                    NetActivityBus.interface.rawValue, member] + arguments)
    }

    /// `busctl get-property` of one property, e.g. "u 3".
    func busctlProperty(_ name: String) throws -> String {
        let result = try busctl(["get-property", NetActivityBus.name.rawValue, NetActivityBus.path.rawValue,
                                 NetActivityBus.interface.rawValue, name])
        guard result.succeeded else { throw BusTestError("get-property \(name) failed: \(result)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit {
        if process.isRunning { process.send(signal: SIGTERM) }
        _ = try? process.waitForExit(timeout: .seconds(10))
        bus.stop()
    }
}

/// A blocking client connection without an event loop: calls block, signals are read in order.
final class TestClient: @unchecked Sendable {
    let connection: Connection
    /// Messages read while waiting for something else, in arrival order.
    private var backlog: [Message] = []

    init(address: String) throws {
        connection = try Connection(.address(address))
    }

    var uniqueName: String { connection.uniqueName.rawValue }

    /// Calls a method on the service object and returns the reply's arguments.
    @discardableResult
    func call(
        _ member: MemberName, _ arguments: [Value] = [],
        interface: InterfaceName? = NetActivityBus.interface, path: ObjectPath = NetActivityBus.path
    ) throws -> [Value] {
        let message = try Message.methodCall(
            destination: NetActivityBus.name, path: path, interface: interface, member: member,
            arguments: arguments)
        return try connection.call(message, timeout: .seconds(10)).arguments()
    }

    /// Reads a property of the service object.
    func property(_ name: String) throws -> Value {
        let reply = try call(
            "Get", [.string(NetActivityBus.interface.rawValue), .string(name)], interface: .properties)
        guard let value = reply.first?.unwrapped else { throw BusTestError("Get \(name) gave \(reply)") }
        return value
    }

    func count() throws -> UInt32 {
        guard let count = try property("Count").uint32 else { throw BusTestError("Count is not a u") }
        return count
    }

    func begin(_ label: String) throws -> UInt32 {
        guard let id = try call("BeginActivity", [.string(label)]).first?.uint32 else {
            throw BusTestError("BeginActivity returned no id")
        }
        return id
    }

    /// Subscribes to the service's PropertiesChanged signals.
    func subscribe() throws {
        try connection.addMatch(
            "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                + "path='\(NetActivityBus.path)'")
    }

    /// Sends without waiting; the reply (or error) is read later with `nextMessage`.
    @discardableResult
    func send(_ member: MemberName, _ arguments: [Value] = []) throws -> UInt32 {
        try connection.send(
            .methodCall(
                destination: NetActivityBus.name, path: NetActivityBus.path,
                interface: NetActivityBus.interface, member: member, arguments: arguments))
    }

    /// The next incoming message (signal, reply, error), or nil after `timeout`.
    func nextMessage(timeout: Duration = .seconds(5)) -> Message? {
        if !backlog.isEmpty { return backlog.removeFirst() }
        return connection.readMessage(timeout: timeout)
    }

    /// The changed properties of the next PropertiesChanged signal, skipping other messages.
    func nextPropertiesChanged(timeout: Duration = .seconds(5)) -> [String: Value]? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let message = nextMessage(timeout: ContinuousClock.now.duration(to: deadline)) else { return nil }
            guard message.isSignal(.properties, "PropertiesChanged"), message.path == NetActivityBus.path,
                let changed = serviceProperties(in: message)
            else { continue }
            return changed
        }
        return nil
    }

    /// Collects every PropertiesChanged signal that arrives within `duration`.
    func collectPropertiesChanged(for duration: Duration) -> [[String: Value]] {
        var collected: [[String: Value]] = []
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if let changed = nextPropertiesChanged(timeout: ContinuousClock.now.duration(to: deadline)) {
                collected.append(changed)
            }
        }
        return collected
    }
}

/// The service's bus error name for an error thrown by a call, or nil.
func errorName(of body: () throws -> Any) -> String? {
    do {
        _ = try body()
        return nil
    } catch let error as BusError {
        return error.name.rawValue
    } catch {
        return "\(error)"
    }
}

// MARK: - Reading the wire in order (signal, process and departure tests)

/// What one client saw of a call it sent: the PropertiesChanged signals that arrived before the
/// reply (in order), and the reply.
struct SignalExchange {
    var signalsBefore: [[String: Value]]
    var reply: Message
    fileprivate let client: TestClient

    /// The PropertiesChanged signals that arrive within `duration` after the reply.
    func signalsAfter(within duration: Duration) -> [[String: Value]] {
        client.collectPropertiesChanged(for: duration)
    }
}

extension TestClient {
    /// Sends a call to the service and reads every message up to its reply.
    ///
    /// - Throws: `BusTestError` if no reply arrives within `timeout`.
    func exchange(_ member: MemberName, _ arguments: [Value] = [], timeout: Duration = .seconds(30)) throws -> SignalExchange {
        let serial = try send(member, arguments)
        connection.flush()
        var signals: [[String: Value]] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let message = nextMessage(timeout: ContinuousClock.now.duration(to: deadline)) else { break }
            if let changed = serviceProperties(in: message) {
                signals.append(changed)
            } else if message.replySerial == serial, message.kind == .methodReturn || message.kind == .error {
                return SignalExchange(signalsBefore: signals, reply: message, client: self)
            }
        }
        throw BusTestError("no reply to \(member) within \(timeout); signals so far: \(signals)")
    }

    /// Sends every call before reading any reply (one burst the service reads in one go) and
    /// returns the replies in sending order. Signals read meanwhile are dropped.
    func sendAll(_ members: [MemberName], timeout: Duration = .seconds(60)) throws -> [Message] {
        let serials = try members.map { try send($0) }
        connection.flush()
        return try replies(to: serials, timeout: timeout)
    }

    /// Reads until every call in `serials` has its reply; returns them in the order of `serials`.
    /// Other messages read meanwhile are dropped.
    func replies(to serials: [UInt32], timeout: Duration) throws -> [Message] {
        var index = [UInt32: Int](uniqueKeysWithValues: serials.enumerated().map { ($1, $0) })
        var replies = [Message?](repeating: nil, count: serials.count)
        let deadline = ContinuousClock.now + timeout
        while !index.isEmpty {
            guard ContinuousClock.now < deadline,
                let message = nextMessage(timeout: ContinuousClock.now.duration(to: deadline))
            else { throw BusTestError("\(index.count) of \(serials.count) replies missing after \(timeout)") }
            guard message.kind == .methodReturn || message.kind == .error,
                let position = index.removeValue(forKey: message.replySerial)
            else { continue }
            replies[position] = message
        }
        return replies.compactMap { $0 }
    }

    /// The next PropertiesChanged for which `matches` holds, skipping others.
    ///
    /// - Throws: `BusTestError` naming what it saw if none arrives within `timeout`.
    func waitForSignal(
        timeout: Duration, _ matches: ([String: Value]) -> Bool
    ) throws -> [String: Value] {
        var seen: [[String: Value]] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline,
            let changed = nextPropertiesChanged(timeout: ContinuousClock.now.duration(to: deadline))
        {
            if matches(changed) { return changed }
            seen.append(changed)
        }
        throw BusTestError("timed out after \(timeout) waiting for a PropertiesChanged; saw \(seen)")
    }
}

/// The changed properties of a PropertiesChanged signal from the service's interface, variants
/// unwrapped; nil for any other message.
func serviceProperties(in message: Message) -> [String: Value]? {
    guard message.isSignal(.properties, "PropertiesChanged"), message.path == NetActivityBus.path,
        let arguments = try? message.arguments(), arguments.count == 3,
        arguments[0].string == NetActivityBus.interface.rawValue,
        let changed = arguments[1].stringKeyedEntries
    else { return nil }
    var properties = changed.compactMapValues(\.unwrapped)
    for name in arguments[2].elements ?? [] {
        if let name = name.string { properties[name] = invalidated }
    }
    return properties
}

/// Stands for a property named in PropertiesChanged's invalidated list (Activities).
let invalidated = Value.string("(invalidated)")

/// The ids in an `Activities` value, `a(ussttt)`; nil if it is not one.
func activityIDs(in value: Value?) -> [UInt32]? {
    guard let value, value.signature == "a(ussttt)", let elements = value.elements else { return nil }
    return elements.compactMap { $0.fields?.first?.uint32 }
}
