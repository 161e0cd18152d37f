/// The message bus's own interface, `org.freedesktop.DBus` at `/org/freedesktop/DBus`, declared
/// with the same typed descriptors as any other interface, as far as NetActivity uses it.
public enum BusDriver {
    /// The bus's object.
    public static let path: ObjectPath = "/org/freedesktop/DBus"

    public static let requestName = MethodDescriptor<UInt32, String, UInt32>(
        "RequestName", of: .bus, "name", "flags", returning: ["reply"],
        doc: "Asks for a well-known name; the reply says whether the caller now owns it.")
    public static let releaseName = MethodDescriptor<UInt32, String>(
        "ReleaseName", of: .bus, "name", returning: ["reply"], doc: "Gives a well-known name up.")
    public static let getNameOwner = MethodDescriptor<String, String>(
        "GetNameOwner", of: .bus, "name", returning: ["owner"],
        doc: "The unique name owning a name; NameHasNoOwner when none does.")
    public static let getConnectionUnixProcessID = MethodDescriptor<UInt32, String>(
        "GetConnectionUnixProcessID", of: .bus, "name", returning: ["pid"],
        doc: "The process id of the connection owning a name.")
    public static let getConnectionCredentials = MethodDescriptor<VariantDictionary, String>(
        "GetConnectionCredentials", of: .bus, "name", returning: ["credentials"],
        doc: "What the bus knows of a connection: UnixUserID, ProcessID and more.")
    public static let addMatch = MethodDescriptor<NoReply, String>(
        "AddMatch", of: .bus, "rule", doc: "Subscribes the caller to the messages a match rule selects.")
    public static let removeMatch = MethodDescriptor<NoReply, String>(
        "RemoveMatch", of: .bus, "rule", doc: "Drops a subscription made with AddMatch.")

    public static let nameOwnerChanged = SignalDescriptor<String, String, String>(
        "NameOwnerChanged", of: .bus, "name", "old_owner", "new_owner",
        doc: "A name changed hands; an empty owner is none.")
    public static let nameLost = SignalDescriptor<String>(
        "NameLost", of: .bus, "name", doc: "The receiving connection no longer owns a name.")
    public static let nameAcquired = SignalDescriptor<String>(
        "NameAcquired", of: .bus, "name", doc: "The receiving connection now owns a name.")
}

/// One `NameOwnerChanged` from the bus: the one decoder of it, for every part that follows
/// names (the client's service, the bridge's programs, the tray's watcher, the service's owners).
public struct NameOwnerChange: Sendable, Equatable {
    /// The name that changed hands: a well-known name, or a unique one (`:1.42`) that came or went.
    public let name: BusName
    /// Its owner before, nil for none.
    public let oldOwner: BusName?
    /// Its owner now, nil for none: the name left.
    public let newOwner: BusName?

    /// The change `message` announces; nil for any other message, including a
    /// `NameOwnerChanged` that a peer, not the bus, sent, or one with names that are not names.
    public init?(_ message: Message) {
        guard message.sender == .bus, let (name, old, new) = BusDriver.nameOwnerChanged.decode(message),
            let name = BusName(validating: name)
        else { return nil }
        func owner(_ text: String) -> BusName?? {
            if text.isEmpty { return .some(nil) }
            guard let owner = BusName(validating: text), owner.isUnique else { return nil }
            return .some(owner)
        }
        guard let oldOwner = owner(old), let newOwner = owner(new) else { return nil }
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }

    /// The match rule for changes of `name`'s owner.
    public static func matchRule(for name: BusName) -> String {
        BusDriver.nameOwnerChanged.matchRule(sender: .bus, path: BusDriver.path, arguments: [0: name.rawValue])
    }

    /// The match rule for every name that is left without an owner: every client that leaves.
    public static let departuresMatchRule = BusDriver.nameOwnerChanged.matchRule(
        sender: .bus, path: BusDriver.path, arguments: [2: ""])
}

extension Connection {
    /// Calls `method` of the bus itself without waiting: `reply` runs on the connection's loop
    /// with the decoded reply, or the error (a reply of another shape is `InvalidArgs`).
    public func callBus<Reply, each Input>(
        _ method: MethodDescriptor<Reply, repeat each Input>, _ input: repeat each Input,
        timeout: Duration = .seconds(25), reply: @escaping (Result<Reply, BusError>) -> Void
    ) {
        call(method, repeat each input, destination: .bus, path: BusDriver.path, timeout: timeout, reply: reply)
    }

    /// Calls `method` on `destination`'s object at `path` without waiting: `reply` runs on the
    /// connection's loop with the decoded reply, or the error (a reply of another shape is
    /// `InvalidArgs`).
    public func call<Reply, each Input>(
        _ method: MethodDescriptor<Reply, repeat each Input>, _ input: repeat each Input, destination: BusName,
        path: ObjectPath, timeout: Duration = .seconds(25), reply: @escaping (Result<Reply, BusError>) -> Void
    ) {
        let message: Message
        do {
            message = try method.call(repeat each input, destination: destination, path: path)
        } catch {
            reply(.failure(error))
            return
        }
        send(message, timeout: timeout) { result in
            reply(result.flatMap { message in Self.decodeReply(message, of: method) })
        }
    }

    /// Calls `method` of the bus itself and waits for its reply. Blocks the calling thread: for
    /// start-up, or a thread that may wait.
    func callBusWaiting<Reply, each Input>(
        _ method: MethodDescriptor<Reply, repeat each Input>, _ input: repeat each Input
    ) throws(BusError) -> Reply {
        try callWaiting(method, repeat each input, destination: .bus, path: BusDriver.path)
    }

    /// Calls `method` on `destination`'s object at `path` and waits at most `timeout` for its
    /// decoded reply (a reply of another shape is `InvalidArgs`). Blocks the calling thread:
    /// for start-up, or a rare question a loop may wait for.
    public func callWaiting<Reply, each Input>(
        _ method: MethodDescriptor<Reply, repeat each Input>, _ input: repeat each Input, destination: BusName,
        path: ObjectPath, timeout: Duration = .seconds(25)
    ) throws(BusError) -> Reply {
        let message = try method.call(repeat each input, destination: destination, path: path)
        return try Self.decodeReply(call(message, timeout: timeout), of: method).get()
    }

    private static func decodeReply<Reply, each Input>(
        _ message: Message, of method: MethodDescriptor<Reply, repeat each Input>
    ) -> Result<Reply, BusError> {
        guard let values = try? message.arguments(), let decoded = method.reply(values) else {
            return .failure(BusError(.invalidArgs, "unexpected reply to \(method.name): not \(method.declaration.outputSignature)"))
        }
        return .success(decoded)
    }
}
