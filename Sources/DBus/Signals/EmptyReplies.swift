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
    private var recent: [(destination: CName, template: RawMessage)] = []
    /// Callers remembered at once: a handful keeps the search short.
    static let limit = 4

    deinit {
        for entry in recent { entry.template.release() }
    }

    /// The empty reply to the method call `call`, with one reference the caller owns; nil when
    /// libdbus runs out of memory.
    func reply(to call: RawMessage) -> RawMessage? {
        let sender = call.sender
        let template: RawMessage
        if let entry = recent.last(where: { $0.destination.matches(sender) }) {
            template = entry.template
        } else {
            guard let made = Self.template(destination: sender) else { return nil }
            if recent.count == Self.limit { recent.removeFirst().template.release() }
            recent.append((sender.map(CName.init) ?? CName(""), made))
            template = made
        }
        guard let reply = template.copy() else { return nil }
        guard reply.setReplySerial(call.serial) else {
            reply.release()
            return nil
        }
        return reply
    }

    /// A method return to `destination` with the reply serial (a placeholder here) as the
    /// header's first field: libdbus walks the fields to the one it overwrites, so the first is
    /// the quickest to reach.
    private static func template(destination: UnsafePointer<CChar>?) -> RawMessage? {
        guard let template = RawMessage.emptyMethodReturn() else { return nil }
        template.setNoReply(true)
        guard template.setReplySerial(1), destination.map({ template.setDestination($0) }) ?? true else {
            template.release()
            return nil
        }
        return template
    }
}
