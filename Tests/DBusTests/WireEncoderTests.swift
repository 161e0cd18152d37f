@testable import DBus
import Testing

/// `WireEncoder` writes the bytes libdbus writes, and a reply made from them is the reply
/// libdbus would have built.
@Suite struct WireEncoderTests {
    /// The body of a signal libdbus builds with `arguments`.
    static func libdbusBody(_ arguments: [Value]) throws -> [UInt8] {
        let wire = try Message.signal(path: "/a", interface: "a.b", member: "C", arguments: arguments).wireBytes
        let length = Int(wire[4]) | Int(wire[5]) << 8 | Int(wire[6]) << 16 | Int(wire[7]) << 24
        return Array(wire.suffix(length))
    }

    @Test(arguments: ValueSamples.all)
    func writesTheBytesLibdbusWrites(_ sample: ValueSample) throws {
        // After a byte, so that every alignment is exercised.
        let arguments: [Value] = [.byte(1), sample.value]
        var encoder = WireEncoder()
        for argument in arguments { encoder.append(argument) }
        #expect(encoder.bytes == (try Self.libdbusBody(arguments)))
    }

    @Test func anArrayFilledValueByValueIsTheSameArray() throws {
        let entries: [Value] = (0..<3).map { .dictEntry(key: .objectPath(ObjectPath(unchecked: "/o/\($0)")), value: .properties([("N", .uint64(UInt64($0)))])) }
        var encoder = WireEncoder()
        encoder.append(.byte(1))
        try encoder.appendArray(of: Signature(unchecked: "{oa{sv}}")) { (inner) throws(BusError) in
            for entry in entries { inner.append(entry) }
        }
        #expect(encoder.bytes == (try Self.libdbusBody([.byte(1), .array(element: Signature(unchecked: "{oa{sv}}"), entries)])))
    }

    @Test func aReplyFromEncodedBytesAnswersTheCall() throws {
        let call = try Message.methodCall(destination: "a.b", path: "/a", interface: "a.b", member: "C")
        call.raw.setSerial(42)
        let values: [Value] = [.string("x"), .properties([("k", .double(0.5))])]
        var wire = call.raw.methodReturnHeader(signature: "sa{sv}")
        for value in values { wire.append(value) }
        let raw = try RawMessage.message(from: wire)
        let reply = Message(consuming: raw)
        #expect(reply.kind == .methodReturn)
        #expect(reply.raw.replySerial == 42)
        #expect(reply.raw.serial == 0, "numbered by the connection that sends it")
        #expect(try reply.arguments() == values)
    }

    @Test func aSignalFromEncodedBytesIsTheSignalLibdbusBuilds() throws {
        let arguments: [Value] = [
            .objectPath("/io/github/netactivity/NetActivity1/activity/7"),
            .dictionary(key: "s", value: "a{sv}", [(.string("a.B"), .properties([("Label", .string("Q&A")), ("Total", .uint64(9))]))]),
        ]
        var wire = RawMessage.signalHeader(
            path: "/io/github/netactivity/NetActivity1", interface: .objectManager, member: "InterfacesAdded",
            signature: "oa{sa{sv}}")
        for argument in arguments { wire.append(argument) }
        let encoded = Message(consuming: try RawMessage.message(from: wire))
        let built = try Message.signal(
            path: "/io/github/netactivity/NetActivity1", interface: .objectManager, member: "InterfacesAdded",
            arguments: arguments)
        #expect(encoded.wireBytes == built.wireBytes)
    }

    @Test(arguments: [
        ([("Application", Value.string("Q&A <b>")), ("ProcessID", .uint32(7))], [] as [MemberName]),
        ([("Count", .uint32(1))], ["Activities"]),
        ([], ["Activities"]),
    ] as [([(MemberName, Value)], [MemberName])])
    func propertiesChangedIsTheSignalLibdbusBuilds(_ changed: [(MemberName, Value)], _ invalidated: [MemberName]) throws {
        let path: ObjectPath = "/io/github/netactivity/NetActivity1/activity/12"
        let encoded = try SignalBuilder().propertiesChanged(
            path: path, interface: "io.github.netactivity.NetActivity1.Activity", changed: changed, invalidated: invalidated)
        let built = try Message.signal(
            path: path, interface: .properties, member: "PropertiesChanged",
            arguments: [
                .string("io.github.netactivity.NetActivity1.Activity"),
                .properties(changed.map { ($0.0.rawValue, $0.1) }),
                .array(element: "s", invalidated.map { .string($0.rawValue) }),
            ])
        #expect(encoded.wireBytes == built.wireBytes)
    }

    @Test func memoryThatCannotBeHadIsAnErrorNotACrash() throws {
        let call = try Message.methodCall(destination: "a.b", path: "/a", interface: "a.b", member: "C")
        call.raw.setSerial(7)
        var wire = call.raw.methodReturnHeader(signature: "s")
        let header = wire.count
        // More than any machine has: malloc says no (under ASan too, with allocator_may_return_null).
        wire.reserveCapacity(Int.max / 4)
        #expect(wire.outOfMemory)
        wire.append(.string("after"))
        #expect(wire.count == header, "nothing is written once out of memory")
        do {
            _ = try RawMessage.message(from: wire)
            Issue.record("a message was made from an encoder out of memory")
        } catch {
            #expect(error.name == BusError.outOfMemory.name)
        }
    }

    @Test func bytesThatBreakTheRulesAreAnErrorNotAMessage() throws {
        let call = try Message.methodCall(destination: "a.b", path: "/a", interface: "a.b", member: "C")
        call.raw.setSerial(7)
        var wire = call.raw.methodReturnHeader(signature: "s")
        wire.append(.uint32(3))
        #expect(throws: BusError.self) { _ = try RawMessage.message(from: wire) }
    }

    @Test func aCopyKeepsItsBytesWhenTheOriginalGoesOnWriting() {
        var original = WireEncoder()
        original.append(.string("first"))
        let copy = original
        original.append(.uint64(9))
        original.patch(UInt32(0), at: 0)
        var expected = WireEncoder()
        expected.append(.string("first"))
        #expect(copy.bytes == expected.bytes)
        #expect(original.count == 24 && copy.count == 10)
    }

    @Test func bytesSurviveGrowingPastTheReservation() {
        var encoder = WireEncoder()
        encoder.reserveCapacity(16)
        let label = String(repeating: "é", count: 40_000)
        for _ in 0..<3 { encoder.append(.string(label)) }
        let bytes = encoder.bytes
        #expect(bytes.count == 3 * (4 + 80_000 + 1) + 2 * 3)
        #expect(Array(bytes[0..<4]) == [0x80, 0x38, 0x01, 0x00])
        #expect(Array(String(decoding: bytes[4..<80_004], as: UTF8.self).utf8) == Array(label.utf8))
    }
}
