import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityContract
import NetActivityService
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// docs/interface.md, "Activity objects": each live activity is an object under the main
/// object's ObjectManager, announced before the reply that made or ended it, and seen as D-Bus
/// tools expect.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ActivityObjectTests {
    /// Every signal the service sends, in order, with the replies around them.
    static func subscribeToEverything(_ client: ServiceProbe) throws {
        try client.connection.addMatch("type='signal',sender='\(NetActivityBus.name)'")
    }

    /// Sends a call and returns the signals that arrived before its reply, and the reply.
    static func signalsBeforeReply(
        _ client: ServiceProbe, _ member: MemberName, _ arguments: [Value]
    ) throws -> (signals: [Message], reply: Message) {
        let serial = try client.send(member, arguments)
        var signals: [Message] = []
        while let message = client.nextMessage(timeout: .seconds(10)) {
            if message.kind == .signal { signals.append(message) }
            if message.replySerial == serial { return (signals, message) }
        }
        throw BusTestError("no reply to \(member)")
    }

    @Test(arguments: [0, 7, 9, 10, 99, 100, 65_536, 1_000_000_000, UInt32.max] as [UInt32])
    func activityPathsNameTheIdInDecimal(_ id: UInt32) {
        let path = NetActivityBus.activityPath(id)
        #expect(path.rawValue == NetActivityBus.activitiesPath.rawValue + "/" + String(id))
        #expect(ObjectPath.isValid(path.rawValue))
        #expect(NetActivityBus.activityID(at: path.rawValue) == (id == 0 ? nil : id))
        #expect(path.isDescendant(of: NetActivityBus.activitiesPath))
    }

    @Test(arguments: ["", "0", "07", "1a", "a1", "-1", "+1", " 1", "1 ", "4294967296", "99999999999", "１"])
    func namesThatAreNotIdsNameNoActivity(_ name: String) {
        #expect(NetActivityBus.activityID(named: Substring(name)) == nil)
        #expect(NetActivityBus.activityID(at: NetActivityBus.activitiesPath.rawValue + "/" + name) == nil)
    }

    @Test func interfacesAddedAndRemovedComeBeforeTheReplies() throws {
        let service = try ServiceDaemon(["--throttle-ms", "50"])
        let client = try service.probe()
        try Self.subscribeToEverything(client)

        let begin = try Self.signalsBeforeReply(client, "BeginActivity", [.string("Sync feeds")])
        let id = try #require(try begin.reply.arguments().first?.uint32)
        let added = try #require(begin.signals.first { $0.member == "InterfacesAdded" }, "\(begin.signals)")
        #expect(added.path == NetActivityBus.path, "sent from the manager's path")
        let addedArguments = try added.arguments()
        #expect(addedArguments.first == .objectPath(NetActivityBus.activityPath(id)))
        let properties = try #require(addedArguments.last?.stringKeyedEntries?[NetActivityBus.activityInterface.rawValue]?
            .stringKeyedEntries?.mapValues { $0.unwrapped })
        #expect(properties["Id"] == .uint32(id))
        #expect(properties["Label"] == .string("Sync feeds"))
        #expect(properties["Owner"] == .string(client.uniqueName))
        #expect(properties["Completed"] == .uint64(0) && properties["Total"] == .uint64(0))

        // Progress goes out on the object, the first change at once.
        let update = try Self.signalsBeforeReply(client, "UpdateActivity", [.uint32(id), .uint64(25), .uint64(100)])
        #expect(update.reply.kind == .methodReturn)
        client.connection.flush()
        // Several more within the window: merged, and dropped when the activity ends.
        for completed in [50, 75] as [UInt64] { try client.call("UpdateActivity", [.uint32(id), .uint64(completed), .uint64(100)]) }
        let end = try Self.signalsBeforeReply(client, "EndActivity", [.uint32(id)])
        #expect(end.reply.kind == .methodReturn)
        let removed = try #require(end.signals.first { $0.member == "InterfacesRemoved" }, "\(end.signals)")
        #expect(try removed.arguments() == [
            .objectPath(NetActivityBus.activityPath(id)), .array(element: "s", [.string(NetActivityBus.activityInterface.rawValue)]),
        ])
        let late = client.collectMessages(for: .milliseconds(200)).filter { $0.path == NetActivityBus.activityPath(id) }
        #expect(late.isEmpty, "a PropertiesChanged on the object after its InterfacesRemoved: \(late)")
        let progress = try (begin.signals + update.signals + end.signals)
            .filter { $0.path == NetActivityBus.activityPath(id) }
            .compactMap { try $0.arguments()[1].stringKeyedEntries?.compactMapValues(\.unwrapped) }
            .filter { $0["Completed"] != nil }
        #expect(progress.first?["Completed"] == .uint64(25) && progress.first?["Total"] == .uint64(100), "\(progress)")
        #expect(progress.count == 1, "the later updates were merged and dropped with the activity: \(progress)")
    }

    @Test func callsOnAnActivityPathWithoutALiveActivityGetUnknownObject() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let id = try client.begin("short")
        try client.call("EndActivity", [.uint32(id)])
        let live = try client.begin("live")
        // The live one's id written with a leading zero, or past UInt32, names no object either.
        let other: [ObjectPath] = [
            "/io/github/netactivity/NetActivity1/activity/x", ObjectPath(unchecked: "/io/github/netactivity/NetActivity1/activity/0\(live)"),
            ObjectPath(unchecked: "/io/github/netactivity/NetActivity1/activity/\(UInt64(live) + (1 << 32))"),
        ]
        for path in [NetActivityBus.activityPath(id), NetActivityBus.activityPath(999)] + other {
            #expect(errorName {
                try client.call("GetAll", [.string(NetActivityBus.activityInterface.rawValue)], interface: .properties, path: path)
            } == "org.freedesktop.DBus.Error.UnknownObject", "\(path)")
        }
    }

    @Test func attributionNamesTheOwnersProcessUserAndApplication() throws {
        let service = try ServiceDaemon()
        let client = try service.probe()
        let id = try client.begin("attributed")
        var properties: [String: Value] = [:]
        try waitUntil("the service to learn the owner's credentials") {
            let reply = try client.call(
                "GetAll", [.string(NetActivityBus.activityInterface.rawValue)], interface: .properties,
                path: NetActivityBus.activityPath(id))
            properties = reply.first?.stringKeyedEntries?.compactMapValues(\.unwrapped) ?? [:]
            return properties["ProcessID"] != .uint32(NetActivityBus.unknownCredential)
        }
        #expect(properties["ProcessID"] == .uint32(UInt32(getpid())))
        #expect(properties["UserID"] == .uint32(getuid()))
        let comm = try String(contentsOfFile: "/proc/self/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(properties["Application"] == .string(comm))
    }

    @Test func busctlTreeAndIntrospectShowTheLiveActivities() throws {
        try requireTool("busctl")
        let service = try ServiceDaemon()
        let client = try service.probe()
        let ids = try (0..<3).map { try client.begin("tree \($0)") }
        let tree = try service.busctl(["tree", NetActivityBus.name.rawValue])
        try #require(tree.succeeded, "\(tree)")
        for id in ids {
            #expect(tree.stdout.contains(NetActivityBus.activityPath(id).rawValue), "\(tree.stdout)")
        }
        let introspect = try service.busctl([
            "introspect", NetActivityBus.name.rawValue, NetActivityBus.activityPath(ids[1]).rawValue,
        ])
        try #require(introspect.succeeded, "\(introspect)")
        #expect(introspect.stdout.contains(".Label"), "\(introspect.stdout)")
        #expect(introspect.stdout.contains("\"tree 1\""), "\(introspect.stdout)")
    }

    @Test func everyObjectAnswersWithItsOwnValues() throws {
        // One table serves every activity object, reading the one looked up last: each object,
        // listed together or read alone, must still show its own activity.
        let service = try ServiceDaemon()
        let first = try service.probe()
        let second = try service.probe()
        let ids = [try first.begin("alpha"), try second.begin("beta"), try first.begin("gamma")]
        try second.call("UpdateActivity", [.uint32(ids[1]), .uint64(5), .uint64(10)])
        let expected: [(label: String, owner: String, completed: UInt64)] = [
            ("alpha", first.uniqueName, 0), ("beta", second.uniqueName, 5), ("gamma", first.uniqueName, 0),
        ]
        let managed = try first.call("GetManagedObjects", interface: .objectManager).first?.elements ?? []
        var listed: [ObjectPath: [String: Value]] = [:]
        for entry in managed {
            guard case .dictEntry(.objectPath(let path), let interfaces) = entry,
                let properties = interfaces.stringKeyedEntries?[NetActivityBus.activityInterface.rawValue]?.stringKeyedEntries
            else { continue }
            listed[path] = properties.compactMapValues(\.unwrapped)
        }
        for (id, want) in zip(ids, expected) {
            let path = NetActivityBus.activityPath(id)
            let alone = try first.call("GetAll", [.string(NetActivityBus.activityInterface.rawValue)], interface: .properties, path: path)
                .first?.stringKeyedEntries?.compactMapValues(\.unwrapped) ?? [:]
            for properties in [listed[path] ?? [:], alone] {
                #expect(properties["Id"] == .uint32(id), "\(path): \(properties)")
                #expect(properties["Label"] == .string(want.label), "\(path): \(properties)")
                #expect(properties["Owner"] == .string(want.owner), "\(path): \(properties)")
                #expect(properties["Completed"] == .uint64(want.completed), "\(path): \(properties)")
            }
        }
    }

    @Test func gdbusReadsGetManagedObjectsAndMonitorsObjectsComingAndGoing() throws {
        try requireTool("gdbus")
        let service = try ServiceDaemon()
        let client = try service.probe()
        let monitor = try ChildProcess(
            "gdbus", ["monitor", "--address", service.bus.address, "--dest", NetActivityBus.name.rawValue])
        defer { monitor.send(signal: SIGTERM) }
        // gdbus subscribes and asks who owns the name at once, in no promised order: a push it
        // prints is the sign that its subscription is in place, so push until one shows.
        try waitUntil("gdbus monitor to print a push's PropertiesChanged") {
            try client.call("Push", [])
            try client.call("Pop", [])
            var seen = false
            while let line = (try? monitor.readLine(timeout: .milliseconds(100))) ?? nil {
                seen = seen || line.contains("PropertiesChanged")
            }
            return seen
        }

        let id = try client.begin("seen by gdbus")
        let managed = try run("gdbus", [
            "call", "--address", service.bus.address, "--dest", NetActivityBus.name.rawValue, "--object-path",
            NetActivityBus.path.rawValue, "--method", "org.freedesktop.DBus.ObjectManager.GetManagedObjects",
        ])
        try #require(managed.succeeded, "\(managed)")
        #expect(managed.stdout.contains("objectpath '\(NetActivityBus.activityPath(id))'"), "\(managed.stdout)")
        #expect(managed.stdout.contains("'Label': <'seen by gdbus'>"), "\(managed.stdout)")
        try client.call("EndActivity", [.uint32(id)])

        var lines: [String] = []
        try waitUntil("gdbus monitor to print InterfacesAdded and InterfacesRemoved") {
            while let line = (try? monitor.readLine(timeout: .milliseconds(100))) ?? nil { lines.append(line) }
            return lines.contains { $0.contains("InterfacesRemoved") }
        }
        #expect(lines.contains { $0.contains("ObjectManager.InterfacesAdded (objectpath '\(NetActivityBus.activityPath(id))'") }, "\(lines)")
    }

    @Test func anOwnerLeavingRemovesEveryObjectBeforeTheNewCount() throws {
        let service = try ServiceDaemon()
        var leaving: ServiceProbe? = try service.probe()
        let ids = try #require(leaving).pipelined("BeginActivity", [.string("bulk")], count: 1_024)
            .compactMap { try $0.arguments().first?.uint32 }
        #expect(ids.count == 1_024)
        let watcher = try service.probe()
        try Self.subscribeToEverything(watcher)

        leaving = nil
        var removed = Set<ObjectPath>()
        var countAfterRemovals: UInt32?
        while countAfterRemovals == nil, let message = watcher.nextMessage(timeout: .seconds(30)) {
            if message.member == "InterfacesRemoved", case .objectPath(let path)? = try message.arguments().first {
                removed.insert(path)
            } else if let changed = serviceProperties(in: message), let count = changed["Count"]?.uint32 {
                #expect(removed.count == 1_024, "Count came before every object was removed")
                countAfterRemovals = count
            }
        }
        #expect(removed == Set(ids.map(NetActivityBus.activityPath)))
        #expect(countAfterRemovals == 0)
    }

    @Test(.skipped(under: .thread, "the service at its limit is one loop thread handling calls in turn: nothing for ThreadSanitizer to see, at tens of times the cost")) func theActivityPastTheGlobalLimitIsRefusedAndChangesNothing() throws {
        let service = try ServiceDaemon()
        let clients = try (0..<64).map { _ in try service.probe() }
        for client in clients {
            let replies = try client.pipelined("BeginActivity", [.string("")], count: NetActivityBus.Limits.activitiesPerOwner)
            try #require(replies.allSatisfy { $0.kind == .methodReturn }, "\(replies.first { $0.kind == .error } as Any)")
        }
        let extra = try service.probe()
        #expect(try extra.count() == 65_536)
        #expect(errorName { try extra.begin("one too many") } == "org.freedesktop.DBus.Error.LimitsExceeded")
        #expect(try extra.count() == 65_536)
        #expect(try extra.call("Push").isEmpty, "the shared counter has a limit of its own")
    }
}

extension ServiceProbe {
    /// Every message that arrives within `duration`.
    func collectMessages(for duration: Duration) -> [Message] {
        var collected: [Message] = []
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline,
            let message = nextMessage(timeout: ContinuousClock.now.duration(to: deadline))
        {
            collected.append(message)
        }
        return collected
    }
}
