import DBus
import Testing

/// Validation tables for the wire names: each kind accepts exactly what the D-Bus
/// specification's grammar allows, and `init(_:)` reports a rejected string as `InvalidArgs`.
@Suite struct NameTests {
    static let longElement = String(repeating: "a", count: 251)

    // MARK: - Object paths

    @Test(arguments: [
        "/", "/a", "/a/b", "/io/github/netactivity/NetActivity1", "/_", "/a_b/C9", "/0abc/1",
        "/" + String(repeating: "x", count: 1000),
    ])
    func validObjectPaths(_ text: String) {
        #expect(ObjectPath.isValid(text))
        #expect(ObjectPath(validating: text)?.rawValue == text)
    }

    @Test(arguments: [
        "", "a", "a/b", "//", "/a/", "/a//b", "/a-b", "/a.b", "/a b", "/ä", "/a\0b", "/\0", "/a/b/",
    ])
    func invalidObjectPaths(_ text: String) {
        #expect(!ObjectPath.isValid(text))
        #expect(ObjectPath(validating: text) == nil)
    }

    @Test func objectPathElementsAndDescendants() {
        let path: ObjectPath = "/io/github/netactivity"
        #expect(path.elements == ["io", "github", "netactivity"])
        #expect(ObjectPath.root.elements.isEmpty)
        #expect(path.isDescendant(of: .root))
        #expect(path.isDescendant(of: "/io/github"))
        #expect(!path.isDescendant(of: path))
        #expect(!path.isDescendant(of: "/io/git"))
        #expect(!ObjectPath.root.isDescendant(of: .root))
        #expect(!ObjectPath("/io").isDescendant(of: path))
        #expect(ObjectPath("/a").isDescendant(of: .root))
        #expect(!ObjectPath("/ab").isDescendant(of: "/a"))
        // Longer than the 15 bytes a string keeps inline.
        let long = ObjectPath(unchecked: "/io/github/netactivity/NetActivity1/activity/4294967295")
        #expect(long.isDescendant(of: "/io/github/netactivity/NetActivity1/activity"))
        #expect(!long.isDescendant(of: "/io/github/netactivity/NetActivity1/activit"))
        #expect(!ObjectPath("/io/github/netactivity/NetActivity1").isDescendant(of: long))
    }

    @Test func objectPathParentAndName() {
        #expect(ObjectPath.root.parentAndName == nil)
        #expect(ObjectPath("/a").parentAndName.map { ($0.parent.rawValue, String($0.name)) } ?? ("", "") == ("/", "a"))
        let activity: ObjectPath = "/io/github/netactivity/NetActivity1/activity/17"
        #expect(
            activity.parentAndName.map { ($0.parent.rawValue, String($0.name)) } ?? ("", "")
                == ("/io/github/netactivity/NetActivity1/activity", "17"))
    }

    // MARK: - Bus names

    @Test(arguments: [
        ":1.42", ":1.0", ":a-b.c_d", ":1.2.3", "org.freedesktop.DBus", "a.b", "a-b.c_d",
        "io.github.netactivity.NetActivity1", "_a._b",
        "a." + String(repeating: "b", count: 253),
    ])
    func validBusNames(_ text: String) {
        #expect(BusName.isValid(text))
        #expect(BusName(validating: text)?.isUnique == text.hasPrefix(":"))
    }

    @Test(arguments: [
        // ":" and ":1" break the specification's two-element rule, but libdbus accepts them.
        "", "a", ".a.b", "a..b", "a.b.", "1a.b", "org.1abc", "a b.c", "ä.b", "a.b\0c",
        "a.b/c", "a." + String(repeating: "b", count: 254),
    ])
    func invalidBusNames(_ text: String) {
        #expect(!BusName.isValid(text))
    }

    // MARK: - Interface and error names

    @Test(arguments: [
        "org.freedesktop.DBus.Properties", "a.b", "a_b.c9", "_a._b", "A.B.C",
        "a." + String(repeating: "b", count: 253),
    ])
    func validInterfaceAndErrorNames(_ text: String) {
        #expect(InterfaceName.isValid(text))
        #expect(ErrorName.isValid(text))
    }

    @Test(arguments: [
        "", "a", "a.", ".a", "a..b", "1a.b", "a.1b", "a-b.c", ":1.2", "a.b c", "a.ä", "a.b\0",
        "a." + String(repeating: "b", count: 254), "Failed",
    ])
    func invalidInterfaceAndErrorNames(_ text: String) {
        #expect(!InterfaceName.isValid(text))
        #expect(!ErrorName.isValid(text))
    }

    // MARK: - Member names

    @Test(arguments: ["Push", "a", "_", "Get_All9", "GetAll", String(repeating: "m", count: 255)])
    func validMemberNames(_ text: String) {
        #expect(MemberName.isValid(text))
    }

    @Test(arguments: [
        "", "9abc", "a.b", "a-b", "a b", "ä", "a\0", String(repeating: "m", count: 256), "a/b",
    ])
    func invalidMemberNames(_ text: String) {
        #expect(!MemberName.isValid(text))
    }

    // MARK: - Throwing initialisers

    @Test func invalidStringsThrowInvalidArgsQuotingTheString() {
        func check<Name: ValidatedName>(_ type: Name.Type, _ text: String) {
            do {
                let name = try Name(text)
                Issue.record("\(Name.kind) '\(text)' was accepted as \(name)")
            } catch {
                #expect(error.name == .invalidArgs)
                #expect(error.message.contains("'\(text)'"), "\(error)")
                #expect(error.message.contains(Name.kind), "\(error)")
            }
        }
        check(ObjectPath.self, "/trailing/")
        check(BusName.self, "1bad.name")
        check(InterfaceName.self, "nodots")
        check(MemberName.self, "9lives")
        check(ErrorName.self, "org..Error")
        check(Signature.self, "a{vs}")
    }

    @Test func validStringsAndLiteralsBuildTheSameName() throws {
        let literal: InterfaceName = "io.github.netactivity.NetActivity1"
        // A variable, not a literal: `InterfaceName("…")` with a literal is literal coercion.
        let text = "io.github.netactivity.NetActivity1"
        #expect(try InterfaceName(text) == literal)
        #expect(literal.description == "io.github.netactivity.NetActivity1")
        let unique = ":1.7"
        #expect(try BusName(unique).isUnique)
        #expect(!BusName.bus.isUnique)
    }

    @Test func errorNamesMatchBusErrorsInCatch() {
        func classify(_ error: any Error) -> String {
            switch error {
            case ErrorName.accessDenied: "denied"
            case ErrorName.invalidArgs: "invalid"
            default: "other"
            }
        }
        #expect(classify(BusError(.accessDenied, "no")) == "denied")
        #expect(classify(BusError(.invalidArgs, "no")) == "invalid")
        #expect(classify(BusError(.failed, "no")) == "other")
        #expect(BusError(.failed, "went wrong").description == "org.freedesktop.DBus.Error.Failed: went wrong")
    }
}
