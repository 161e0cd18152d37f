import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import Testing

/// The benchmark's C floor (`Benchmarks/floor/c-floor.c`) builds its signals by hand. It is
/// only a fair floor while it sends what the service sends: the same signals, with the same
/// signatures and, for each activity object, the same properties. Compared here on the wire,
/// so a property added to the interface fails this test until the floor carries it too.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct FloorSignalTests {
    /// One signal as far as the comparison goes: its member, its signature, and the property
    /// (or interface) names it carries.
    struct Shape: Hashable, CustomStringConvertible {
        var member: String
        var signature: String
        var names: [String]
        var description: String { "\(member)(\(signature)) \(names)" }
    }

    @Test func theFloorSendsTheSignalsTheServiceSends() throws {
        let directory = NSTemporaryDirectory() + "netactivity-floor-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let floor = try Self.buildFloor(in: directory)
        let floorBus = try PrivateBus()
        defer { floorBus.stop() }
        let floorProcess = try ChildProcess(floor, ["--address", floorBus.address])
        defer {
            floorProcess.send(signal: SIGTERM)
            _ = try? floorProcess.waitForExit(timeout: .seconds(5))
        }
        let floorSignals = try Self.signals(at: floorBus.address)

        let service = try ServiceDaemon()
        let serviceSignals = try Self.signals(at: service.address)

        let added = try #require(serviceSignals.first { $0.member == "InterfacesAdded" }, "\(serviceSignals)")
        let floorAdded = try #require(floorSignals.first { $0.member == "InterfacesAdded" }, "\(floorSignals)")
        #expect(floorAdded == added, "the floor's InterfacesAdded carries other properties than the service's")
        #expect(
            Set(added.names) == Set(ActivityObjectInterface.descriptor.properties.map(\.name.rawValue)),
            "the service announces every declared activity property")
        let removed = try #require(serviceSignals.first { $0.member == "InterfacesRemoved" })
        #expect(floorSignals.first { $0.member == "InterfacesRemoved" } == removed)

        // Each flip of Active: the floor's signal has the service's signature and carries what
        // the interface's consistency rule requires (Active and Count), nothing the service's lacks.
        let flips = serviceSignals.filter { $0.member == "PropertiesChanged" && $0.names.contains("Active") }
        let floorFlips = floorSignals.filter { $0.member == "PropertiesChanged" && $0.names.contains("Active") }
        #expect(floorFlips.count == 2 && flips.count == 2, "floor: \(floorFlips), service: \(flips)")
        for (floorFlip, flip) in zip(floorFlips, flips) {
            #expect(floorFlip.signature == flip.signature)
            #expect(Set(floorFlip.names).isSubset(of: Set(flip.names)), "floor \(floorFlip), service \(flip)")
            #expect(Set(["Active", "Count"]).isSubset(of: Set(floorFlip.names)), "\(floorFlip)")
        }
        #expect(Set(floorSignals.map(\.member)).isSubset(of: Set(serviceSignals.map(\.member))), "\(floorSignals)")
    }

    /// The signals the NetActivity name sends while a client pushes, begins an activity, ends
    /// it and pops, in order. Both answer a call only after its signals, so every signal has been
    /// read, in order before it, once the last reply is: nothing is left to wait for.
    static func signals(at address: String) throws -> [Shape] {
        let connection = try Connection(.address(address))
        try waitUntil("the name owned at \(address)") { try connection.owner(of: NetActivityBus.name) != nil }
        try connection.addMatch("type='signal',sender='\(NetActivityBus.name)'")
        _ = try connection.call(try NetActivityInterface.push.call(destination: NetActivityBus.name, path: NetActivityBus.path))
        let begun = try connection.call(
            try NetActivityInterface.beginActivity.call("floor check", destination: NetActivityBus.name, path: NetActivityBus.path))
        let id = try #require(NetActivityInterface.beginActivity.reply(try begun.arguments()))
        _ = try connection.call(try NetActivityInterface.endActivity.call(id, destination: NetActivityBus.name, path: NetActivityBus.path))
        _ = try connection.call(try NetActivityInterface.pop.call(destination: NetActivityBus.name, path: NetActivityBus.path))
        var shapes: [Shape] = []
        while let message = connection.readMessage(timeout: .zero) {
            guard message.kind == .signal, let member = message.member?.rawValue else { continue }
            shapes.append(Shape(member: member, signature: message.signature.rawValue, names: try names(in: message)))
        }
        return shapes
    }

    /// The property names a PropertiesChanged carries, those of the activity interface in an
    /// InterfacesAdded, the interfaces an InterfacesRemoved names; sorted.
    static func names(in message: Message) throws -> [String] {
        let arguments = try message.arguments()
        switch message.member?.rawValue {
        case "PropertiesChanged":
            return (arguments.dropFirst().first?.stringKeyedEntries?.keys).map { $0.sorted() } ?? []
        case "InterfacesAdded":
            let interfaces = arguments.dropFirst().first?.stringKeyedEntries
            let properties = interfaces?[NetActivityBus.activityInterface.rawValue]?.stringKeyedEntries
            return (properties?.keys).map { $0.sorted() } ?? []
        case "InterfacesRemoved":
            return (arguments.dropFirst().first?.elements ?? []).compactMap(\.string).sorted()
        default:
            return []
        }
    }

    /// Builds c-floor as `make bench` does, into a temporary directory.
    static func buildFloor(in directory: String) throws -> String {
        let source = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Benchmarks/floor/c-floor.c").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let binary = directory + "/c-floor"
        let flags = try run("pkg-config", ["--cflags", "--libs", "dbus-1"])
        try #require(flags.succeeded, "\(flags)")
        let words = flags.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        let built = try run("cc", ["-O2", "-o", binary, source] + words, timeout: .seconds(120))
        try #require(built.succeeded, "\(built)")
        return binary
    }
}
