import DBus
import Testing

/// Values written into a real libdbus message and read back out.
@Suite struct ValueRoundTripTests {
    static func signal(_ arguments: [Value]) throws -> Message {
        try Message.signal(
            path: "/io/github/netactivity/Test", interface: "io.github.netactivity.Test1",
            member: "Values", arguments: arguments)
    }

    @Test(arguments: ValueSamples.all)
    func valueRoundTripsThroughAMessage(_ sample: ValueSample) throws {
        let message = try Self.signal([sample.value])
        #expect(message.signature == sample.value.signature)
        let decoded = try message.arguments()
        #expect(bitwiseEqual(decoded, [sample.value]), "decoded \(decoded)")
    }

    @Test(arguments: ValueSamples.all)
    func valueRoundTripsInsideAVariant(_ sample: ValueSample) throws {
        let message = try Self.signal([.variant(sample.value), .string("after")])
        #expect(message.signature == "vs")
        let decoded = try message.arguments(expecting: "vs")
        #expect(bitwiseEqual(decoded, [.variant(sample.value), .string("after")]), "decoded \(decoded)")
    }

    @Test func theFirstArgumentsElementsComeOneAtATimeInOrder() throws {
        let entries: [Value] = (0..<3).map {
            .dictEntry(key: .objectPath(ObjectPath(unchecked: "/o/\($0)")), value: .properties([("N", .uint64(UInt64($0)))]))
        }
        let message = try Self.signal([.array(element: Signature(unchecked: "{oa{sv}}"), entries), .string("after")])
        var handed: [Value] = []
        try message.forEachElementOfFirstArgument { handed.append($0) }
        #expect(handed == entries)

        var none: [Value] = []
        try Self.signal([.array(element: "s", [])]).forEachElementOfFirstArgument { none.append($0) }
        #expect(none.isEmpty)
        #expect(throws: BusError.self) { try Self.signal([.string("not an array")]).forEachElementOfFirstArgument { _ in } }
        #expect(throws: BusError.self) { try Self.signal([]).forEachElementOfFirstArgument { _ in } }
    }

    @Test func messageSignatureIsTheConcatenationOfTheValues() throws {
        // Bodies are cut where the signature would pass D-Bus's 255-character limit.
        var chunks: [[Value]] = [[]]
        for value in ValueSamples.all.map(\.value) {
            let length = chunks[chunks.count - 1].map(\.signature.rawValue.count).reduce(0, +)
            if length + value.signature.rawValue.count > 255 { chunks.append([]) }
            chunks[chunks.count - 1].append(value)
        }
        for chunk in chunks {
            let message = try Self.signal(chunk)
            #expect(message.signature.rawValue == chunk.map(\.signature.rawValue).joined())
            #expect(bitwiseEqual(try message.arguments(), chunk))
        }
    }

    @Test func appendingTwiceAddsToTheBody() throws {
        let message = try Self.signal([.string("first")])
        try message.append([.uint32(2), .properties([("k", .boolean(true))])])
        #expect(message.signature == "sua{sv}")
        #expect(try message.arguments() == [.string("first"), .uint32(2), .properties([("k", .boolean(true))])])
    }

    @Test func emptyBodyHasEmptySignatureAndNoArguments() throws {
        let message = try Self.signal([])
        #expect(message.signature == .empty)
        #expect(try message.arguments().isEmpty)
        #expect(try message.arguments(expecting: .empty).isEmpty)
    }

    @Test func methodCallCarriesItsHeadersAndBody() throws {
        let call = try Message.methodCall(
            destination: "io.github.netactivity.Test", path: "/a", interface: "io.github.netactivity.Test1",
            member: "Echo", arguments: [.variant(.int32(1))])
        #expect(call.kind == .methodCall)
        #expect(call.destination == "io.github.netactivity.Test")
        #expect(call.path == "/a")
        #expect(call.interface == "io.github.netactivity.Test1")
        #expect(call.member == "Echo")
        #expect(!call.noReply)
        #expect(call.error == nil)
        #expect(try call.arguments() == [.variant(.int32(1))])

        // Replies need a call that was sent (libdbus aborts on serial 0): see ObjectServerTests.
    }

    @Test func signalHeaders() throws {
        let message = try Self.signal([])
        #expect(message.kind == .signal)
        #expect(message.isSignal("io.github.netactivity.Test1", "Values"))
        #expect(!message.isSignal("io.github.netactivity.Test1", "Other"))
        #expect(message.interface == "io.github.netactivity.Test1")
        #expect(message.path == "/io/github/netactivity/Test")
    }

    // MARK: - Dictionaries

    @Test func dictionaryBuildsAnArrayOfEntriesInOrder() {
        let dictionary = Value.dictionary(
            key: "s", value: "i", [(.string("b"), .int32(2)), (.string("a"), .int32(1))])
        #expect(dictionary.signature == "a{si}")
        #expect(dictionary.elements == [
            .dictEntry(key: .string("b"), value: .int32(2)), .dictEntry(key: .string("a"), value: .int32(1)),
        ])
        #expect(Value.properties([("x", .byte(1))]).signature == "a{sv}")
        #expect(Value.properties([("x", .byte(1))]).elements == [.dictEntry(key: .string("x"), value: .variant(.byte(1)))])
    }

    @Test func stringKeyedEntriesReadADictionaryLaterKeysWinning() throws {
        let properties = Value.properties([("a", .int32(1)), ("b", .string("x")), ("a", .int32(2))])
        let decoded = try Self.signal([properties]).arguments()
        #expect(decoded.first?.stringKeyedEntries == ["a": .variant(.int32(2)), "b": .variant(.string("x"))])
        #expect(Value.properties([]).stringKeyedEntries == [:])
        #expect(Value.dictionary(key: "s", value: "u", [(.string("n"), .uint32(3))]).stringKeyedEntries == ["n": .uint32(3)])
    }

    @Test(arguments: [
        Value.dictionary(key: "i", value: "s", [(.int32(1), .string("x"))]),
        Value.dictionary(key: "o", value: "s", [(.objectPath("/a"), .string("x"))]),
        Value.array(element: "s", [.string("not a dictionary")]),
        Value.string("scalar"),
        Value.variant(.properties([("k", .int32(1))])),
    ])
    func stringKeyedEntriesIsNilForOtherValues(_ value: Value) {
        #expect(value.stringKeyedEntries == nil)
    }

    @Test func accessorsReadOnlyTheirOwnCase() {
        #expect(Value.string("s").string == "s")
        #expect(Value.objectPath("/p").string == "/p")
        #expect(Value.signature("a{sv}").string == "a{sv}")
        #expect(Value.int32(1).string == nil)
        #expect(Value.boolean(true).bool == true)
        #expect(Value.uint32(4).uint32 == 4)
        #expect(Value.int32(4).uint32 == nil)
        #expect(Value.int32(-4).int32 == -4)
        #expect(Value.uint64(.max).uint64 == .max)
        #expect(Value.int64(.min).int64 == .min)
        #expect(Value.double(0.5).double == 0.5)
        #expect(Value.structure([.byte(1)]).fields == [.byte(1)])
        #expect(Value.variant(.byte(1)).unwrapped == .byte(1))
        #expect(Value.byte(1).unwrapped == nil)
        #expect(Value.array(element: "y", []).elements == [])
        #expect(Value.structure([]).elements == nil)
    }
}
