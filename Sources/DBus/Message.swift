internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A D-Bus message: a method call, a method return, an error or a signal.
///
/// Owns one reference to a libdbus `DBusMessage`, released when the object goes away.
public final class Message: @unchecked Sendable {
    // A DBusMessage is not locked by libdbus; a Message is handed from thread to thread but
    // is only ever used by one at a time.
    let raw: OpaquePointer
    // The body signature's length when this object knows it (a message it created and
    // appended to), so `append` need not ask libdbus, which parses the header for it.
    private var knownSignatureLength: Int?

    /// Takes over a reference the caller owns.
    init(consuming raw: OpaquePointer) {
        self.raw = raw
    }

    /// Takes over a new message libdbus just created, whose body is still empty.
    private init(created raw: OpaquePointer) {
        self.raw = raw
        knownSignatureLength = 0
    }

    /// Takes a new reference to a message someone else owns.
    init(borrowing raw: OpaquePointer) {
        self.raw = dbus_message_ref(raw)
    }

    deinit {
        dbus_message_unref(raw)
    }

    /// What kind of message this is.
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal, invalid

        /// The kind of libdbus's message type number.
        init(_ type: Int32) {
            switch type {
            case CDBus_MESSAGE_TYPE_METHOD_CALL: self = .methodCall
            case CDBus_MESSAGE_TYPE_METHOD_RETURN: self = .methodReturn
            case CDBus_MESSAGE_TYPE_ERROR: self = .error
            case CDBus_MESSAGE_TYPE_SIGNAL: self = .signal
            default: self = .invalid
            }
        }
    }

    // MARK: - Building messages

    /// A method call to `destination` (nil on a peer-to-peer connection).
    ///
    /// The corresponding C function is `dbus_message_new_method_call`.
    public static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [Value] = []
    ) throws(BusError) -> Message {
        let raw = withOptionalCString(destination?.rawValue) { destination in
            withOptionalCString(interface?.rawValue) { interface in
                dbus_message_new_method_call(destination, path.rawValue, interface, member.rawValue)
            }
        }
        guard let raw else { throw BusError.outOfMemory }
        let message = Message(created: raw)
        try message.append(arguments)
        return message
    }

    /// A signal from `path`.
    ///
    /// The corresponding C function is `dbus_message_new_signal`.
    public static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [Value] = []
    ) throws(BusError) -> Message {
        // Explicit C strings: passing a String straight to C copies it into a new array.
        let created = path.rawValue.withCString { path in
            interface.rawValue.withCString { interface in
                member.rawValue.withCString { member in dbus_message_new_signal(path, interface, member) }
            }
        }
        guard let raw = created else { throw BusError.outOfMemory }
        let message = Message(created: raw)
        try message.append(arguments)
        return message
    }

    /// The message's size on the wire, header and body, in bytes.
    ///
    /// The corresponding C function is `dbus_message_marshal`.
    public var wireSize: Int {
        var bytes: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &bytes, &length) != 0 else { return 0 }
        dbus_free(bytes)
        return Int(length)
    }

    /// A new message with the same header and body, serial 0 and unlocked, so it can be sent
    /// again; libdbus copies the bytes instead of building them anew.
    ///
    /// The corresponding C function is `dbus_message_copy`.
    public func copy() throws(BusError) -> Message {
        guard let raw = dbus_message_copy(raw) else { throw BusError.outOfMemory }
        return Message(consuming: raw)
    }

    /// The error reply to the method call `call`.
    static func errorReply(to call: OpaquePointer, _ error: BusError) throws(BusError) -> Message {
        // libdbus treats the message as a printf-free C string; NULs would cut it short.
        let text = String(error.message.map { $0 == "\0" ? "\u{FFFD}" : $0 })
        guard let raw = dbus_message_new_error(call, error.name.rawValue, text) else {
            throw BusError.outOfMemory
        }
        return Message(consuming: raw)
    }

    // MARK: - Header fields

    public var kind: Kind { Kind(dbus_message_get_type(raw)) }

    /// The object path, validated by libdbus on receipt.
    public var path: ObjectPath? { dbus_message_get_path(raw).map { ObjectPath(unchecked: String(cString: $0)) } }
    public var interface: InterfaceName? {
        dbus_message_get_interface(raw).map { InterfaceName(unchecked: String(cString: $0)) }
    }
    public var member: MemberName? { dbus_message_get_member(raw).map { MemberName(unchecked: String(cString: $0)) } }
    /// The sender's unique name; the bus fills it in, so it cannot be forged.
    public var sender: BusName? { dbus_message_get_sender(raw).map { BusName(unchecked: String(cString: $0)) } }
    public var destination: BusName? {
        dbus_message_get_destination(raw).map { BusName(unchecked: String(cString: $0)) }
    }
    public var errorName: ErrorName? {
        dbus_message_get_error_name(raw).map { ErrorName(unchecked: String(cString: $0)) }
    }
    /// The signature of the body.
    public var signature: Signature {
        dbus_message_get_signature(raw).map { Signature(unchecked: String(cString: $0)) } ?? .empty
    }
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }
    /// Whether the caller asked for no reply.
    public var noReply: Bool { dbus_message_get_no_reply(raw) != 0 }

    /// Whether this is a signal with the given interface and member.
    public func isSignal(_ interface: InterfaceName, _ member: MemberName) -> Bool {
        dbus_message_is_signal(raw, interface.rawValue, member.rawValue) != 0
    }

    /// The error this message carries, if it is an error reply.
    public var error: BusError? {
        guard kind == .error else { return nil }
        let text = (try? arguments())?.first?.string ?? ""
        return BusError(errorName ?? .failed, text)
    }

    // MARK: - Body

    /// Appends values to the body, checking them first so that libdbus never sees an
    /// ill-typed value.
    public func append(_ values: [Value]) throws(BusError) {
        guard !values.isEmpty else { return }
        let known = knownSignatureLength
        knownSignatureLength = nil  // until every value is in: a failure leaves part of them
        knownSignatureLength = try Self.append(values, to: raw, signatureLength: known)
    }

    /// Appends `values` to the body of `raw`, whose signature is `signatureLength` bytes long
    /// (nil: ask libdbus); returns the new length.
    static func append(_ values: [Value], to raw: OpaquePointer, signatureLength: Int?) throws(BusError) -> Int {
        for value in values { try value.validateForEncoding() }
        // libdbus does not check the body's whole signature against the 255-byte limit.
        let existing = signatureLength ?? dbus_message_get_signature(raw).map { strlen($0) } ?? 0
        let length = existing + values.reduce(0) { $0 + $1.signatureLength }
        guard length <= 255 else {
            throw BusError(.invalidArgs, "the message's signature would be \(length) bytes; D-Bus allows 255")
        }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        for value in values { try value.encode(into: &iter) }
        return length
    }

    /// Sends the successful reply to the method call `call` on `connection`, without a
    /// `Message` for either.
    static func sendReply(to call: OpaquePointer, _ values: [Value], on connection: Connection) throws(BusError) {
        guard let reply = dbus_message_new_method_return(call) else { throw BusError.outOfMemory }
        defer { dbus_message_unref(reply) }
        if !values.isEmpty { _ = try Self.append(values, to: reply, signatureLength: 0) }
        _ = dbus_connection_send(connection.raw, reply, nil)
    }

    /// Decodes the whole body.
    public func arguments() throws(BusError) -> [Value] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        return try Value.decodeAll(&iter)
    }

    /// Decodes the body of `raw`, whose signature is known to hold `count` complete types,
    /// without growing the array or asking libdbus for the end of the body.
    static func arguments(of raw: OpaquePointer, count: Int) throws(BusError) -> [Value] {
        guard count > 0 else { return [] }
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        return try Value.decode(&iter, count: count)
    }

    /// Decodes the body after checking it has exactly the `expected` signature.
    ///
    /// - Throws: `InvalidArgs` naming both signatures.
    public func arguments(expecting expected: Signature) throws(BusError) -> [Value] {
        let actual = signature
        guard actual == expected else {
            throw BusError(
                .invalidArgs,
                "expected arguments of signature '\(expected)', got '\(actual)'")
        }
        return try arguments()
    }
}

/// Calls `body` with a C string for `string`, or with nil.
func withOptionalCString<Result>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
