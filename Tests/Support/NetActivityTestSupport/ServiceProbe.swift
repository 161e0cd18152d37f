import BusTestSupport
import DBus
import NetActivity
import NetActivityContract

/// A client connection of a test's own, without an event loop: calls block, and the messages
/// it receives (signals, replies) are read in arrival order. Used to check what the service
/// really holds and what it announces.
///
/// Not for use from two threads at once.
public final class ServiceProbe: @unchecked Sendable {
    public let connection: Connection

    public init(address: String) throws {
        connection = try Connection(.address(address))
    }

    /// The probe's unique name on the bus.
    public var uniqueName: String { connection.uniqueName.rawValue }

    // MARK: - Calls

    /// A method call to the service's name.
    public static func methodCall(
        _ member: MemberName, _ arguments: [Value] = [], interface: InterfaceName? = NetActivityBus.interface,
        path: ObjectPath = NetActivityBus.path
    ) throws -> Message {
        try Message.methodCall(
            destination: NetActivityBus.name, path: path, interface: interface, member: member, arguments: arguments)
    }

    /// Calls a method of the service and returns the reply's arguments.
    ///
    /// - Throws: an error reply as `BusError`; `BusError` `NoReply` after `timeout`.
    @discardableResult
    public func call(
        _ member: MemberName, _ arguments: [Value] = [], interface: InterfaceName? = NetActivityBus.interface,
        path: ObjectPath = NetActivityBus.path, timeout: Duration = .seconds(30)
    ) throws -> [Value] {
        try connection.call(Self.methodCall(member, arguments, interface: interface, path: path), timeout: timeout)
            .arguments()
    }

    /// `BeginActivity(label)`: the new activity's id, owned by this probe.
    public func begin(_ label: String) throws -> UInt32 {
        guard let id = try call("BeginActivity", [.string(label)]).first?.uint32 else {
            throw BusTestError("BeginActivity returned no id")
        }
        return id
    }

    /// `org.freedesktop.DBus.Peer.Ping` on the service object.
    public func ping() throws {
        try call("Ping", interface: .peer)
    }

    /// The introspection XML of `path` on the service.
    public func introspect(_ path: ObjectPath) throws -> String {
        guard let xml = try call("Introspect", interface: .introspectable, path: path).first?.string else {
            throw BusTestError("Introspect of \(path) returned no string")
        }
        return xml
    }

    /// The process id behind a unique bus name.
    public func processID(of name: String) throws -> UInt32 {
        try connection.processID(of: BusName(unchecked: name))
    }

    // MARK: - Properties

    /// One property of the service's interface, variant unwrapped.
    public func property(_ name: String) throws -> Value {
        let reply = try call("Get", [.string(NetActivityBus.interface.rawValue), .string(name)], interface: .properties)
        guard let value = reply.first?.unwrapped else { throw BusTestError("Get \(name) gave \(reply)") }
        return value
    }

    /// `Count`, a `u`.
    public func count() throws -> UInt32 {
        guard let count = try property("Count").uint32 else { throw BusTestError("Count is not a u") }
        return count
    }

    /// `Progress`, a `d`.
    public func progress() throws -> Double {
        guard let progress = try property("Progress").double else { throw BusTestError("Progress is not a d") }
        return progress
    }

    /// A `b` property (`Active`, `Visible`).
    public func boolProperty(_ name: String) throws -> Bool {
        guard let value = try property(name).bool else { throw BusTestError("\(name) is not a b") }
        return value
    }

    /// `Activities`, checked to be an `a(ussttt)`.
    public func activities() throws -> [ActivityInfo] {
        try decodeActivities(property("Activities"))
    }

    /// Every live activity object's properties (variants unwrapped), by label, from
    /// `GetManagedObjects`: what a version 3 service publishes beyond `Activities`.
    public func activityObjects() throws -> [String: [String: Value]] {
        let reply = try call("GetManagedObjects", interface: .objectManager)
        var result: [String: [String: Value]] = [:]
        for object in reply.first?.elements ?? [] {
            guard case .dictEntry(_, let interfaces) = object,
                let properties = interfaces.stringKeyedEntries?[NetActivityBus.activityInterface.rawValue]?
                    .stringKeyedEntries?.compactMapValues(\.unwrapped),
                let label = properties["Label"]?.string
            else { continue }
            result[label] = properties
        }
        return result
    }

    /// The service's activity labelled `label`, if there is exactly one.
    public func activity(_ label: String) throws -> ActivityInfo? {
        let matching = try activities().filter { $0.label == label }
        return matching.count == 1 ? matching[0] : nil
    }

    // MARK: - Sending now, reading later

    /// Sends a call to the service without waiting; its reply is read later (`nextMessage`,
    /// `replies(to:)`). Returns the call's serial.
    @discardableResult
    public func send(_ member: MemberName, _ arguments: [Value] = []) throws -> UInt32 {
        try connection.send(Self.methodCall(member, arguments))
    }

    /// Sends every message, then reads until each has its reply (a method return or an error);
    /// returns the replies in sending order. Other messages read meanwhile are dropped.
    ///
    /// - Throws: `BusTestError` if some reply is missing after `timeout`, or the bus went away.
    public func pipeline(_ messages: [Message], timeout: Duration = .seconds(60)) throws -> [Message] {
        let serials = try messages.map { try connection.send($0) }
        connection.flush()
        return try replies(to: serials, timeout: timeout)
    }

    /// Sends one call per member, all before reading any reply (one burst the service reads in
    /// one go), and returns the replies in sending order.
    public func sendAll(_ members: [MemberName], timeout: Duration = .seconds(60)) throws -> [Message] {
        try pipeline(members.map { try Self.methodCall($0) }, timeout: timeout)
    }

    /// Sends `count` identical calls before reading any reply, in batches that stay under the
    /// bus's limit on pending replies per connection, and returns the replies in sending order.
    public func pipelined(
        _ member: MemberName, _ arguments: [Value] = [], count: Int, batch: Int = 4_096
    ) throws -> [Message] {
        var replies: [Message] = []
        replies.reserveCapacity(count)
        var remaining = count
        while remaining > 0 {
            let size = min(batch, remaining)
            let calls = try (0..<size).map { _ in try Self.methodCall(member, arguments) }
            replies += try pipeline(calls, timeout: .seconds(120))
            remaining -= size
        }
        return replies
    }

    /// Reads until every call in `serials` has its reply; returns them in the order of `serials`.
    /// Other messages read meanwhile are dropped.
    public func replies(to serials: [UInt32], timeout: Duration) throws -> [Message] {
        var position = [UInt32: Int](uniqueKeysWithValues: serials.enumerated().map { ($1, $0) })
        var replies = [Message?](repeating: nil, count: serials.count)
        let deadline = ContinuousClock.now + timeout
        while !position.isEmpty {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, let message = nextMessage(timeout: left) else {
                guard connection.isConnected else {
                    throw BusTestError("disconnected from the bus with \(position.count) replies missing")
                }
                throw BusTestError("\(position.count) of \(serials.count) replies missing after \(timeout)")
            }
            guard message.kind == .methodReturn || message.kind == .error,
                let index = position.removeValue(forKey: message.replySerial)
            else { continue }
            replies[index] = message
        }
        return replies.compactMap { $0 }
    }

    /// The next incoming message (signal, reply, error), or nil after `timeout`.
    public func nextMessage(timeout: Duration = .seconds(5)) -> Message? {
        connection.readMessage(timeout: timeout)
    }

    // MARK: - Signals

    /// Subscribes to the service's PropertiesChanged signals.
    public func subscribe() throws {
        try connection.addMatch(
            "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                + "path='\(NetActivityBus.path)'")
    }

    /// The changed properties of the next PropertiesChanged signal, skipping other messages;
    /// nil if none arrives within `timeout`.
    public func nextPropertiesChanged(timeout: Duration = .seconds(5)) -> [String: Value]? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let message = nextMessage(timeout: ContinuousClock.now.duration(to: deadline)) else { return nil }
            if let changed = serviceProperties(in: message) { return changed }
        }
        return nil
    }

    /// Collects every PropertiesChanged signal that arrives within `duration`.
    public func collectPropertiesChanged(for duration: Duration) -> [[String: Value]] {
        var collected: [[String: Value]] = []
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if let changed = nextPropertiesChanged(timeout: ContinuousClock.now.duration(to: deadline)) {
                collected.append(changed)
            }
        }
        return collected
    }

    /// The next PropertiesChanged for which `matches` holds, skipping others.
    ///
    /// - Throws: `BusTestError` naming what it saw if none arrives within `timeout`.
    public func waitForSignal(timeout: Duration, _ matches: ([String: Value]) -> Bool) throws -> [String: Value] {
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

    /// Sends a call to the service and reads every message up to its reply: what this client
    /// saw of the call, in wire order.
    ///
    /// - Throws: `BusTestError` if no reply arrives within `timeout`.
    public func exchange(_ member: MemberName, _ arguments: [Value] = [], timeout: Duration = .seconds(30)) throws
        -> SignalExchange
    {
        let serial = try send(member, arguments)
        connection.flush()
        var signals: [[String: Value]] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let message = nextMessage(timeout: ContinuousClock.now.duration(to: deadline)) else { break }
            if let changed = serviceProperties(in: message) {
                signals.append(changed)
            } else if message.replySerial == serial, message.kind == .methodReturn || message.kind == .error {
                return SignalExchange(signalsBefore: signals, reply: message, probe: self)
            }
        }
        throw BusTestError("no reply to \(member) within \(timeout); signals so far: \(signals)")
    }
}

/// What one client saw of a call it sent: the PropertiesChanged signals that arrived before the
/// reply (in order), and the reply.
public struct SignalExchange {
    public var signalsBefore: [[String: Value]]
    public var reply: Message
    fileprivate let probe: ServiceProbe

    /// The PropertiesChanged signals that arrive within `duration` after the reply.
    public func signalsAfter(within duration: Duration) -> [[String: Value]] {
        probe.collectPropertiesChanged(for: duration)
    }
}

// MARK: - Reading the service's messages

/// The changed properties of a PropertiesChanged signal from the service's interface, variants
/// unwrapped, each invalidated property as `invalidated`; nil for any other message.
public func serviceProperties(in message: Message) -> [String: Value]? {
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
public let invalidated = Value.string("(invalidated)")

/// Decodes an `Activities` value, `a(ussttt)`.
///
/// - Throws: `BusTestError` naming the signature or the element that does not fit.
public func decodeActivities(_ value: Value) throws -> [ActivityInfo] {
    guard value.signature == "a(ussttt)", let elements = value.elements else {
        throw BusTestError("Activities has signature '\(value.signature)', not 'a(ussttt)': \(value)")
    }
    return try elements.map { element in
        guard let activity = ActivityInfo(element) else { throw BusTestError("malformed entry in Activities: \(element)") }
        return activity
    }
}

/// The ids in an `Activities` value, `a(ussttt)`; nil if it is not one.
public func activityIDs(in value: Value?) -> [UInt32]? {
    guard let value, value.signature == "a(ussttt)", let elements = value.elements else { return nil }
    return elements.compactMap { $0.fields?.first?.uint32 }
}
