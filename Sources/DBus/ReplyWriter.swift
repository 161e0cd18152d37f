internal import CDBus

/// Writes a reply's body value by value, for a reply too large to build as one `Value` first
/// (an ObjectManager's `GetManagedObjects` over tens of thousands of objects).
///
/// Each value is checked before libdbus sees it, as `Message.append` does.
public struct ReplyWriter: ~Copyable {
    private var iter: DBusMessageIter

    init(iter: DBusMessageIter) {
        self.iter = iter
    }

    /// Appends one value.
    public mutating func append(_ value: Value) throws(BusError) {
        // A dictionary entry is no complete type on its own: its key and value are checked.
        if case .dictEntry(let key, let entryValue) = value {
            try key.validateForEncoding()
            try entryValue.validateForEncoding()
        } else {
            try value.validateForEncoding()
        }
        try value.encode(into: &iter)
    }

    /// Appends an array of `element`-typed values that `fill` appends one at a time.
    public mutating func appendArray(
        of element: Signature, _ fill: (inout ReplyWriter) throws(BusError) -> Void
    ) throws(BusError) {
        var sub = DBusMessageIter()
        let opened = element.rawValue.withCString { dbus_message_iter_open_container(&iter, CDBus_TYPE_ARRAY, $0, &sub) }
        guard opened != 0 else { throw BusError.outOfMemory }
        var writer = ReplyWriter(iter: sub)
        do {
            try fill(&writer)
        } catch {
            dbus_message_iter_abandon_container(&iter, &writer.iter)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &writer.iter) != 0 else { throw BusError.outOfMemory }
    }

    /// Sends the reply to `call` that `write` fills.
    static func sendReply(
        to call: OpaquePointer, on connection: Connection, _ write: (inout ReplyWriter) throws -> Void
    ) throws {
        guard let reply = dbus_message_new_method_return(call) else { throw BusError.outOfMemory }
        defer { dbus_message_unref(reply) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(reply, &iter)
        var writer = ReplyWriter(iter: iter)
        try write(&writer)
        connection.queue(Message(borrowing: reply))
    }
}
