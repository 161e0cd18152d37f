import BusTestSupport
import DBus
import Foundation
import NetActivityContract

/// A client on the `DBus` layer, with no event loop: calls block, and `pipeline` sends a whole
/// batch before reading any reply.
final class RawClient: @unchecked Sendable {
    let connection: Connection

    init(address: String) throws {
        connection = try Connection(.address(address))
    }

    var uniqueName: String { connection.uniqueName.rawValue }

    /// A method call to the service's name.
    static func call(
        _ member: MemberName, _ arguments: [Value] = [], interface: InterfaceName? = NetActivityBus.interface,
        path: ObjectPath = NetActivityBus.path
    ) throws -> Message {
        try Message.methodCall(
            destination: NetActivityBus.name, path: path, interface: interface, member: member, arguments: arguments)
    }

    /// Calls and returns the reply's arguments; an error reply is thrown as `BusError`.
    @discardableResult
    func call(
        _ member: MemberName, _ arguments: [Value] = [], interface: InterfaceName? = NetActivityBus.interface,
        path: ObjectPath = NetActivityBus.path, timeout: Duration = .seconds(30)
    ) throws -> [Value] {
        try connection.call(Self.call(member, arguments, interface: interface, path: path), timeout: timeout)
            .arguments()
    }

    /// Sends every message, then reads until each has its reply (a method return or an error);
    /// returns the replies in sending order. Other messages read meanwhile are dropped.
    ///
    /// - Throws: `BusTestError` if some reply is missing after `timeout`.
    func pipeline(_ messages: [Message], timeout: Duration = .seconds(60)) throws -> [Message] {
        let serials = try messages.map { try connection.send($0) }
        connection.flush()
        var position = [UInt32: Int](uniqueKeysWithValues: serials.enumerated().map { ($1, $0) })
        var replies = [Message?](repeating: nil, count: serials.count)
        let deadline = ContinuousClock.now + timeout
        while !position.isEmpty {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, let message = connection.readMessage(timeout: left) else {
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

    // MARK: - Reading the service

    /// A property of the service's interface.
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

    func activities() throws -> [ActivityInfo] {
        try decodeActivities(property("Activities"))
    }

    /// `org.freedesktop.DBus.Peer.Ping` on the service object.
    func ping() throws {
        try call("Ping", interface: .peer)
    }

    /// Subscribes to the service's PropertiesChanged signals.
    func subscribe() throws {
        try connection.addMatch(
            "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                + "path='\(NetActivityBus.path)'")
    }
}

/// Decodes an `Activities` value, `a(ussttt)`.
func decodeActivities(_ value: Value) throws -> [ActivityInfo] {
    guard value.signature == "a(ussttt)", let elements = value.elements else {
        throw BusTestError("Activities has signature \(value.signature), not a(ussttt)")
    }
    return try elements.map { element in
        guard let activity = ActivityInfo(element) else { throw BusTestError("bad Activities element \(element)") }
        return activity
    }
}

/// The activities with `started` set to 0, to compare with what a test expects.
func withoutStart(_ activities: [ActivityInfo]) -> [ActivityInfo] {
    activities.map { activity in
        var activity = activity
        activity.started = 0
        return activity
    }
}

/// The changed properties of a PropertiesChanged signal from the service's interface,
/// variants unwrapped; nil for any other message.
func serviceProperties(in message: Message) -> [String: Value]? {
    guard message.isSignal(.properties, "PropertiesChanged"), message.path == NetActivityBus.path,
        let arguments = try? message.arguments(), arguments.count == 3,
        arguments[0].string == NetActivityBus.interface.rawValue,
        let changed = arguments[1].stringKeyedEntries
    else { return nil }
    return changed.compactMapValues(\.unwrapped)
}
