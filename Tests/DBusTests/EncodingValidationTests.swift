import BusTestSupport
import DBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Values libdbus would abort the process on (or put on the wire for the bus to reject) are
/// refused with `InvalidArgs` before libdbus sees them; the process carries on.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct EncodingValidationTests {
    static func nestedVariants(_ depth: Int) -> Value {
        (0..<depth).reduce(Value.int32(1)) { inner, _ in .variant(inner) }
    }

    static func nestedStructs(_ depth: Int) -> Value {
        (0..<depth).reduce(Value.int32(1)) { inner, _ in .structure([inner]) }
    }

    static func nestedArrays(_ depth: Int) -> Value {
        (0..<depth).reduce(Value.int32(1)) { inner, _ in .array(element: inner.signature, [inner]) }
    }

    static let invalid: [ValueSample] = [
        .init("array element of another type", .array(element: "i", [.int32(1), .string("x")])),
        .init("array of structs with a short struct", .array(element: "(ii)", [.structure([.int32(1)])])),
        .init("array of variants holding a bare value", .array(element: "v", [.int32(1)])),
        .init("array element type empty", .array(element: .empty, [])),
        .init("array element type of two types", .array(element: "ii", [])),
        .init("dictionary entry at top level", .dictEntry(key: .string("k"), value: .int32(1))),
        .init("dictionary entry in a struct", .structure([.dictEntry(key: .string("k"), value: .int32(1))])),
        .init("dictionary entry in a variant", .variant(.dictEntry(key: .string("k"), value: .int32(1)))),
        .init(
            "dictionary entry in an array of variants",
            .array(element: "v", [.variant(.dictEntry(key: .string("k"), value: .int32(1)))])),
        .init("empty struct", .structure([])),
        .init("empty struct in a variant", .variant(.structure([]))),
        .init("empty struct in an array", .array(element: Signature(unchecked: "()"), [])),
        .init("string with NUL", .string("before\0after")),
        .init("string with only NUL", .string("\0")),
        .init("NUL in a nested string", .structure([.int32(1), .array(element: "s", [.string("ok"), .string("x\0")])])),
        .init("NUL in a dictionary key", .properties([("a\0b", .int32(1))])),
        .init("NUL in a variant's string", .variant(.variant(.string("\0")))),
        .init("variant dictionary key", .dictionary(key: "v", value: "s", [(.variant(.int32(1)), .string("x"))])),
        .init("struct dictionary key", .dictionary(key: "(i)", value: "s", [(.structure([.int32(1)]), .string("x"))])),
        .init("array dictionary key", .dictionary(key: "as", value: "s", [])),
        .init("33 nested arrays", nestedArrays(33)),
        .init("33 nested structs", nestedStructs(33)),
        .init("struct signature over 255", .structure(Array(repeating: .byte(1), count: 254))),
        // The specification caps the total nesting of a message body, variants included, at
        // 64; dbus-daemon drops a connection that sends more.
        .init("65 nested variants", nestedVariants(65)),
        .init("arrays of variants nested 66 deep", (0..<33).reduce(Value.int32(1)) { inner, _ in
            .array(element: "v", [.variant(inner)])
        }),
    ]

    @Test(arguments: invalid)
    func invalidValueIsRefusedWithInvalidArgs(_ sample: ValueSample) throws {
        let message = try Message.signal(path: "/a", interface: "io.github.netactivity.Test1", member: "Bad")
        do {
            try message.append([sample.value])
            Issue.record("\(sample.name) was encoded as '\(message.signature)'")
        } catch {
            #expect(error.name == .invalidArgs, "\(error)")
        }
        #expect(message.signature == .empty)
    }

    @Test(arguments: invalid)
    func invalidValueIsRefusedWhenBuildingAMessage(_ sample: ValueSample) {
        #expect(throws: BusError.self) {
            try Message.methodCall(
                destination: nil, path: "/a", interface: nil, member: "Bad",
                arguments: [.string("fine"), sample.value])
        }
    }

    @Test func refusedAppendLeavesTheBodyAsItWas() throws {
        let message = try Message.signal(
            path: "/a", interface: "io.github.netactivity.Test1", member: "Partial", arguments: [.uint32(1)])
        #expect(throws: BusError.self) {
            try message.append([.string("valid first"), .structure([])])
        }
        #expect(message.signature == "u")
        #expect(try message.arguments() == [.uint32(1)])
    }

    @Test func deepestAllowedValuesAreAccepted() throws {
        let values = [Self.nestedArrays(32), Self.nestedStructs(32), Self.nestedVariants(32)]
        let message = try Message.signal(
            path: "/a", interface: "io.github.netactivity.Test1", member: "Deep", arguments: values)
        #expect(try message.arguments() == values)
    }

    // A body whose signature passes 255 characters sends libdbus into an endless loop (in
    // append, or in reading the signature back), so these run in a child process that a
    // 2 s alarm ends; the child's stderr is silenced against libdbus's warning flood.

    @Test func bodySignatureOver255CharactersIsRefused() async {
        await #expect(processExitsWith: .success) {
            boundChildProcess()
            do {
                let message = try Message.signal(
                    path: "/a", interface: "io.github.netactivity.Test1", member: "Wide",
                    arguments: Array(repeating: Value.int32(1), count: 256))
                _ = try message.arguments()
                exit(1)  // Built and read back, but no D-Bus peer can accept it.
            } catch {
                exit((error as? BusError)?.name == .invalidArgs ? 0 : 2)
            }
        }
    }

    @Test func bodySignatureOver255CharactersIsRefusedAcrossAppends() async {
        await #expect(processExitsWith: .success) {
            boundChildProcess()
            do {
                let message = try Message.signal(
                    path: "/a", interface: "io.github.netactivity.Test1", member: "Wide",
                    arguments: Array(repeating: Value.uint32(1), count: 200))
                try message.append(Array(repeating: Value.string("x"), count: 100))
                exit(1)
            } catch {
                exit((error as? BusError)?.name == .invalidArgs ? 0 : 2)
            }
        }
    }

    @Test func bodySignatureOf255CharactersIsAccepted() throws {
        let values = Array(repeating: Value.int32(1), count: 254) + [.byte(2)]
        let message = try Message.signal(
            path: "/a", interface: "io.github.netactivity.Test1", member: "Wide", arguments: values)
        #expect(message.signature.rawValue.count == 255)
        #expect(try message.arguments() == values)
    }

    // MARK: - Decoding with an expected signature

    @Test func argumentsExpectingAnotherSignatureNameBoth() throws {
        let message = try Message.signal(
            path: "/a", interface: "io.github.netactivity.Test1", member: "Typed",
            arguments: [.string("x"), .properties([])])
        do {
            let values = try message.arguments(expecting: "a(ussttt)")
            Issue.record("decoded \(values) against the wrong signature")
        } catch {
            #expect(error.name == .invalidArgs)
            #expect(error.message.contains("'a(ussttt)'"), "\(error)")
            #expect(error.message.contains("'sa{sv}'"), "\(error)")
        }
        #expect(try message.arguments(expecting: "sa{sv}") == [.string("x"), .properties([])])
        #expect(throws: BusError.self) { try message.arguments(expecting: "s") }
        #expect(throws: BusError.self) { try message.arguments(expecting: .empty) }
    }
}

/// In an exit test's child: ends it with SIGALRM after 2 s (a hang fails the test instead of
/// the run) and sends its stderr to /dev/null.
func boundChildProcess() {
    alarm(2)
    let null = open("/dev/null", O_WRONLY)
    if null >= 0 { dup2(null, STDERR_FILENO) }
}
