import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityContract
import NetActivityService
import Testing

/// docs/interface.md, "Properties": values, types, and the standard Properties interface.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct PropertyTests {
    /// Every property with its D-Bus type, as declared (`IntrospectionTests` pins the
    /// declaration to the contract's list).
    static let types: [String: Signature] = Dictionary(
        uniqueKeysWithValues: NetActivityInterface.descriptor.properties.map { ($0.name.rawValue, $0.signature) })

    // MARK: - Values

    @Test func activeIsCountAboveZero() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        #expect(try client.boolProperty("Active") == false)
        try client.call("Push")
        #expect(try client.boolProperty("Active") == true)
        let id = try client.begin("tracked")
        try client.call("Pop")
        #expect(try client.boolProperty("Active") == true, "a tracked activity alone keeps Active true")
        try client.call("EndActivity", [.uint32(id)])
        #expect(try client.boolProperty("Active") == false)
    }

    @Test func visibleFollowsActiveWithZeroDelays() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        #expect(try client.boolProperty("Visible") == false)
        try client.call("Push")
        try waitUntil("Visible to become true after Push") { try client.boolProperty("Visible") }
        try client.call("Pop")
        try waitUntil("Visible to become false after Pop") { try !client.boolProperty("Visible") }
        let id = try client.begin("tracked")
        try waitUntil("Visible to become true after BeginActivity") { try client.boolProperty("Visible") }
        try client.call("EndActivity", [.uint32(id)])
        try waitUntil("Visible to become false after EndActivity") { try !client.boolProperty("Visible") }
    }

    @Test func countIsSharedCounterPlusLiveActivities() throws {
        let service = try ServiceDaemon()
        let first = try service.probe()
        let second = try service.probe()
        try first.call("Push")
        try second.call("Push")
        let a = try first.begin("a")
        _ = try second.begin("b")
        _ = try second.begin("c")
        #expect(try first.count() == 5)
        try first.call("EndActivity", [.uint32(a)])
        #expect(try first.count() == 4)
        try first.call("Pop")
        #expect(try second.count() == 3)
        try first.call("UpdateActivity", [.uint32(try first.begin("d")), .uint64(1), .uint64(2)])
        #expect(try second.count() == 4, "updating changes no count")
    }

    @Test func progressIsCompletedOverTotalOfKnownTotals() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        #expect(try client.progress() == -1.0, "no activities")

        let unknown = try client.begin("unknown size")
        try client.call("UpdateActivity", [.uint32(unknown), .uint64(100), .uint64(0)])
        #expect(try client.progress() == -1.0, "only activities with total 0")

        let a = try client.begin("a")
        try client.call("UpdateActivity", [.uint32(a), .uint64(0), .uint64(4)])
        #expect(try client.progress() == 0.0)
        try client.call("UpdateActivity", [.uint32(a), .uint64(1), .uint64(4)])
        #expect(try client.progress() == 0.25)

        let b = try client.begin("b")
        #expect(try client.progress() == 0.25, "a new activity has unknown progress")
        try client.call("UpdateActivity", [.uint32(b), .uint64(2), .uint64(4)])
        #expect(try client.progress() == 0.375, "3/8, and the unknown-size activity's 100 bytes do not count")
        try client.call("UpdateActivity", [.uint32(a), .uint64(4), .uint64(4)])
        #expect(try client.progress() == 0.75)

        let c = try client.begin("c")
        try client.call("UpdateActivity", [.uint32(c), .uint64(0), .uint64(4)])
        #expect(try client.progress() == 0.5, "6/12")
        try client.call("EndActivity", [.uint32(a)])
        #expect(try client.progress() == 0.25, "2/8 once a has ended")
        try client.call("UpdateActivity", [.uint32(c), .uint64(1), .uint64(0)])
        #expect(try client.progress() == 0.5, "c's total went back to unknown: 2/4")
        try client.call("EndActivity", [.uint32(b)])
        #expect(try client.progress() == -1.0, "no known totals left")

        let third = try client.begin("thirds")
        try client.call("UpdateActivity", [.uint32(third), .uint64(1), .uint64(3)])
        #expect(try client.progress() == 1.0 / 3.0)

        // Large totals: the sums must not overflow 64 bits.
        let huge = try client.begin("huge")
        try client.call("UpdateActivity", [.uint32(huge), .uint64(.max), .uint64(.max)])
        try client.call("UpdateActivity", [.uint32(third), .uint64(.max / 2), .uint64(.max)])
        let progress = try client.progress()
        #expect(abs(progress - 0.75) < 1e-9, "(max + max/2) / (2·max) is 0.75, got \(progress)")
    }

    @Test func activitiesListsLiveActivitiesSortedById() throws {
        let service = try ServiceDaemon()
        let first = try service.probe()
        let second = try service.probe()
        #expect(try first.property("Activities") == .array(element: "(ussttt)", []))

        let before = wallMicroseconds()
        let alpha = try first.begin("alpha")
        let beta = try second.begin("beta ✓")
        let gamma = try first.begin("gamma")
        let after = wallMicroseconds()
        try second.call("UpdateActivity", [.uint32(beta), .uint64(5), .uint64(10)])
        try first.call("UpdateActivity", [.uint32(gamma), .uint64(7), .uint64(0)])

        let listed = try first.listedActivities()
        #expect(listed.map(\.id) == [alpha, beta, gamma])
        #expect(listed.map(\.owner) == [first.uniqueName, second.uniqueName, first.uniqueName])
        #expect(listed.map(\.label) == ["alpha", "beta ✓", "gamma"])
        #expect(listed.map(\.completed) == [0, 5, 7])
        #expect(listed.map(\.total) == [0, 10, 0])
        // Same machine, same wall clock; a second of slack for clock adjustments.
        for activity in listed {
            #expect(
                activity.started + 1_000_000 >= before && activity.started <= after + 1_000_000,
                "start of \(activity) should lie in [\(before), \(after)] µs since the epoch")
        }
        #expect(listed[0].started <= listed[1].started && listed[1].started <= listed[2].started)

        try first.call("EndActivity", [.uint32(alpha)])
        #expect(try second.listedActivities().map(\.id) == [beta, gamma])
    }

    @Test func versionIsANonEmptyStringMatchingTheExecutable() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let value = try client.property("Version")
        let version = try #require(value.string)
        #expect(value.signature == "s")
        #expect(!version.isEmpty)
        let printed = try run(try builtProduct("netactivityd"), ["--version"])
        #expect(printed.stdout.contains(version), "--version printed \(printed.stdout.debugDescription)")
    }

    // MARK: - Properties interface

    @Test func getGivesEveryPropertyWithItsType() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        for (name, type) in Self.types {
            #expect(try client.property(name).signature == type, "\(name)")
        }
    }

    @Test func getAllGivesEveryPropertyWithItsType() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        try client.call("Push")
        let id = try client.begin("listed")
        try client.call("UpdateActivity", [.uint32(id), .uint64(1), .uint64(2)])

        let reply = try client.call("GetAll", [.string(NetActivityBus.interface.rawValue)], interface: .properties)
        #expect(reply.map(\.signature) == ["a{sv}"])
        let all = try #require(reply.first?.stringKeyedEntries)
        #expect(Set(all.keys) == Set(Self.types.keys))
        for (name, type) in Self.types {
            let value = try #require(all[name]?.unwrapped, "\(name) missing or not a variant")
            #expect(value.signature == type, "\(name)")
            #expect(value == (try client.property(name)), "GetAll and Get disagree on \(name)")
        }
        #expect(all["Count"]?.unwrapped == .uint32(2))
        #expect(all["Active"]?.unwrapped == .boolean(true))
        #expect(all["Progress"]?.unwrapped == .double(0.5))
    }

    @Test func setIsPropertyReadOnlyForEveryProperty() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        try client.call("Push")
        _ = try client.begin("keep me")
        let attempts: [String: Value] = [
            "Active": .boolean(false), "Visible": .boolean(false), "Count": .uint32(42),
            "Progress": .double(0.5),
            "Activities": .array(element: "(ussttt)", [
                .structure([.uint32(9), .string(":1.1"), .string("forged"), .uint64(1), .uint64(2), .uint64(3)]),
            ]),
            "Version": .string("9.9.9"), "Rate": .double(1e9), "InterfaceVersion": .uint32(99),
        ]
        #expect(Set(attempts.keys) == Set(Self.types.keys))
        try waitUntil("Visible to settle") { try client.boolProperty("Visible") }
        var before: [String: Value] = [:]
        for name in Self.types.keys { before[name] = try client.property(name) }

        for (name, value) in attempts {
            expectCallFails(with: .propertyReadOnly) {
                try client.call(
                    "Set", [.string(NetActivityBus.interface.rawValue), .string(name), .variant(value)],
                    interface: .properties)
            }
        }
        for name in Self.types.keys {
            #expect(try client.property(name) == before[name], "Set changed \(name)")
        }
    }

    @Test func getOfAnUnknownPropertyIsUnknownProperty() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        for name in ["Nope", "count", "", "Push"] {
            expectCallFails(with: .unknownProperty) {
                try client.call("Get", [.string(NetActivityBus.interface.rawValue), .string(name)], interface: .properties)
            }
        }
    }

    @Test func unknownInterfaceInGetOrGetAllIsUnknownInterface() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        for interface in ["org.example.Nope", "io.github.netactivity.NetActivity2", "not an interface"] {
            expectCallFails(with: .unknownInterface) {
                try client.call("Get", [.string(interface), .string("Count")], interface: .properties)
            }
            expectCallFails(with: .unknownInterface) {
                try client.call("GetAll", [.string(interface)], interface: .properties)
            }
        }
    }
}
