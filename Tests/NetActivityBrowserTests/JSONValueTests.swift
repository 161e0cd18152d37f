import NetActivityBrowser
import Testing

/// The host's own JSON parser: RFC 8259, strictly, and bounded.
@Suite struct JSONValueTests {
    func parse(_ text: String) -> JSONValue? {
        try? JSONValue.parse(Array(text.utf8))
    }

    @Test func valuesOfEveryKind() {
        #expect(parse(#" {"a": [1, -2.5e3, true, false, null, "x"], "b": {}} "#) == .object([
            "a": .array([.number(1), .number(-2500), .bool(true), .bool(false), .null, .string("x")]),
            "b": .object([:]),
        ]))
        #expect(parse("[]") == .array([]))
        #expect(parse("0") == .number(0))
        #expect(parse(#""""#) == .string(""))
    }

    @Test func escapesAndSurrogatePairs() {
        #expect(parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{08}\u{0C}\n\r\t"))
        #expect(parse(#""\u00e9\u20AC\ud83d\ude00""#) == .string("é€😀"))
        #expect(parse(#""é😀""#) == .string("é😀"))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "{\"a\" 1}", "[1 2]", "01", "-", "1.", ".5", "1e", "+1",
        "tru", "nul", "\"abc", "\"a\nb\"", #""\x""#, #""\u12""#, #""\ud83d""#, #""\ud83dx""#, #""\ud83d\u0041""#,
        #""\udc00""#, #""\u+041""#, #""\u-000""#, #""\ud83d\u+c00""#, "1 2", "{} x", "NaN", "Infinity",
    ])
    func malformedTextIsRefused(text: String) {
        #expect(parse(text) == nil, "\(text.debugDescription) parsed")
    }

    @Test func nestingIsBounded() {
        let allowed = String(repeating: "[", count: JSONValue.maximumDepth) + String(repeating: "]", count: JSONValue.maximumDepth)
        #expect(parse(allowed) != nil)
        let deeper = "[" + allowed + "]"
        #expect(parse(deeper) == nil)
        // A megabyte of brackets costs no stack.
        #expect(parse(String(repeating: "[", count: 1 << 20)) == nil)
        #expect(parse(String(repeating: "{\"a\":", count: 100_000)) == nil)
    }
}
