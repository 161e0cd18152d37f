import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityModel
import NetActivityTestSupport
import Testing

/// Contract version 3 on the bus: hints and fraction mode with the real netactivityd; rates,
/// which depend on time, with the service in-process on a manual clock (`InProcessService`).
/// How the rate is smoothed is covered in NetActivityModelTests.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct Version3ServiceTests {
    typealias Hint = NetActivityBus.Hint

    static func hints(_ entries: [(String, Value)]) -> Value {
        .dictionary(key: "s", value: "v", entries.map { (.string($0.0), .variant($0.1)) })
    }

    func beginWithHints(_ client: ServiceProbe, _ label: String, _ entries: [(String, Value)]) throws -> UInt32 {
        let reply = try client.call(NetActivityBus.Member.beginActivityWithHints, [.string(label), Self.hints(entries)])
        return try #require(reply.first?.uint32)
    }

    func activityProperties(_ client: ServiceProbe, _ id: UInt32) throws -> [String: Value] {
        let reply = try client.call(
            "GetAll", [.string(NetActivityBus.activityInterface.rawValue)], interface: .properties,
            path: NetActivityBus.activityPath(id))
        let entries = reply.first?.stringKeyedEntries?.compactMapValues { $0.unwrapped }
        return try #require(entries)
    }

    @Test func hintsShowOnTheObjectAndUnknownKeysAreIgnored() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        try ActivityObjectTests.subscribeToEverything(client)
        let id = try beginWithHints(client, "Downloading updates", [
            (Hint.application, .string("org.gnome.Software")), (Hint.icon, .string("system-software-update")),
            (Hint.kind, .string("update")), ("future-hint", .uint32(7)),
        ])
        let properties = try activityProperties(client, id)
        #expect(properties["ClaimedApplication"] == .string("org.gnome.Software"))
        #expect(properties["Icon"] == .string("system-software-update"))
        #expect(properties["Kind"] == .string("update"))
        #expect(properties["Fraction"] == .double(-1) && properties["Rate"] == .double(0))
        // InterfacesAdded carries the hints too.
        var added: [String: Value]?
        while added == nil, let message = client.nextMessage(timeout: .seconds(5)) {
            guard message.member == "InterfacesAdded" else { continue }
            added = try message.arguments().last?.stringKeyedEntries?[NetActivityBus.activityInterface.rawValue]?
                .stringKeyedEntries?.compactMapValues(\.unwrapped)
        }
        #expect(added?["Kind"] == .string("update") && added?["ClaimedApplication"] == .string("org.gnome.Software"))

        let plain = try client.begin("plain")
        let defaults = try activityProperties(client, plain)
        #expect(defaults["Kind"] == .string("other") && defaults["Icon"] == .string(""))
        #expect(defaults["ClaimedApplication"] == .string(""))
        #expect(try client.property("InterfaceVersion") == .uint32(3))
    }

    @Test(arguments: [
        (Hint.kind, Value.string("torrent"), "kind"),
        (Hint.kind, .uint32(1), "kind"),
        (Hint.application, .boolean(true), "application"),
        (Hint.icon, .string(String(repeating: "i", count: 256)), "icon"),
        (Hint.application, .string(String(repeating: "a", count: 300)), "application"),
    ])
    func anInvalidHintIsInvalidArgsNamingItAndBeginsNothing(key: String, value: Value, named: String) throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let error = expectCallFails(with: .invalidArgs) {
            try beginWithHints(client, "x", [(Hint.kind, .string("download")), (key, value)])
        }
        #expect(error?.message.contains("'\(named)'") == true, "\(String(describing: error))")
        #expect(try client.count() == 0)
        #expect(try client.activities().isEmpty)
    }

    @Test func aLabelOverTheLimitIsRefusedWithHintsToo() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        expectCallFails(with: .invalidArgs) {
            try beginWithHints(client, String(repeating: "l", count: 257), [(Hint.kind, .string("sync"))])
        }
        #expect(try client.count() == 0)
    }

    @Test(.skipped(under: .thread, "the service at its limit is one loop thread handling calls in turn: nothing for ThreadSanitizer to see, at tens of times the cost")) func aHugeHintsDictionaryCostsNoLastingMemory() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let junk = (0..<10_000).map { ("unknown-\($0)-" + String(repeating: "k", count: 100), Value.string("v")) }
        // The first big calls set how much the allocator and libdbus's buffers keep for the
        // next; later ones reuse it.
        for _ in 0..<10 { try client.call("EndActivity", [.uint32(try beginWithHints(client, "warm-up", junk))]) }
        let before = try service.residentBytes()
        var ids: [UInt32] = []
        for round in 0..<10 {
            ids.append(try beginWithHints(client, "big \(round)", junk + [(Hint.kind, .string("download"))]))
            try client.call("EndActivity", [.uint32(ids.last ?? 0)])
        }
        let after = try service.residentBytes()
        // Ten calls of over 1 MiB each went through, and each was kept only while it lasted. The
        // sanitizers' allocators hold freed memory back on purpose (quarantine): RSS says
        // nothing there.
        if !Sanitizer.any {
            #expect(after - before < 1 << 20, "RSS grew by \(after - before) bytes over ten calls")
        }
        let kept = try beginWithHints(client, "kept", junk + [(Hint.kind, .string("sync"))])
        #expect(try activityProperties(client, kept)["Kind"] == .string("sync"))
    }

    @Test func fractionModeOnTheBus() throws {
        let service = try ServiceDaemon(["--throttle-ms", "0"])
        let client = try service.probe()
        let bytes = try client.begin("bytes")
        let fraction = try client.begin("fraction")
        try client.call("UpdateActivity", [.uint32(bytes), .uint64(100), .uint64(400)])
        try client.call(NetActivityBus.Member.updateActivityFraction, [.uint32(fraction), .double(0.5)])
        // W = 400: (100 + 400 · 0.5) / (400 + 400)
        #expect(try client.progress() == 300.0 / 800.0)
        let properties = try activityProperties(client, fraction)
        #expect(properties["Fraction"] == .double(0.5))
        #expect(properties["Completed"] == .uint64(0) && properties["Total"] == .uint64(0))
        for bad in [Double.nan, .infinity, -0.5, 1.5] {
            expectCallFails(with: .invalidArgs) {
                try client.call(NetActivityBus.Member.updateActivityFraction, [.uint32(fraction), .double(bad)])
            }
        }
        #expect(try activityProperties(client, fraction)["Fraction"] == .double(0.5))
        let other = try service.probe()
        expectCallFails(with: .accessDenied) {
            try other.call(NetActivityBus.Member.updateActivityFraction, [.uint32(fraction), .double(0.1)])
        }
        expectCallFails(with: .unknownActivity) {
            try client.call(NetActivityBus.Member.updateActivityFraction, [.uint32(999), .double(0.1)])
        }
        expectCallFails(with: .invalidArgs) {
            try client.call(NetActivityBus.Member.updateActivityFraction, [.uint32(fraction), .uint32(1)])
        }
        // Activities shows 0/0 for it.
        #expect(try client.activities().first { $0.id == fraction }.map { [$0.completed, $0.total] } == [0, 0])
    }

    @Test func progressIsOneSignalWithFractionAndRate() throws {
        let service = try InProcessService(settings: IndicatorSettings(throttle: .zero))
        let client = try service.probe()
        try ActivityObjectTests.subscribeToEverything(client)
        let id = try client.begin("rated")
        try client.call("UpdateActivity", [.uint32(id), .uint64(0), .uint64(1_000_000)])
        service.advance(by: .milliseconds(200))
        try client.call("UpdateActivity", [.uint32(id), .uint64(500_000), .uint64(1_000_000)])
        let signals = try service.settle(client)
            .filter { $0.path == NetActivityBus.activityPath(id) && $0.member == "PropertiesChanged" }
            .compactMap { try? $0.arguments()[1].stringKeyedEntries?.compactMapValues(\.unwrapped) }
        let last = try #require(signals.last, "no progress signal")
        #expect(Set(last.keys) == ["Completed", "Total", "Fraction", "Rate"])
        #expect(last["Fraction"] == .double(0.5))
        let rate = try #require(last["Rate"]?.double)
        #expect(rate > 500_000 && rate < 2_600_000, "500 kB in 0.2 s: \(rate)")
        #expect(try client.property("Rate").double == rate)
    }

    /// The Rate values announced on activity `id`'s object among `messages`.
    static func announcedRates(_ messages: [Message], of id: UInt32) -> [Double] {
        messages.filter { $0.path == NetActivityBus.activityPath(id) && $0.member == "PropertiesChanged" }
            .compactMap { try? $0.arguments()[1].stringKeyedEntries?["Rate"]?.unwrapped?.double }
    }

    @Test func theFallToZeroIsAnnouncedFiveSecondsAfterTheLastBytes() throws {
        let service = try InProcessService(settings: IndicatorSettings(throttle: .zero))
        let client = try service.probe()
        try ActivityObjectTests.subscribeToEverything(client)
        let id = try client.begin("stalls")
        try client.call("UpdateActivity", [.uint32(id), .uint64(0), .uint64(0)])
        service.advance(by: .milliseconds(100))
        try client.call("UpdateActivity", [.uint32(id), .uint64(10_000), .uint64(0)])
        let moving = Self.announcedRates(try service.settle(client), of: id)
        #expect(moving.last.map { $0 > 0 } == true, "rates announced: \(moving)")

        service.advance(by: .milliseconds(4_999))
        #expect(!Self.announcedRates(try service.settle(client), of: id).contains(0), "fell before 5 s")
        #expect(try client.property("Rate") != .double(0))
        // The contract's bound is 6 s; the service's timer falls due at exactly 5 s.
        service.advance(by: .milliseconds(1))
        #expect(Self.announcedRates(try service.settle(client), of: id) == [0])
        #expect(try client.property("Rate") == .double(0))
    }
}
