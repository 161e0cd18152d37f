import DBus
import Testing

/// Type signatures: which strings are signatures at all, which hold a single complete type,
/// and how a signature splits into complete types.
@Suite struct SignatureTests {
    static func nested(_ depth: Int, open: String, close: String, around inner: String) -> String {
        String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
    }

    @Test(arguments: [
        "", "i", "ss", "v", "g", "o", "h", "a{sv}", "a(ussttt)", "aa{s(iv)}", "sa{sv}as", "(i)",
        "a{ya{sv}}", "a{oa{sa{sv}}}", "((i)(s))", "av", "aav",
        String(repeating: "a", count: 32) + "i",
        nested(32, open: "(", close: ")", around: "i"),
        String(repeating: "i", count: 255),
    ])
    func validSignatures(_ text: String) {
        #expect(Signature.isValid(text))
    }

    @Test(arguments: [
        "a", "()", "a()", "a{vs}", "a{(i)s}", "a{as}", "{sv}", "a{sv", "a{s}", "a{sss}", "(i", "i)",
        "z", "a{sv}}", "{", "s\0i", "\0",
        String(repeating: "a", count: 33) + "i",
        nested(33, open: "(", close: ")", around: "i"),
        String(repeating: "i", count: 256),
    ])
    func invalidSignatures(_ text: String) {
        #expect(!Signature.isValid(text))
    }

    @Test(arguments: [
        ("i", true), ("a{sv}", true), ("a(ussttt)", true), ("v", true), ("(ii)", true),
        ("", false), ("ii", false), ("sa{sv}", false), ("a{sv}u", false),
    ] as [(String, Bool)])
    func singleCompleteTypes(_ text: String, _ single: Bool) throws {
        #expect(try Signature(text).isSingleCompleteType == single)
    }

    @Test(arguments: [
        ("sa{sv}u", ["s", "a{sv}", "u"]),
        ("a(ussttt)", ["a(ussttt)"]),
        ("aa{s(iv)}", ["aa{s(iv)}"]),
        ("", []),
        ("ii", ["i", "i"]),
        ("(a(ii)v)a{sa{sv}}as", ["(a(ii)v)", "a{sa{sv}}", "as"]),
        ("vvyb", ["v", "v", "y", "b"]),
        ("((i)(s))aai", ["((i)(s))", "aai"]),
    ] as [(String, [String])])
    func completeTypesSplitTheSignature(_ text: String, _ parts: [String]) throws {
        let types = try Signature(text).completeTypes
        #expect(types.map(\.rawValue) == parts)
        #expect(types.allSatisfy { $0.isSingleCompleteType })
    }

    @Test func deepestAllowedSignaturesSplit() throws {
        let arrays = String(repeating: "a", count: 32) + "i"
        let structs = Self.nested(32, open: "(", close: ")", around: "i")
        let types = try Signature(arrays + structs + "s").completeTypes
        #expect(types.map(\.rawValue) == [arrays, structs, "s"])
    }
}
