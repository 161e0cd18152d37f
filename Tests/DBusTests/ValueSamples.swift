import DBus
import Testing

/// One value of the D-Bus type system with a name for test reports.
struct ValueSample: Sendable, CustomTestStringConvertible {
    let name: String
    let value: Value

    init(_ name: String, _ value: Value) {
        self.name = name
        self.value = value
    }

    var testDescription: String { "\(name) (\(value.signature))" }
}

/// Every type the layer supports, at its extremes, alone and nested.
enum ValueSamples {
    static let activity: Value = .structure([
        .uint32(7), .string("Downloading"), .string(":1.42"), .uint64(1), .uint64(.max), .uint64(0),
    ])

    /// U+FFFE, U+FFFF, U+FDD0 and U+10FFFF: valid in D-Bus strings, refused in Swift literals.
    static let noncharacters = String(
        String.UnicodeScalarView([0xFFFE, 0xFFFF, 0xFDD0, 0x10FFFF].compactMap(Unicode.Scalar.init)))

    static let basic: [ValueSample] = [
        .init("byte 0", .byte(0)),
        .init("byte 255", .byte(255)),
        .init("true", .boolean(true)),
        .init("false", .boolean(false)),
        .init("int16 min", .int16(.min)),
        .init("int16 max", .int16(.max)),
        .init("uint16 max", .uint16(.max)),
        .init("int32 min", .int32(.min)),
        .init("int32 max", .int32(.max)),
        .init("uint32 max", .uint32(.max)),
        .init("int64 min", .int64(.min)),
        .init("int64 max", .int64(.max)),
        .init("uint64 max", .uint64(.max)),
        .init("double zero", .double(0)),
        .init("double negative zero", .double(-0.0)),
        .init("double pi", .double(.pi)),
        .init("double infinity", .double(.infinity)),
        .init("double minus infinity", .double(-.infinity)),
        .init("double greatest", .double(.greatestFiniteMagnitude)),
        .init("double least nonzero", .double(.leastNonzeroMagnitude)),
        .init("double nan", .double(.nan)),
        .init("empty string", .string("")),
        .init("ascii string", .string("hello, bus")),
        .init("unicode string", .string("Grüße, 東京 🎉 👩‍👩‍👧 \u{1F1EB}\u{1F1F7}")),
        .init("noncharacters", .string(noncharacters)),
        .init("control characters", .string("tab\tnewline\n\u{1}\u{7F}")),
        .init("long string", .string(String(repeating: "0123456789abcdef", count: 65_536))),
        .init("root path", .objectPath(.root)),
        .init("object path", .objectPath("/io/github/netactivity/NetActivity1")),
        .init("empty signature", .signature(.empty)),
        .init("signature", .signature("a{sa(ussttt)}v")),
    ]

    static let containers: [ValueSample] = [
        .init("ay", .array(element: "y", [.byte(0), .byte(1), .byte(255)])),
        .init("ab", .array(element: "b", [.boolean(true), .boolean(false)])),
        .init("an", .array(element: "n", [.int16(.min), .int16(.max)])),
        .init("aq", .array(element: "q", [.uint16(0), .uint16(.max)])),
        .init("ai", .array(element: "i", [.int32(.min), .int32(0), .int32(.max)])),
        .init("au", .array(element: "u", [.uint32(.max)])),
        .init("ax", .array(element: "x", [.int64(.min), .int64(.max)])),
        .init("at", .array(element: "t", [.uint64(.max), .uint64(0)])),
        .init("ad", .array(element: "d", [.double(-0.0), .double(1e300), .double(.nan)])),
        .init("as", .array(element: "s", [.string(""), .string("🎉"), .string("b")])),
        .init("ao", .array(element: "o", [.objectPath(.root), .objectPath("/a/b")])),
        .init("ag", .array(element: "g", [.signature(.empty), .signature("a{sv}")])),
        .init("av", .array(element: "v", [.variant(.int32(1)), .variant(.string("x"))])),
        .init("empty ay", .array(element: "y", [])),
        .init("empty as", .array(element: "s", [])),
        .init("empty a(ussttt)", .array(element: "(ussttt)", [])),
        .init("empty aa{sv}", .array(element: "aa{sv}", [])),
        .init("empty a{sv}", .properties([])),
        .init("a(ussttt)", .array(element: "(ussttt)", [activity, activity])),
        .init(
            "a{sv} of mixed variants",
            .properties([
                ("Active", .boolean(true)), ("Count", .uint32(3)), ("Label", .string("Sync")),
                ("Path", .objectPath("/a")), ("Progress", .double(0.5)),
                ("Activities", .array(element: "(ussttt)", [activity])),
            ])),
        .init("a{is}", .dictionary(key: "i", value: "s", [(.int32(-1), .string("minus")), (.int32(1), .string("one"))])),
        .init("a{oas}", .dictionary(key: "o", value: "as", [(.objectPath("/a"), .array(element: "s", [.string("x")]))])),
        .init("a{yv}", .dictionary(key: "y", value: "v", [(.byte(1), .variant(.double(2)))])),
        .init(
            "a{sa{sv}}",
            .dictionary(key: "s", value: "a{sv}", [
                (.string("io.github.netactivity.NetActivity1"), .properties([("Count", .uint32(1))])),
                (.string("empty"), .properties([])),
            ])),
        .init(
            "(a(ii)v)",
            .structure([
                .array(element: "(ii)", [.structure([.int32(1), .int32(2)]), .structure([.int32(-3), .int32(4)])]),
                .variant(.string("tail")),
            ])),
        .init("((i)(s))", .structure([.structure([.int32(1)]), .structure([.string("s")])])),
        .init(
            "variant in variant with array",
            .variant(.variant(.array(element: "i", [.int32(1), .int32(2)])))),
        .init("variant of struct", .variant(.structure([.string("a"), .variant(.boolean(false))]))),
        .init("variant of dictionary", .variant(.properties([("k", .variant(.byte(9)))]))),
        .init(
            "aas with empty inner",
            .array(element: "as", [.array(element: "s", []), .array(element: "s", [.string("z")])])),
        .init("aay", .array(element: "ay", [.array(element: "y", [.byte(1)])])),
        .init(
            "32 nested arrays",
            (0..<31).reduce(Value.array(element: "i", [.int32(5)])) { inner, _ in
                .array(element: inner.signature, [inner])
            }),
    ]

    static let all = basic + containers
}

/// Equality that also tells -0.0 from 0.0 and matches NaN with NaN: the wire must carry the
/// exact bits.
func bitwiseEqual(_ lhs: Value, _ rhs: Value) -> Bool {
    switch (lhs, rhs) {
    case (.double(let left), .double(let right)):
        return left.bitPattern == right.bitPattern
    case (.array(let leftElement, let left), .array(let rightElement, let right)):
        return leftElement == rightElement && bitwiseEqual(left, right)
    case (.structure(let left), .structure(let right)):
        return bitwiseEqual(left, right)
    case (.dictEntry(let leftKey, let leftValue), .dictEntry(let rightKey, let rightValue)):
        return bitwiseEqual(leftKey, rightKey) && bitwiseEqual(leftValue, rightValue)
    case (.variant(let left), .variant(let right)):
        return bitwiseEqual(left, right)
    default:
        return lhs == rhs
    }
}

func bitwiseEqual(_ lhs: [Value], _ rhs: [Value]) -> Bool {
    lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { bitwiseEqual($0, $1) }
}
