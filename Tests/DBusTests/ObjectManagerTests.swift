import BusTestSupport
import DBus
import Testing

/// `GetManagedObjects` over a family of objects, written in Swift and checked by libdbus.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ObjectManagerTests {
    static let name: BusName = "io.github.netactivity.ManagerTest"
    static let label = String(repeating: "x", count: 256)

    /// A manager at /m with `count` objects below /m/o, each with a 256-byte property, served
    /// on a connection that accepts messages of at most `maximumMessageSize` bytes.
    static func withManager(
        objects count: Int, maximumMessageSize: Int, _ body: (Connection, Connection) throws -> Void
    ) throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let server = try Connection(.address(bus.address))
        server.maximumMessageSize = maximumMessageSize
        _ = try server.requestName(Self.name, options: .doNotQueue)
        let objects = ObjectServer(connection: server)
        objects.export([Interface("a.Manager")], at: "/m", managingObjects: true)
        objects.exportSubtree(
            Subtree(
                names: { (0..<count).map(String.init) }, isEmpty: { count == 0 },
                lookUp: { name in Int(name).flatMap { $0 < count ? Numbered($0) : nil } },
                interfaces: [
                    SubtreeInterface(
                        "a.Object",
                        properties: [
                            SubtreeProperty("Label", "s") { _ in .string(Self.label) },
                            SubtreeProperty("Number", "u") { .uint32(UInt32($0.number)) },
                        ])
                ]),
            under: "/m/o")
        let loop = try EventLoop()
        loop.attach(server)
        let thread = try RunningLoop(loop, name: "object manager test loop")
        defer { try? thread.stop() }
        try body(server, try Connection(.address(bus.address)))
    }

    static func getManagedObjects(_ client: Connection) throws -> Message {
        try client.call(
            try Message.methodCall(
                destination: Self.name, path: "/m", interface: .objectManager, member: "GetManagedObjects"),
            timeout: .seconds(20))
    }

    @Test func everyObjectIsListedWithItsProperties() throws {
        try Self.withManager(objects: 1_000, maximumMessageSize: 128 << 20) { _, client in
            let reply = try Self.getManagedObjects(client)
            #expect(reply.signature == "a{oa{sa{sv}}}")
            guard case .array(_, let entries) = try reply.arguments().first else {
                Issue.record("no array in \(reply.signature)")
                return
            }
            #expect(entries.count == 1_000)
            #expect(entries.first == .dictEntry(
                key: .objectPath("/m/o/0"),
                value: .dictionary(key: "s", value: "a{sv}", [(.string("a.Object"), .properties([("Label", .string(Self.label)), ("Number", .uint32(0))]))])))
        }
    }

    /// With a manager inside another, an object is announced by the nearest one above it.
    @Test func anObjectIsAnnouncedByTheNearestManagerAboveIt() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let server = try Connection(.address(bus.address))
        let watcher = try Connection(.address(bus.address))
        try watcher.addMatch("type='signal',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded'")
        let objects = ObjectServer(connection: server)
        for manager: ObjectPath in ["/m", "/m/inner", "/m/in"] {
            objects.export([Interface("a.Manager")], at: manager, managingObjects: true)
        }
        for path: ObjectPath in ["/m/inner/x", "/m/y", "/m/inner/deeper/z", "/m/innerx"] {
            objects.export([Interface("a.Thing")], at: path)
            try objects.emitInterfacesAdded(at: path)
        }
        server.flush()
        var announcedBy: [String: String] = [:]
        while announcedBy.count < 4, let signal = watcher.readMessage(timeout: .seconds(10)) {
            guard signal.member == "InterfacesAdded", case .objectPath(let object)? = try signal.arguments().first else {
                continue
            }
            announcedBy[object.rawValue] = signal.path?.rawValue
        }
        #expect(announcedBy == [
            "/m/inner/x": "/m/inner", "/m/y": "/m", "/m/inner/deeper/z": "/m/inner", "/m/innerx": "/m",
        ])
    }

    @Test func aReplyLargerThanTheBusAcceptsIsAnErrorAndTheServerStays() throws {
        try Self.withManager(objects: 1_000, maximumMessageSize: 64 << 10) { server, client in
            #expect {
                _ = try Self.getManagedObjects(client)
            } throws: { error in
                guard let error = error as? BusError else { return false }
                return error.name == .limitsExceeded && error.message.contains("65536 bytes")
            }
            #expect(server.isConnected)
            // Still answering: a Ping gets its reply.
            _ = try client.call(
                try Message.methodCall(destination: Self.name, path: "/m", interface: "org.freedesktop.DBus.Peer", member: "Ping"),
                timeout: .seconds(10))
        }
    }
}

/// An object of the test's subtree: its getters are handed it, and read its number.
private final class Numbered {
    let number: Int
    init(_ number: Int) { self.number = number }
}
