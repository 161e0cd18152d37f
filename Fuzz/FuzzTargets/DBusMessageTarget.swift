@testable import DBus
import NetActivityContract
@testable import NetActivityService

extension FuzzTarget {
    /// A message as it comes off a bus socket, through libdbus's validation behind the D-Bus
    /// layer's seam: its header fields, its body as arbitrary values, and its body as the
    /// service decodes its methods' arguments (`BeginActivityWithHints`' hints included).
    /// Values decoded, encoded again and decoded once more must encode to the same bytes (but for
    /// a descriptor, which is never sent).
    public static let dbusMessage = FuzzTarget("dbus-message") { bytes in
        guard let message = try? Message(wireBytes: bytes) else { return }
        _ = (message.kind, message.path, message.interface, message.member, message.sender, message.destination)
        _ = (message.errorName, message.signature, message.serial, message.replySerial, message.noReply, message.error)
        _ = NameOwnerChange(message)
        try? message.forEachElementOfFirstArgument { _ in }
        guard let values = try? message.arguments() else { return }
        // The object server's reader (as many values as the checked signature has) must read the
        // same; compared encoded, since a NaN is not equal to itself.
        let counted = try? message.raw.arguments(count: values.count)
        precondition(counted.flatMap(reencoded)?.wireBytes == reencoded(values)?.wireBytes, "the two body readers disagree")

        typealias Main = NetActivityInterface
        _ = try? Main.beginActivity.decode(values)
        if let (_, dictionary) = try? Main.beginActivityWithHints.decode(values) {
            _ = try? Service.hints(dictionary)
        }
        _ = try? Main.updateActivity.decode(values)
        _ = try? Main.updateActivityFraction.decode(values)
        _ = try? Main.endActivity.decode(values)

        // A received descriptor (`h`) only holds its place and cannot be sent again.
        guard !values.contains(where: holdsDescriptor) else { return }
        let first = reencoded(values)
        precondition(first != nil, "values decoded from a valid message cannot be encoded again")
        let second = (try? first?.arguments()).flatMap(reencoded)
        precondition(first?.wireBytes == second?.wireBytes, "values decoded from a message encode differently once decoded again")
    }

    /// Whether `value` has a descriptor in it, at any depth (in a variant, say).
    private static func holdsDescriptor(_ value: Value) -> Bool {
        switch value {
        case .unixFileDescriptor: true
        case .array(_, let elements), .structure(let elements): elements.contains(where: holdsDescriptor)
        case .dictEntry(let key, let inner): holdsDescriptor(key) || holdsDescriptor(inner)
        case .variant(let inner): holdsDescriptor(inner)
        default: false
        }
    }

    private static func reencoded(_ values: [Value]) -> Message? {
        try? Message.signal(path: "/fuzz", interface: "io.github.netactivity.Fuzz", member: "Values", arguments: values)
    }
}
