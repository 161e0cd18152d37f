import BusTestSupport
import DBus
import Foundation
import Testing

/// An `ObjectServer` on a private bus, called by a second connection and by foreign clients.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ObjectServerTests {
    // MARK: - Methods

    @Test func echoRoundTripsEveryValueOverTheWire() throws {
        let object = try TestObject()
        defer { object.stop() }
        for sample in ValueSamples.all {
            let reply = try object.call("Echo", [.variant(sample.value)])
            #expect(bitwiseEqual(reply, [.variant(sample.value)]), "\(sample.name): got \(reply)")
        }
    }

    @Test func echoRoundTripsSeveralSignatures() throws {
        let object = try TestObject()
        defer { object.stop() }
        let many: [Value] = [
            .string("label"), .array(element: "(ussttt)", [ValueSamples.activity]),
            .properties([("Count", .uint32(1)), ("Nested", .variant(.properties([("x", .double(-0.0))])))]),
        ]
        #expect(try object.call("EchoMany", many) == many)
        let empty: [Value] = [.string(""), .array(element: "(ussttt)", []), .properties([])]
        #expect(try object.call("EchoMany", empty) == empty)
        let dictionary = Value.dictionary(key: "s", value: "i", [(.string("one"), .int32(1)), (.string("two"), .int32(2))])
        #expect(try object.call("EchoDict", [dictionary]) == [dictionary])
        #expect(try object.call("EchoStrings", [.array(element: "s", [])]) == [.array(element: "s", [])])
    }

    @Test(arguments: [
        ("Echo", [Value.int32(1)], "v", "i"),
        ("Echo", [], "v", ""),
        ("Echo", [.variant(.int32(1)), .variant(.int32(2))], "v", "vv"),
        ("EchoDict", [Value.properties([])], "a{si}", "a{sv}"),
        ("EchoMany", [Value.string("only the label")], "sa(ussttt)a{sv}", "s"),
    ] as [(String, [Value], String, String)])
    func wrongSignatureIsInvalidArgsNamingTheExpectedSignature(
        _ member: String, _ arguments: [Value], _ expected: String, _ actual: String
    ) throws {
        let object = try TestObject()
        defer { object.stop() }
        let error = try object.callFailing(MemberName(member), arguments)
        #expect(error?.name == .invalidArgs)
        #expect(error?.message.contains("'\(expected)'") == true, "\(String(describing: error))")
        #expect(error?.message.contains("'\(actual)'") == true, "\(String(describing: error))")
    }

    @Test func unknownMethodInterfaceAndObjectGetTheirStandardErrors() throws {
        let object = try TestObject()
        defer { object.stop() }
        #expect(try object.callFailing("NoSuchMethod")?.name == .unknownMethod)
        #expect(try object.callFailing("NoSuchMethod", interface: nil)?.name == .unknownMethod)
        // A method of another interface is not found through this one.
        #expect(try object.callFailing("OnlyHere")?.name == .unknownMethod)
        #expect(try object.callFailing("Echo", interface: "io.github.netactivity.Nope1", [.variant(.byte(1))])?.name
            == .unknownInterface)
        for path: ObjectPath in ["/nope", "/io/git", "/io/github/netactivity/Test/Other", "/io/github/netactivity/Tes"] {
            #expect(try object.callFailing("Echo", path: path, [.variant(.byte(1))])?.name == .unknownObject, "\(path)")
            #expect(
                try object.callFailing("Introspect", interface: .introspectable, path: path)?.name == .unknownObject,
                "\(path)")
        }
    }

    @Test func callWithoutInterfaceIsDispatchedByMember() throws {
        let object = try TestObject()
        defer { object.stop() }
        #expect(try object.call("Echo", interface: nil, [.variant(.string("x"))]) == [.variant(.string("x"))])
        #expect(try object.call("OnlyHere", interface: nil) == [.string("other")])
        #expect(try object.call("Ping", interface: nil).isEmpty)
        #expect(try object.call("Introspect", interface: nil).first?.string?.contains("<node>") == true)
        let version = try object.call("Get", interface: nil, [.string(""), .string("Version")])
        #expect(version == [.variant(.string(TestObject.version))])
    }

    @Test func handlerErrorsBecomeErrorReplies() throws {
        let object = try TestObject()
        defer { object.stop() }
        let error = try object.callFailing(
            "Fail", [.string("io.github.netactivity.Error.Custom"), .string("boom: <&> ünï")])
        let custom: ErrorName = "io.github.netactivity.Error.Custom"
        #expect(error == BusError(custom, "boom: <&> ünï"))
        let standard = try object.callFailing("Fail", [.string(ErrorName.accessDenied.rawValue), .string("")])
        #expect(standard == BusError(.accessDenied, ""))
        // libdbus would cut the message at a NUL; it arrives with U+FFFD instead.
        let withNUL = try object.callFailing("FailWithNUL")
        #expect(withNUL == BusError(.failed, "a\u{FFFD}b"))
        // A handler that throws something other than a BusError still answers.
        #expect(try object.callFailing("FailOtherwise")?.name == .failed)
        // An invalid error name from the handler is its own error, not a crash.
        #expect(try object.callFailing("Fail", [.string("not an error name"), .string("x")])?.name == .invalidArgs)
        #expect(try object.call("Echo", [.variant(.byte(1))]) == [.variant(.byte(1))])
    }

    @Test func peerInterfaceAnswers() throws {
        let object = try TestObject()
        defer { object.stop() }
        #expect(try object.call("Ping", interface: .peer).isEmpty)
        #expect(try object.call("Ping", interface: .peer, path: .root).isEmpty)
        let machine = try object.call("GetMachineId", interface: .peer).first?.string ?? ""
        #expect(machine.count == 32 && machine.allSatisfy(\.isHexDigit), "\(machine)")
    }

    @Test func handlerSeesTheCallersUniqueName() throws {
        let object = try TestObject()
        defer { object.stop() }
        #expect(try object.call("Sender") == [.string(object.client.uniqueName.rawValue)])
    }

    /// The server reuses the last caller's name while the caller stays the same: callers taking
    /// turns must each still see their own.
    @Test func callersTakingTurnsEachSeeTheirOwnName() throws {
        let object = try TestObject()
        defer { object.stop() }
        let other = try Connection(.address(object.bus.address))
        for caller in [object.client, object.client, other, object.client, other, other] {
            let reply = try caller.call(object.methodCall("Sender"), timeout: .seconds(10)).arguments()
            #expect(reply == [.string(caller.uniqueName.rawValue)])
        }
    }

    /// Empty replies are copied from one kept per recent caller (four at most): with six callers
    /// taking turns, kept ones and evicted ones alike must reach the right caller, answering
    /// the right call, with a serial of their own.
    @Test func emptyRepliesReachTheirCallerWhenManyTakeTurns() throws {
        let object = try TestObject()
        defer { object.stop() }
        var callers = [object.client]
        for _ in 0..<5 { callers.append(try Connection(.address(object.bus.address))) }
        var replySerials = Set<UInt32>()
        for round in 0..<3 {
            for caller in round == 1 ? callers.reversed() : callers {
                let call = try object.methodCall("Ping", interface: .peer)
                let reply = try caller.call(call, timeout: .seconds(10))
                #expect(reply.kind == .methodReturn)
                #expect(reply.destination == caller.uniqueName)
                #expect(reply.replySerial == call.serial)
                #expect(reply.signature.rawValue.isEmpty)
                #expect(try reply.arguments().isEmpty)
                replySerials.insert(reply.serial)
            }
        }
        #expect(replySerials.count == 3 * callers.count)
    }

    /// Method calls are taken off the queue ahead of libdbus's dispatch; replies still go through
    /// it to complete pending calls. A server calling itself has both on one queue.
    @Test func aServerCallingItselfGetsItsReplies() throws {
        let object = try TestObject()
        defer { object.stop() }
        let replies = Log<String>()
        let done = DispatchSemaphore(value: 0)
        let count = 20
        try object.loopThread.sync {
            for _ in 0..<count {
                let call = try object.methodCall("Sender")
                object.serverConnection.send(call, timeout: .seconds(10)) { result in
                    replies.append((try? result.get().arguments().first?.string) ?? "failed: \(result)")
                    done.signal()
                }
            }
        }
        for _ in 0..<count {
            #expect(done.wait(timeout: .now() + 10) == .success)
        }
        #expect(replies.all == Array(repeating: object.serverConnection.uniqueName.rawValue, count: count))
    }

    /// Method calls skip the filter list only while no filter ahead of the server looks at them.
    @Test func aFilterAddedBeforeTheServerSeesCallsFirst() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try Connection(.address(bus.address))
        _ = try connection.requestName(TestObject.name, options: .doNotQueue)
        let seen = Log<String>()
        let filterID = connection.addFilter(for: .methodCall) { message in
            seen.append(message.member?.rawValue ?? "")
            return message.member == "Taken"
        }
        let server = ObjectServer(connection: connection)
        server.export([Interface(TestObject.interface, methods: [Method("Answered") { _ in [.string("server")] }])], at: TestObject.path)
        let loop = try EventLoop()
        loop.attach(connection)
        let thread = try RunningLoop(loop)
        defer { try? thread.stop() }
        let client = try Connection(.address(bus.address))
        func call(_ member: MemberName, timeout: Duration = .seconds(10)) -> Result<[Value], BusError> {
            Result { () throws(BusError) in
                try client.call(
                    .methodCall(destination: TestObject.name, path: TestObject.path, interface: TestObject.interface, member: member),
                    timeout: timeout
                ).arguments()
            }
        }

        #expect(try call("Answered").get() == [.string("server")])
        // Taken by the filter, which sends no reply.
        #expect(call("Taken", timeout: .milliseconds(500)).error?.name == .noReply)
        #expect(seen.all == ["Answered", "Taken"])

        try thread.sync { connection.removeFilter(filterID) }
        #expect(try call("Answered").get() == [.string("server")])
        #expect(call("Taken").error?.name == .unknownMethod)
        #expect(seen.all == ["Answered", "Taken"])
    }

    /// A handler borrows the call; `call.message` is the way to keep it, and must stay whole
    /// after libdbus has let go of its own reference.
    @Test func aHandlerCanKeepTheCallsMessage() throws {
        let object = try TestObject()
        defer { object.stop() }
        for text in ["first", "second"] {
            _ = try object.call("Keep", [.string(text)])
        }
        let kept = object.kept.all
        try #require(kept.count == 2)
        for (message, text) in zip(kept, ["first", "second"]) {
            #expect(message.member == "Keep")
            #expect(message.sender == object.client.uniqueName)
            #expect(try message.arguments() == [.string(text)])
        }
    }

    @Test func unexportedObjectIsUnknown() throws {
        let object = try TestObject()
        defer { object.stop() }
        try object.loopThread.sync { object.server.unexport(TestObject.childPath) }
        // (Not Peer.Ping: libdbus answers that itself, for every path.)
        #expect(try object.callFailing("Introspect", interface: .introspectable, path: TestObject.childPath)?.name
            == .unknownObject)
        try object.loopThread.sync { object.server.unexport(TestObject.path) }
        #expect(try object.callFailing("Echo", [.variant(.byte(1))])?.name == .unknownObject)
        #expect(try object.callFailing("Introspect", interface: .introspectable, path: .root)?.name == .unknownObject)
    }

    // MARK: - Properties

    static let test = Value.string(TestObject.interface.rawValue)
    static let nope = Value.string("io.github.netactivity.Nope1")

    @Test func propertiesGet() throws {
        let object = try TestObject()
        defer { object.stop() }
        func get(_ interface: Value, _ name: String) throws -> [Value] {
            try object.call("Get", interface: .properties, [interface, .string(name)])
        }
        func getError(_ interface: Value, _ name: String) throws -> ErrorName? {
            try object.callFailing("Get", interface: .properties, [interface, .string(name)])?.name
        }
        #expect(try get(Self.test, "Version") == [.variant(.string(TestObject.version))])
        #expect(try get(Self.test, "Activities") == [.variant(.array(element: "(ussttt)", [ValueSamples.activity]))])
        // An empty interface name searches every interface of the object.
        #expect(try get(.string(""), "Other") == [.variant(.int32(-7))])
        #expect(try getError(Self.test, "Other") == .unknownProperty)
        #expect(try getError(Self.test, "Nope") == .unknownProperty)
        #expect(try getError(Self.nope, "Version") == .unknownInterface)
        let wrong = try object.callFailing("Get", interface: .properties, [Self.test])
        #expect(wrong?.name == .invalidArgs)
        #expect(wrong?.message.contains("'ss'") == true, "\(String(describing: wrong))")
    }

    @Test func propertiesGetAll() throws {
        let object = try TestObject()
        defer { object.stop() }
        func getAll(_ interface: Value) throws -> Value? {
            try object.call("GetAll", interface: .properties, [interface]).first
        }
        let all = try getAll(Self.test)
        #expect(all?.signature == "a{sv}")
        let names = all?.elements?.compactMap { entry -> String? in
            if case .dictEntry(.string(let key), _) = entry { key } else { nil }
        }
        #expect(names == ["Version", "Count", "Label", "Secret", "Activities"])
        #expect(all?.stringKeyedEntries?["Count"] == .variant(.uint32(42)))

        let everything = try getAll(.string(""))?.stringKeyedEntries.map { Set($0.keys) }
        #expect(everything == ["Version", "Count", "Label", "Secret", "Activities", "Other"])
        #expect(try getAll(.string(TestObject.otherInterface.rawValue)) == .properties([("Other", .int32(-7))]))
        #expect(try object.callFailing("GetAll", interface: .properties, [Self.nope])?.name == .unknownInterface)
    }

    @Test func propertiesSet() throws {
        let object = try TestObject()
        defer { object.stop() }
        func set(_ interface: Value, _ name: String, _ value: Value) throws -> BusError? {
            try object.callFailing("Set", interface: .properties, [interface, .string(name), .variant(value)])
        }
        let readOnly = try set(Self.test, "Version", .string("9"))
        #expect(readOnly?.name == .propertyReadOnly)
        #expect(readOnly?.message.contains("Version") == true)
        #expect(try set(.string(""), "Count", .uint32(1))?.name == .propertyReadOnly)
        #expect(try set(Self.test, "Nope", .uint32(1))?.name == .unknownProperty)
        #expect(try set(Self.nope, "Version", .string("9"))?.name == .unknownInterface)
        let wrong = try object.callFailing("Set", interface: .properties, [Self.test, .string("Version")])
        #expect(wrong?.name == .invalidArgs)
        #expect(wrong?.message.contains("'ssv'") == true, "\(String(describing: wrong))")
    }

    @Test func propertiesOfAnAncestorNodeAreUnknown() throws {
        let object = try TestObject()
        defer { object.stop() }
        #expect(try object.callFailing("GetAll", interface: .properties, path: "/io/github", [.string("")])?.name
            == .unknownInterface)
    }

    // MARK: - Introspection

    @Test func introspectionOfTheObjectListsItsTable() throws {
        let object = try TestObject()
        defer { object.stop() }
        let xml = try object.call("Introspect", interface: .introspectable).first?.string ?? ""
        #expect(xml.hasPrefix("<!DOCTYPE node PUBLIC"))
        let document = try #require(IntrospectionDocument(xml), "not well-formed:\n\(xml)")
        #expect(document.interfaces.map(\.name) == [
            "io.github.netactivity.Other1", "io.github.netactivity.Test1", "org.freedesktop.DBus.Introspectable",
            "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Properties",
        ])
        #expect(document.children == ["Child"])

        let test = try #require(document.interface(TestObject.interface.rawValue))
        #expect(test.methods.map(\.name) == [
            "Echo", "EchoDict", "EchoStrings", "EchoMany", "Fail", "FailOtherwise", "FailWithNUL", "Record", "Sender", "Keep",
        ])
        #expect(test.methods.first { $0.name == "Echo" }?.arguments == ["v in", "v out"])
        #expect(test.methods.first { $0.name == "EchoMany" }?.arguments == [
            "s in", "a(ussttt) in", "a{sv} in", "s out", "a(ussttt) out", "a{sv} out",
        ])
        #expect(test.methods.first { $0.name == "FailOtherwise" }?.arguments == [])
        #expect(test.signals == [.init(name: "Changed", arguments: ["u "])])
        #expect(test.properties == [
            .init(name: "Version", type: "s", access: "read", emitsChangedSignal: "const"),
            .init(name: "Count", type: "u", access: "read", emitsChangedSignal: "true"),
            .init(name: "Label", type: "s", access: "read", emitsChangedSignal: "invalidates"),
            .init(name: "Secret", type: "b", access: "read", emitsChangedSignal: "false"),
            .init(name: "Activities", type: "a(ussttt)", access: "read", emitsChangedSignal: "true"),
        ])

        let properties = try #require(document.interface("org.freedesktop.DBus.Properties"))
        #expect(properties.methods.map(\.name) == ["Get", "GetAll", "Set"])
        #expect(properties.methods.first { $0.name == "GetAll" }?.arguments == ["s in", "a{sv} out"])
        #expect(properties.signals.first?.arguments == ["s ", "a{sv} ", "as "])
        #expect(document.interface("org.freedesktop.DBus.Peer")?.methods.map(\.name) == ["Ping", "GetMachineId"])
    }

    @Test(arguments: [
        ("/", "io"), ("/io", "github"), ("/io/github", "netactivity"), ("/io/github/netactivity", "Test"),
    ] as [(String, String)])
    func introspectionOfAnAncestorListsTheChildNode(_ path: String, _ child: String) throws {
        let object = try TestObject()
        defer { object.stop() }
        let xml = try object.call("Introspect", interface: .introspectable, path: ObjectPath(path)).first?.string ?? ""
        let document = try #require(IntrospectionDocument(xml), "not well-formed:\n\(xml)")
        #expect(document.children == [child])
        #expect(document.interfaces.map(\.name) == ["org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer"])
    }

    @Test func introspectionOfALeafHasNoChildren() throws {
        let object = try TestObject()
        defer { object.stop() }
        let xml = try object.call("Introspect", interface: .introspectable, path: TestObject.childPath).first?.string ?? ""
        let document = try #require(IntrospectionDocument(xml), "not well-formed:\n\(xml)")
        #expect(document.children.isEmpty)
        #expect(document.interface(TestObject.childInterface.rawValue) != nil)
    }

    // MARK: - No reply

    @Test func callThatAsksForNoReplyGetsNone() throws {
        let object = try TestObject()
        defer { object.stop() }
        let server = object.serverConnection.uniqueName.rawValue
        let monitor = try Connection(.address(object.bus.address))
        try monitor.addMatch("type='method_return',sender='\(server)',eavesdrop=true")
        try monitor.addMatch("type='error',sender='\(server)',eavesdrop=true")

        let result = try object.runTool("busctl", [
            "call", "--expect-reply=no", TestObject.name.rawValue, TestObject.path.rawValue,
            TestObject.interface.rawValue, "Record", "s", "silent",
        ])
        #expect(result.succeeded, "\(result)")
        try waitUntil("the server to handle the no-reply call") { object.recorded.all == ["silent"] }

        let marker = try object.methodCall("Record", [.string("marker")])
        #expect(try object.client.call(marker).arguments() == [.array(element: "s", [.string("silent"), .string("marker")])])
        // The first reply the server sent must be the one to the marker call.
        let first = try nextMessage(on: monitor, "a reply from the test object") {
            $0.kind == .methodReturn || $0.kind == .error
        }
        #expect(first.replySerial == marker.serial)
        #expect(first.destination == object.client.uniqueName)
    }

    // MARK: - Signals

    @Test func emitPropertiesChangedReachesASubscriberInOrder() throws {
        let object = try TestObject()
        defer { object.stop() }
        try object.client.addMatch(
            "type='signal',sender='\(object.serverConnection.uniqueName)',interface='org.freedesktop.DBus.Properties',"
                + "member='PropertiesChanged',path='\(TestObject.path)'")
        try object.loopThread.sync {
            try object.server.emitPropertiesChanged(
                interface: TestObject.interface, at: TestObject.path,
                changed: [
                    ("Count", .uint32(7)), ("Activities", .array(element: "(ussttt)", [])), ("Active", .boolean(true)),
                ],
                invalidated: ["Label"])
        }
        let signal = try nextMessage(on: object.client, "PropertiesChanged") {
            $0.isSignal(.properties, "PropertiesChanged")
        }
        #expect(signal.path == TestObject.path)
        #expect(signal.signature == "sa{sv}as")
        #expect(try signal.arguments() == [
            .string(TestObject.interface.rawValue),
            .properties([
                ("Count", .uint32(7)), ("Activities", .array(element: "(ussttt)", [])), ("Active", .boolean(true)),
            ]),
            .array(element: "s", [.string("Label")]),
        ])
    }

    /// Signals of a few basic values are sent as copies of ones built before: every copy must
    /// carry its own values and serial, in order, also after older ones left the cache.
    @Test func repeatedPropertiesChangedCarryTheirOwnValuesAndSerials() throws {
        let object = try TestObject()
        defer { object.stop() }
        try object.client.addMatch(
            "type='signal',sender='\(object.serverConnection.uniqueName)',interface='org.freedesktop.DBus.Properties',"
                + "member='PropertiesChanged'")
        // Active flipping back and forth, interleaved with more distinct signals than the
        // cache holds, one on another path and one from another interface.
        var sent: [(ObjectPath, String, [(String, Value)])] = []
        for round in 0..<6 {
            sent.append((TestObject.path, TestObject.interface.rawValue, [("Active", .boolean(round % 2 == 0))]))
            sent.append((TestObject.path, TestObject.interface.rawValue, [("Active", .boolean(round % 2 == 0))]))
            for count in 0..<UInt32(round) {
                sent.append((TestObject.path, TestObject.interface.rawValue, [("Count", .uint32(count)), ("Active", .boolean(true))]))
            }
            sent.append(("/other", TestObject.interface.rawValue, [("Active", .boolean(round % 2 == 0))]))
            sent.append((TestObject.path, "org.example.Other", [("Active", .boolean(round % 2 == 0))]))
        }
        let all = sent
        try object.loopThread.sync {
            for (path, interface, changed) in all {
                try object.server.emitPropertiesChanged(
                    interface: InterfaceName(unchecked: interface), at: path,
                    changed: changed.map { (MemberName(unchecked: $0.0), $0.1) })
            }
        }
        var serials = Set<UInt32>()
        for (index, (path, interface, changed)) in sent.enumerated() {
            let signal = try nextMessage(on: object.client, "PropertiesChanged #\(index)") {
                $0.isSignal(.properties, "PropertiesChanged")
            }
            #expect(signal.path == path, "#\(index)")
            #expect(
                try signal.arguments() == [.string(interface), .properties(changed), .array(element: "s", [])],
                "#\(index)")
            #expect(serials.insert(signal.serial).inserted, "#\(index) reused serial \(signal.serial)")
        }
    }

    @Test func emitPropertiesChangedWithNothingEmitsNothing() throws {
        let object = try TestObject()
        defer { object.stop() }
        let changed = SignalDescriptor<UInt32>("Changed", of: TestObject.interface, "count", doc: "The count changed.")
        try object.client.addMatch("type='signal',sender='\(object.serverConnection.uniqueName)'")
        try object.loopThread.sync {
            try object.server.emitPropertiesChanged(interface: TestObject.interface, at: TestObject.path, changed: [])
            try object.server.emit(changed, 3, at: TestObject.path)
        }
        let signal = try nextMessage(on: object.client, "a signal from the test object") {
            $0.kind == .signal && $0.sender == object.serverConnection.uniqueName
        }
        #expect(signal.isSignal(TestObject.interface, "Changed"))
        #expect(try signal.arguments(expecting: "u") == [.uint32(3)])
    }

    @Test func aDeclaredSignalIsEmittedAsDeclared() throws {
        let object = try TestObject()
        defer { object.stop() }
        let changed = SignalDescriptor<UInt32>("Changed", of: TestObject.interface, "count", doc: "The count changed.")
        try object.client.addMatch(changed.matchRule(sender: object.serverConnection.uniqueName))
        try object.loopThread.sync { try object.server.emit(changed, 5, at: TestObject.path) }
        let signal = try nextMessage(on: object.client, "Changed from the test object") { changed.decode($0) != nil }
        #expect(signal.path == TestObject.path)
        #expect(signal.signature == changed.signature)
        #expect(changed.decode(signal) == 5)
    }

    @Test func anInterfaceBoundToItsDeclarationListsTheDeclaredSignals() {
        let changed = SignalDescriptor<UInt32>("Changed", of: TestObject.interface, "count", doc: "The count changed.")
        let reset = SignalDescriptor("Reset", of: TestObject.interface, doc: "Counting starts over.")
        let count = PropertyDescriptor<UInt32>("Count", doc: "How many.")
        let declared = InterfaceDescriptor(
            TestObject.interface, doc: "", properties: [count.declaration], signals: [changed.declaration, reset.declaration])
        let bound = declared.bind(properties: [count.bind { 1 }])
        #expect(bound.signals.map(\.name) == ["Changed", "Reset"])
        #expect(bound.signals.map { $0.arguments.map(\.name) } == [["count"], []])
        #expect(bound.signals.map { $0.arguments.map(\.type) } == [["u"], []])
    }

    // MARK: - Foreign clients

    @Test func busctlIntrospectsTheObject() throws {
        let object = try TestObject()
        defer { object.stop() }
        let result = try object.runTool("busctl", ["introspect", TestObject.name.rawValue, TestObject.path.rawValue])
        #expect(result.succeeded, "\(result)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        func row(_ name: String) -> [Substring]? { lines.first { $0.first.map(String.init) == name } }
        #expect(row("io.github.netactivity.Test1")?.dropFirst().first == "interface", "\(result)")
        #expect(row(".Echo")?.dropFirst().prefix(3) == ["method", "v", "v"], "\(result)")
        #expect(row(".Version")?.dropFirst().prefix(4) == ["property", "s", "\"1.2.3\"", "const"], "\(result)")
        #expect(row(".Count")?.dropFirst().prefix(4) == ["property", "u", "42", "emits-change"], "\(result)")
        #expect(row(".Label")?.dropFirst(4).contains("emits-invalidation") == true, "\(result)")
        #expect(row(".Changed")?.dropFirst().prefix(2) == ["signal", "u"], "\(result)")
        #expect(row("org.freedesktop.DBus.Properties") != nil, "\(result)")
    }

    @Test func busctlTreeFindsTheObjects() throws {
        let object = try TestObject()
        defer { object.stop() }
        let result = try object.runTool("busctl", ["tree", "--list", TestObject.name.rawValue])
        #expect(result.succeeded, "\(result)")
        let paths = result.stdout.split(separator: "\n").map(String.init)
        let expected = ["/", "/io", "/io/github", "/io/github/netactivity", TestObject.path, TestObject.childPath]
        #expect(paths == expected.map(\.rawValue), "\(result)")
    }

    @Test func busctlCallsAndReadsProperties() throws {
        let object = try TestObject()
        defer { object.stop() }
        let echo = try object.runTool("busctl", [
            "call", TestObject.name.rawValue, TestObject.path.rawValue, TestObject.interface.rawValue,
            "EchoMany", "sa(ussttt)a{sv}", "x", "1", "7", "L", ":1.1", "1", "2", "3", "1", "k", "u", "5",
        ])
        #expect(echo.stdout == "sa(ussttt)a{sv} \"x\" 1 7 \"L\" \":1.1\" 1 2 3 1 \"k\" u 5\n", "\(echo)")
        let property = try object.runTool("busctl", [
            "get-property", TestObject.name.rawValue, TestObject.path.rawValue, TestObject.interface.rawValue, "Version",
        ])
        #expect(property.stdout == "s \"1.2.3\"\n", "\(property)")
        let wrong = try object.runTool("busctl", [
            "call", TestObject.name.rawValue, TestObject.path.rawValue, TestObject.interface.rawValue, "Echo", "s", "x",
        ])
        #expect(!wrong.succeeded)
        #expect(wrong.stderr.contains("'v'"), "\(wrong)")
    }

    @Test func dbusSendWithOddArgumentsDoesNotUpsetTheServer() throws {
        let object = try TestObject()
        defer { object.stop() }
        func send(_ member: String, _ arguments: [String], printReply: Bool = true) throws -> ProcessResult {
            try object.runTool("dbus-send", [
                "--type=method_call", "--dest=\(TestObject.name)", "--reply-timeout=10000",
            ] + (printReply ? ["--print-reply"] : []) + [
                TestObject.path.rawValue, "\(TestObject.interface).\(member)",
            ] + arguments)
        }
        let echoes: [(String, String)] = [
            ("variant:int32:-5", "int32 -5"),
            ("variant:byte:255", "byte 255"),
            ("variant:boolean:true", "boolean true"),
            ("variant:double:-0.5", "double -0.5"),
            ("variant:uint64:18446744073709551615", "uint64 18446744073709551615"),
            ("variant:int64:-9223372036854775808", "int64 -9223372036854775808"),
            ("variant:objpath:/a/b", "object path \"/a/b\""),
            ("variant:string:", "string \"\""),
            ("variant:string:Grüße 🎉", "string \"Grüße 🎉\""),
        ]
        for (argument, expected) in echoes {
            let result = try send("Echo", [argument])
            #expect(result.succeeded, "\(argument): \(result)")
            #expect(result.stdout.contains(expected), "\(argument): \(result)")
        }
        let dictionary = try send("EchoDict", ["dict:string:int32:one,1,two,2"])
        #expect(dictionary.succeeded && dictionary.stdout.contains("\"two\""), "\(dictionary)")
        let strings = try send("EchoStrings", ["array:string:a,b,c"])
        #expect(strings.succeeded && strings.stdout.contains("\"c\""), "\(strings)")

        let mismatched: [[String]] = [
            ["array:string:a,b"], ["dict:string:int32:one,1,two,2"], ["array:byte:1,2,3"], ["string:a", "int32:1"],
            [], ["variant:int32:1", "variant:int32:2"], ["dict:int64:double:1,1.5"],
        ]
        for arguments in mismatched {
            let result = try send("Echo", arguments)
            #expect(!result.succeeded, "\(arguments): \(result)")
            #expect(result.stderr.contains("InvalidArgs"), "\(arguments): \(result)")
            _ = try send("Echo", arguments, printReply: false)
        }
        #expect(try send("NoSuchMethod", ["array:int16:1,2"]).stderr.contains("UnknownMethod"))

        #expect(object.serverConnection.isConnected)
        #expect(try object.call("Echo", [.variant(.string("still here"))]) == [.variant(.string("still here"))])
    }
}

extension Result {
    fileprivate var error: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
