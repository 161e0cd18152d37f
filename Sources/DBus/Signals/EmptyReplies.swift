/// Reply templates: empty method returns made once per recent caller and copied for each reply
/// after that.
///
/// Building a method return from scratch costs libdbus a fresh header with the reply serial set
/// into it; copying a template and overwriting its reply serial costs much less, and most calls
/// that answer with nothing (Push, Pop, EndActivity) come from a caller that has just made
/// another (figures in docs/benchmarks.md). The copy holds what libdbus's own method return
/// would: destination, reply serial, the no-reply flag, no body; libdbus gives it a fresh serial
/// when it is sent.
final class EmptyReplies {
    private var recent: [(destination: CName, template: Message)] = []
    /// Callers remembered at once: a handful keeps the search short.
    static let limit = 4

    /// The empty reply to the method call `call`; nil when libdbus runs out of memory.
    func reply(to call: RawMessage) -> OwnedMessage? {
        let sender = call.sender
        let template: Message
        if let entry = recent.last(where: { $0.destination.matches(sender) }) {
            template = entry.template
        } else {
            guard let made = Self.template(destination: sender) else { return nil }
            if recent.count == Self.limit { recent.removeFirst() }
            recent.append((sender.map(CName.init) ?? CName(""), made))
            template = made
        }
        guard let reply = template.raw.copy(), reply.raw.setReplySerial(call.serial) else { return nil }
        return reply
    }

    /// A method return to `destination` with the reply serial (a placeholder here) as the
    /// header's first field: libdbus walks the fields to the one it overwrites, so the first is
    /// the quickest to reach.
    private static func template(destination: UnsafePointer<CChar>?) -> Message? {
        guard let template = RawMessage.emptyMethodReturn() else { return nil }
        let raw = template.raw
        raw.setNoReply(true)
        guard raw.setReplySerial(1), destination.map({ raw.setDestination($0) }) ?? true else { return nil }
        return Message(consuming: template)
    }
}
