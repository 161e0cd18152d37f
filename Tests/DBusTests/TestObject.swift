import BusTestSupport
import DBus
import Foundation

/// A private bus with a test object exported on one connection, answered by an `EventLoop` on
/// a background thread, and a second plain connection (`client`) to call it with.
///
/// Call `stop()` at the end of the test: it stops the loop, waits for its thread and stops
/// the bus.
final class TestObject: @unchecked Sendable {
    static let name: BusName = "io.github.netactivity.Test"
    static let path: ObjectPath = "/io/github/netactivity/Test"
    static let childPath: ObjectPath = "/io/github/netactivity/Test/Child"
    static let interface: InterfaceName = "io.github.netactivity.Test1"
    static let otherInterface: InterfaceName = "io.github.netactivity.Other1"
    static let childInterface: InterfaceName = "io.github.netactivity.Child1"
    static let version = "1.2.3"

    let bus: PrivateBus
    /// The connection the object is exported on; driven by `loopThread`.
    let serverConnection: Connection
    // Only touched on the loop's thread once the loop runs.
    let server: ObjectServer
    let loopThread: RunningLoop
    /// A connection without an event loop, for blocking calls and `readMessage`.
    let client: Connection
    /// The arguments of every `Record` call, in order.
    let recorded = Log<String>()
    /// The message of every `Keep` call, kept past the handler.
    let kept = Log<Message>()

    init() throws {
        bus = try PrivateBus()
        do {
            serverConnection = try Connection(.address(bus.address))
            _ = try serverConnection.requestName(Self.name, options: .doNotQueue)
            server = ObjectServer(connection: serverConnection)
            server.export([Self.testInterface(recorded, kept), Self.otherInterfaceTable], at: Self.path)
            server.export([Interface(Self.childInterface)], at: Self.childPath)
            let loop = try EventLoop()
            loop.attach(serverConnection)
            loopThread = try RunningLoop(loop, name: "test object loop")
            client = try Connection(.address(bus.address))
        } catch {
            bus.stop()
            throw error
        }
    }

    /// Stops the loop and the bus.
    func stop() {
        try? loopThread.stop()
        bus.stop()
    }

    // MARK: - Calling

    /// A method call to the test object.
    func methodCall(
        _ member: MemberName, interface: InterfaceName? = TestObject.interface,
        path: ObjectPath = TestObject.path, _ arguments: [Value] = []
    ) throws -> Message {
        try Message.methodCall(
            destination: Self.name, path: path, interface: interface, member: member, arguments: arguments)
    }

    /// Calls the test object from `client` and returns the reply's arguments.
    func call(
        _ member: MemberName, interface: InterfaceName? = TestObject.interface,
        path: ObjectPath = TestObject.path, _ arguments: [Value] = []
    ) throws -> [Value] {
        try client.call(methodCall(member, interface: interface, path: path, arguments), timeout: .seconds(10))
            .arguments()
    }

    /// Calls the test object and returns the error reply; nil (after recording an issue) if
    /// the call succeeded.
    func callFailing(
        _ member: MemberName, interface: InterfaceName? = TestObject.interface,
        path: ObjectPath = TestObject.path, _ arguments: [Value] = []
    ) throws -> BusError? {
        let message = try methodCall(member, interface: interface, path: path, arguments)
        do {
            let reply = try client.call(message, timeout: .seconds(10))
            return reply.error
        } catch {
            return error
        }
    }

    /// The output of a foreign client (`busctl`, `dbus-send`) pointed at this bus.
    func runTool(_ tool: String, _ arguments: [String]) throws -> ProcessResult {
        try requireTool(tool)
        let addressFlag = tool == "dbus-send" ? "--bus=\(bus.address)" : "--address=\(bus.address)"
        return try run(tool, [addressFlag] + arguments, timeout: .seconds(20))
    }

    // MARK: - The exported tables

    struct NotABusError: Error, CustomStringConvertible {
        var description: String { "a Swift error that is not a BusError" }
    }

    private static func testInterface(_ recorded: Log<String>, _ kept: Log<Message>) -> Interface {
        Interface(
            interface,
            methods: [
                Method("Echo", inputs: [Argument("value", "v")], outputs: [Argument("value", "v")]) { call in
                    call.arguments
                },
                Method("EchoDict", inputs: [Argument("entries", "a{si}")], outputs: [Argument("entries", "a{si}")]) {
                    call in call.arguments
                },
                Method("EchoStrings", inputs: [Argument("strings", "as")], outputs: [Argument("strings", "as")]) {
                    call in call.arguments
                },
                Method(
                    "EchoMany",
                    inputs: [Argument("label", "s"), Argument("activities", "a(ussttt)"), Argument("properties", "a{sv}")],
                    outputs: [Argument("label", "s"), Argument("activities", "a(ussttt)"), Argument("properties", "a{sv}")]
                ) { call in
                    call.arguments
                },
                Method("Fail", inputs: [Argument("name", "s"), Argument("message", "s")]) { call in
                    throw BusError(try ErrorName(call.arguments[0].string ?? ""), call.arguments[1].string ?? "")
                },
                Method("FailOtherwise") { _ in throw NotABusError() },
                Method("FailWithNUL") { _ in throw BusError(.failed, "a\0b") },
                Method("Record", inputs: [Argument("text", "s")], outputs: [Argument("recorded", "as")]) { call in
                    recorded.append(call.arguments[0].string ?? "")
                    return [.array(element: "s", recorded.all.map { .string($0) })]
                },
                Method("Sender", outputs: [Argument("sender", "s")]) { call in [.string(call.sender)] },
                Method("Keep", inputs: [Argument("text", "s")]) { call in
                    kept.append(call.message)
                    return []
                },
            ],
            properties: [
                Property("Version", "s", changeSignal: .constant) { .string(version) },
                Property("Count", "u") { .uint32(42) },
                Property("Label", "s", changeSignal: .invalidates) { .string("label <&>") },
                Property("Secret", "b", changeSignal: .none) { .boolean(false) },
                Property("Activities", "a(ussttt)") { .array(element: "(ussttt)", [ValueSamples.activity]) },
            ],
            signals: [SignalDescription("Changed", arguments: [Argument("count", "u")])])
    }

    private static var otherInterfaceTable: Interface {
        Interface(
            otherInterface,
            methods: [Method("OnlyHere", outputs: [Argument("where", "s")]) { _ in [.string("other")] }],
            properties: [Property("Other", "i") { .int32(-7) }])
    }
}
