import BusTestSupport
import DBus
import NetActivityContract

/// Random calls for the fuzz test: mostly well-formed calls with random arguments (valid and
/// invalid ids, empty, long and exotic labels, junk property names), and a share of abuse:
/// bogus members and interfaces, random paths, no interface, and every kind of wrong body.
struct FuzzCalls {
    var random: SeededGenerator

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    /// One random call as `sender` would send it, given what the service holds. Nil when the
    /// random body could not be encoded (too deep, too long a signature): libdbus refuses it
    /// before it is sent, which the DBus layer's own tests cover.
    mutating func call(model: inout ReferenceService, sender: String) -> Message? {
        let (interface, member) = target()
        let path = self.path()
        let arguments: [Value]
        if random.chance(80), let signature = signature(of: member, in: interface) {
            arguments = wellFormedArguments(member, signature: signature, model: &model, sender: sender)
        } else {
            arguments = randomArguments()
        }
        return try? Message.methodCall(
            destination: NetActivityBus.name, path: path, interface: interface, member: member, arguments: arguments)
    }

    // MARK: - Header fields

    private static let bogusMembers: [MemberName] = [
        "push", "PUSH", "Push_", "Pushh", "BeginActivities", "EndActivities", "Update", "Introspect2", "Get_",
        "GetAllX", "Ping2", "NameOwnerChanged", "PropertiesChanged", "Hello", "RequestName", "_",
        MemberName(unchecked: String(repeating: "M", count: 255)),
    ]
    private static let bogusInterfaces: [InterfaceName] = [
        "io.github.netactivity.NetActivity2", "io.github.netactivity", "io.github.netactivity.NetActivity1.Error",
        // Not org.freedesktop.DBus.Local: the bus disconnects a client that sends on it.
        "org.freedesktop.DBus", "org.freedesktop.DBus.ObjectManager", "a.b",
        "org.freedesktop.DBus.Properties2",
    ]
    private static let paths: [ObjectPath] = [
        "/io/github/netactivity/NetActivity1/child", "/io/github/netactivity/NetActivity", "/org/freedesktop/DBus",
        "/io/github/netactivity/NetActivity1/io", "/a", "/io/github/netactivity2", "/_/_/_",
    ]

    /// Every (interface, member) the object answers, in a fixed order so a seed replays.
    private static let methods: [(InterfaceName, MemberName)] = ReferenceService.methods
        .flatMap { interface, members in members.keys.map { (interface, $0) } }
        .sorted { ($0.0.rawValue, $0.1.rawValue) < ($1.0.rawValue, $1.1.rawValue) }

    private mutating func target() -> (InterfaceName?, MemberName) {
        let interfaces = Array(Set(Self.methods.map(\.0))).sorted { $0.rawValue < $1.rawValue }
        var (interface, member): (InterfaceName?, MemberName) = pick(Self.methods)
        // Favour the service's own methods, where the state lives.
        if random.chance(50) {
            interface = NetActivityBus.interface
            member = pick(["Push", "Pop", "BeginActivity", "BeginActivity", "UpdateActivity", "UpdateActivity",
                           "EndActivity", "EndActivity", "BeginActivityWithHints", "UpdateActivityFraction"])
        }
        switch random.next() % 100 {
        case 0..<15: interface = nil  // dispatched by member name
        case 15..<23: interface = pick(Self.bogusInterfaces)
        case 23..<27: interface = pick(interfaces)  // perhaps the wrong one for this member
        default: break
        }
        if random.chance(10) { member = random.chance(70) ? pick(Self.bogusMembers) : randomMember() }
        return (interface, member)
    }

    private mutating func path() -> ObjectPath {
        switch random.next() % 100 {
        case 0..<6: pick(Array(ReferenceService.ancestors).sorted { $0.rawValue < $1.rawValue })
        case 6..<10: random.chance(50) ? pick(Self.paths) : randomPath()
        default: NetActivityBus.path
        }
    }

    private func signature(of member: MemberName, in interface: InterfaceName?) -> Signature? {
        if let interface { return ReferenceService.methods[interface]?[member] }
        return ReferenceService.methods.values.lazy.compactMap { $0[member] }.first
    }

    // MARK: - Well-formed bodies

    private mutating func wellFormedArguments(
        _ member: MemberName, signature: Signature, model: inout ReferenceService, sender: String
    ) -> [Value] {
        switch member.rawValue {
        case "BeginActivity":
            return [.string(label())]
        case "BeginActivityWithHints":
            return [.string(label()), hints()]
        case "UpdateActivityFraction":
            return [.uint32(id(model: &model, sender: sender)), .double(fraction())]
        case "UpdateActivity":
            let (completed, total) = progress()
            return [.uint32(id(model: &model, sender: sender)), .uint64(completed), .uint64(total)]
        case "EndActivity":
            return [.uint32(id(model: &model, sender: sender))]
        case "Get":
            return [.string(interfaceArgument()), .string(propertyArgument())]
        case "GetAll":
            return [.string(interfaceArgument())]
        case "Set":
            return [.string(interfaceArgument()), .string(propertyArgument()), .variant(randomValue(depth: 2))]
        default:
            return []
        }
    }

    /// Labels from empty to far past the limit, ASCII and multi-byte, with 256 and 257 bytes
    /// (the limit and one past) made of characters of every UTF-8 length.
    mutating func label() -> String {
        switch random.next() % 100 {
        case 0..<5: return ""
        case 5..<50: return "fuzz \(random.next() % 100_000)"
        case 50..<65: return randomString(length: Int(random.next() % 40))
        case 65..<75: return filled(bytes: 256)
        case 75..<85: return filled(bytes: 257)
        case 85..<98: return randomString(length: 200 + Int(random.next() % 2_000))
        default: return String(repeating: "h", count: 1_000 + Int(random.next() % 200_000))
        }
    }

    /// A string of exactly `bytes` UTF-8 bytes from characters of 1 to 4 bytes.
    private mutating func filled(bytes: Int) -> String {
        let pieces = ["a", "é", "€", "🛰"]
        var text = ""
        var length = 0
        while length < bytes {
            let piece = pick(pieces.filter { $0.utf8.count <= bytes - length })
            text += piece
            length += piece.utf8.count
        }
        return text
    }

    /// Live ids (own and others'), ended ids, never-given ids, 0 and the maximum.
    private mutating func id(model: inout ReferenceService, sender: String) -> UInt32 {
        let live = model.liveIDs()
        switch random.next() % 100 {
        case 0..<45 where model.activityCount(owner: sender) > 0:
            // Eight tries at one of the sender's own, which is enough for most calls.
            for _ in 0..<8 {
                let id = pick(live)
                if model.live[id]?.owner == sender { return id }
            }
            return pick(live)
        case 0..<65 where !live.isEmpty: return pick(live)
        case 65..<80 where !model.ended.isEmpty: return pick(model.ended)
        case 80..<85: return 0
        case 85..<88: return .max
        case 88..<94: return model.highestID &+ 1 &+ UInt32(random.next() % 3)
        default: return UInt32(truncatingIfNeeded: random.next())
        }
    }

    /// Hints: valid ones, unknown keys, wrong types, kinds that are not one, strings past 255
    /// bytes.
    private mutating func hints() -> Value {
        var entries: [(Value, Value)] = []
        for _ in 0..<Int(random.next() % 5) {
            let key = pick(["application", "icon", "kind", "kind", "Kind", "future", ""])
            let value: Value
            switch random.next() % 100 {
            case 0..<40 where key == "kind" || key == "Kind": value = .string(pick(["download", "upload", "sync", "update", "other"]))
            case 0..<40: value = .string(randomString(length: Int(random.next() % 60)))
            case 40..<55: value = .string(filled(bytes: pick([255, 256])))
            case 55..<65: value = .string(pick(["torrent", "", "DOWNLOAD", "download "]))
            default: value = randomValue(depth: 2)
            }
            entries.append((.string(key), .variant(value)))
        }
        return .dictionary(key: "s", value: "v", entries)
    }

    /// Fractions in range, at its ends, past them, and not numbers.
    private mutating func fraction() -> Double {
        switch random.next() % 100 {
        case 0..<60: return Double(random.next() % 1_001) / 1_000
        case 60..<70: return pick([0, 1, -0.0])
        case 70..<85: return pick([-0.001, 1.001, -1, 2, 1e300])
        default: return pick([.nan, .infinity, -.infinity])
        }
    }

    /// Byte progress: unknown totals, valid pairs, completed past total, extremes.
    private mutating func progress() -> (UInt64, UInt64) {
        switch random.next() % 100 {
        case 0..<25: return (random.next() % 1_000_000, 0)
        case 25..<70:
            let total = random.next() % 10_000_000_000 + 1
            return (random.next() % (total + 1), total)
        case 70..<85:
            let total = random.next() % 1_000_000 + 1
            return (total + 1 + random.next() % 1_000, total)
        case 85..<92: return (.max, .max)
        case 92..<96: return (.max, 0)
        default: return (random.next(), random.next())
        }
    }

    private mutating func interfaceArgument() -> String {
        pick([
            "", NetActivityBus.interface.rawValue, NetActivityBus.interface.rawValue,
            NetActivityBus.interface.rawValue + " ", "io.github.netactivity.netactivity1",
            InterfaceName.properties.rawValue, InterfaceName.peer.rawValue, "no such interface", "🛰",
            String(repeating: "i", count: 1_000),
        ])
    }

    private mutating func propertyArgument() -> String {
        if random.chance(10) { return randomString(length: Int(random.next() % 20)) }
        return pick(ReferenceService.propertyNames + ["count", "ACTIVE", "", "Count ", "Activities2", "Version\n"])
    }

    // MARK: - Random bodies of every type

    /// Zero to five random values: basic types, arrays, dictionaries, structs, variants, now
    /// and then nested as deep as D-Bus allows.
    mutating func randomArguments() -> [Value] {
        if random.chance(5) { return [deeplyNested()] }
        return (0..<Int(random.next() % 6)).map { _ in randomValue(depth: 3) }
    }

    private indirect enum Shape {
        case basic(Int)
        case array(Shape)
        case dictionary(key: Int, value: Shape)
        case structure([Shape])
        case variant
    }

    private static let basicKinds = 12

    private mutating func randomShape(depth: Int) -> Shape {
        guard depth > 0, random.chance(35) else { return .basic(Int(random.next() % UInt64(Self.basicKinds))) }
        switch random.next() % 4 {
        case 0: return .array(randomShape(depth: depth - 1))
        case 1:
            let key = Int(random.next() % UInt64(Self.basicKinds))
            return .dictionary(key: key, value: randomShape(depth: depth - 1))
        case 2: return .structure((0..<1 + Int(random.next() % 4)).map { _ in randomShape(depth: depth - 1) })
        default: return .variant
        }
    }

    mutating func randomValue(depth: Int) -> Value {
        value(of: randomShape(depth: depth), depth: depth)
    }

    private mutating func value(of shape: Shape, depth: Int) -> Value {
        switch shape {
        case .basic(let kind):
            return basicValue(kind)
        case .array(let element):
            let elements = (0..<Int(random.next() % 4)).map { _ in value(of: element, depth: depth - 1) }
            return .array(element: signature(of: element), elements)
        case .dictionary(let key, let valueShape):
            let entries = (0..<Int(random.next() % 4)).map { _ in
                Value.dictEntry(key: basicValue(key), value: value(of: valueShape, depth: depth - 1))
            }
            let element = "{" + signature(of: .basic(key)).rawValue + signature(of: valueShape).rawValue + "}"
            return .array(element: Signature(unchecked: element), entries)
        case .structure(let fields):
            return .structure(fields.map { value(of: $0, depth: depth - 1) })
        case .variant:
            return .variant(randomValue(depth: max(0, depth - 1)))
        }
    }

    private func signature(of shape: Shape) -> Signature {
        switch shape {
        case .basic(let kind): Signature(unchecked: String(Array("ybnqiuxtdsog")[kind]))
        case .array(let element): Signature(unchecked: "a" + signature(of: element).rawValue)
        case .dictionary(let key, let value):
            Signature(unchecked: "a{" + signature(of: .basic(key)).rawValue + signature(of: value).rawValue + "}")
        case .structure(let fields):
            Signature(unchecked: "(" + fields.map { signature(of: $0).rawValue }.joined() + ")")
        case .variant: "v"
        }
    }

    private mutating func basicValue(_ kind: Int) -> Value {
        let bits = random.next()
        switch kind {
        case 0: return .byte(UInt8(truncatingIfNeeded: bits))
        case 1: return .boolean(bits & 1 == 1)
        case 2: return .int16(Int16(truncatingIfNeeded: bits))
        case 3: return .uint16(UInt16(truncatingIfNeeded: bits))
        case 4: return .int32(Int32(truncatingIfNeeded: bits))
        case 5: return .uint32(UInt32(truncatingIfNeeded: bits))
        case 6: return .int64(Int64(bitPattern: bits))
        case 7: return .uint64(bits)
        case 8:
            let special: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, .leastNonzeroMagnitude]
            return .double(random.chance(30) ? pick(special) : Double(bitPattern: bits))
        case 9: return .string(randomString(length: Int(bits % 30)))
        case 10: return .objectPath(randomPath())
        default: return .signature(pick(["", "s", "a{sv}", "(ussttt)", "aaaai", "v", "a(a{s(vv)}y)"]))
        }
    }

    /// Arrays, structs or variants nested to the bus's limits (32 arrays, 32 structs, 64 in all).
    private mutating func deeplyNested() -> Value {
        var value: Value = .uint32(1)
        switch random.next() % 3 {
        case 0:
            for _ in 0..<32 { value = .array(element: value.signature, [value]) }
        case 1:
            for _ in 0..<32 { value = .structure([value]) }
        default:
            for _ in 0..<63 { value = .variant(value) }
        }
        return value
    }

    // MARK: - Random text and names

    /// ASCII and markup characters, controls, multi-byte letters, emoji (one a ZWJ sequence),
    /// a combining accent, zero-width and right-to-left marks, right-to-left and CJK script.
    private static let alphabet: [Character] = Array(
        "abcXYZ019 _-./:<>&\"'\\\u{1}\u{7f}\t\n" + "éß€🛰👩‍👩‍👧\u{301}\u{200B}\u{202E}" + "שלום漢字\u{FFFD}")

    private mutating func randomString(length: Int) -> String {
        String((0..<length).map { _ in pick(Self.alphabet) })
    }

    private mutating func randomMember() -> MemberName {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
        let digits = Array("0123456789")
        let length = 1 + Int(random.next() % 40)
        let text = String(pick(letters)) + String((1..<length).map { _ in pick(letters + digits) })
        return MemberName(unchecked: text)
    }

    private mutating func randomPath() -> ObjectPath {
        let letters = Array("abcXYZ019_")
        let elements = (0..<Int(random.next() % 5)).map { _ in
            String((0..<1 + Int(random.next() % 8)).map { _ in pick(letters) })
        }
        return ObjectPath(unchecked: "/" + elements.joined(separator: "/"))
    }

    private mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[Int(random.next() % UInt64(elements.count))]
    }
}
