internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libdbus's `DBusMessage*`, seen without a reference of its own: valid as long as whoever
/// owns the message keeps it (an `OwnedMessage`, a `Message`, or libdbus's queue during a
/// dispatch).
///
/// The object server answers each call from this view instead of a `Message`, which would cost
/// an allocation and a reference per call (see docs/benchmarks.md). Every libdbus function on
/// messages is called here, and in `ValueCoding.swift` for bodies.
struct RawMessage {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    // MARK: - Making messages; each returns a message the caller owns

    // These three hand out the new reference bare, for callers that make the message inside
    // `withCString` closures (which cannot return a noncopyable value); each wraps it in an
    // `OwnedMessage` as soon as the closure returns.
    static func methodCall(
        destination: UnsafePointer<CChar>?, path: UnsafePointer<CChar>, interface: UnsafePointer<CChar>?,
        member: UnsafePointer<CChar>
    ) -> RawMessage? {
        dbus_message_new_method_call(destination, path, interface, member).map(RawMessage.init)
    }

    static func signal(
        path: UnsafePointer<CChar>, interface: UnsafePointer<CChar>, member: UnsafePointer<CChar>
    ) -> RawMessage? {
        dbus_message_new_signal(path, interface, member).map(RawMessage.init)
    }

    /// A method return with nothing set: no destination, no reply serial.
    static func emptyMethodReturn() -> OwnedMessage? {
        OwnedMessage(created: dbus_message_new(CDBus_MESSAGE_TYPE_METHOD_RETURN))
    }

    /// The successful reply to this method call, its body still empty.
    func methodReturn() -> OwnedMessage? { OwnedMessage(created: dbus_message_new_method_return(pointer)) }

    /// The error reply `name` to this method call, with `text` as its message (the reference
    /// bare, as `methodCall` says).
    func errorReply(name: UnsafePointer<CChar>, text: UnsafePointer<CChar>) -> RawMessage? {
        dbus_message_new_error(pointer, name, text).map(RawMessage.init)
    }

    /// The header of the successful reply to this method call, for a body of type `signature`
    /// to be appended after it; `message(from:)` makes the reply.
    func methodReturnHeader(signature: Signature) -> WireEncoder {
        Self.header(CDBus_MESSAGE_TYPE_METHOD_RETURN, signature: signature, capacity: 0) { fields in
            fields.appendHeaderField(CDBus_HEADER_FIELD_REPLY_SERIAL, .uint32(serial))
            if let sender { fields.appendHeaderField(CDBus_HEADER_FIELD_DESTINATION, .string(String(cString: sender))) }
        }
    }

    /// The header of a signal, for a body of type `signature` to be appended after it;
    /// `message(from:)` makes the signal.
    ///
    /// `capacity`: the bytes the whole signal is expected to take, reserved at once so the
    /// body grows into them rather than through reallocations.
    static func signalHeader(
        path: ObjectPath, interface: InterfaceName, member: MemberName, signature: Signature, capacity: Int = 0
    ) -> WireEncoder {
        header(CDBus_MESSAGE_TYPE_SIGNAL, signature: signature, capacity: capacity) { fields in
            fields.appendHeaderField(CDBus_HEADER_FIELD_PATH, .objectPath(path))
            fields.appendHeaderField(CDBus_HEADER_FIELD_INTERFACE, .string(interface.rawValue))
            fields.appendHeaderField(CDBus_HEADER_FIELD_MEMBER, .string(member.rawValue))
        }
    }

    /// A header of `type` whose fields `writeFields` appends (`appendHeaderField`), then
    /// `signature`'s. Each field, a `(yv)`, is written in place: as a `Value` structure holding a
    /// variant it would cost two allocations, and a list of them another, for every signal sent.
    private static func header(
        _ type: Int32, signature: Signature, capacity: Int, fields writeFields: (inout WireEncoder) -> Void
    ) -> WireEncoder {
        var header = WireEncoder()
        if capacity > 0 { header.reserveCapacity(capacity) }
        // Byte order, type, flags (no reply expected, as libdbus sets on its own replies and
        // signals), protocol version; the body's length (filled in by `message(from:)`) and a
        // serial (replaced there).
        header.append(.byte(UInt8(ascii: "l")))
        header.append(.byte(UInt8(type)))
        header.append(.byte(0x01))
        header.append(.byte(1))
        header.append(.uint32(0))
        header.append(.uint32(1))
        header.appendArray(of: headerField) { fields in
            writeFields(&fields)
            if !signature.rawValue.isEmpty { fields.appendHeaderField(CDBus_HEADER_FIELD_SIGNATURE, .signature(signature)) }
        }
        header.pad(to: 8)
        return header
    }

    private static let headerField: Signature = "(yv)"

    /// The message `wire` holds: a header from `methodReturnHeader(signature:)` and the body
    /// appended after it. libdbus validates header and body in full (as it does every message
    /// it receives), so bytes that break the marshalling rules become an error, not a message.
    static func message(from wire: consuming WireEncoder) throws(BusError) -> OwnedMessage {
        try wire.finishMessage()
        return try message(ofFinished: wire)
    }

    /// The message `wire` holds in full, its body's length already written
    /// (`WireEncoder.finishMessage()`); validated by libdbus as `message(from:)` says.
    static func message(ofFinished wire: borrowing WireEncoder) throws(BusError) -> OwnedMessage {
        guard !wire.outOfMemory else { throw BusError.outOfMemory }
        let parsed = try wire.withUnsafeBytes { (buffer) throws(BusError) in try demarshal(buffer) }
        guard let parsed = OwnedMessage(created: parsed) else { throw BusError.outOfMemory }
        // A copy has serial 0, so the connection numbers it like any message it sends.
        guard let copy = parsed.copy() else { throw BusError.outOfMemory }
        return copy
    }

    /// A new message from the bytes in `buffer`, header and body, validated by libdbus in full
    /// as it validates every message it reads from a socket; nil when libdbus runs out of
    /// memory. The caller owns the reference (`OwnedMessage(created:)`).
    static func demarshal(_ buffer: UnsafeRawBufferPointer) throws(BusError) -> OpaquePointer? {
        guard buffer.count <= Int(Int32.max) else { throw BusError(.limitsExceeded, "\(buffer.count) bytes are no message") }
        return try withDBusError { error in
            dbus_message_demarshal(buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(buffer.count), error)
        }
    }

    /// A copy of header and body, unlocked and with serial 0 so that it can be sent.
    func copy() -> OwnedMessage? { OwnedMessage(created: dbus_message_copy(pointer)) }

    // MARK: - Header

    var type: Message.Kind { Message.Kind(dbus_message_get_type(pointer)) }
    var path: UnsafePointer<CChar>? { dbus_message_get_path(pointer) }
    var interface: UnsafePointer<CChar>? { dbus_message_get_interface(pointer) }
    var member: UnsafePointer<CChar>? { dbus_message_get_member(pointer) }
    var sender: UnsafePointer<CChar>? { dbus_message_get_sender(pointer) }
    var destination: UnsafePointer<CChar>? { dbus_message_get_destination(pointer) }
    var errorName: UnsafePointer<CChar>? { dbus_message_get_error_name(pointer) }
    /// The body's signature; libdbus returns "" rather than nil for an empty body.
    var signature: UnsafePointer<CChar>? { dbus_message_get_signature(pointer) }
    var serial: UInt32 { dbus_message_get_serial(pointer) }
    var replySerial: UInt32 { dbus_message_get_reply_serial(pointer) }
    var noReply: Bool { dbus_message_get_no_reply(pointer) != 0 }

    func isSignal(interface: UnsafePointer<CChar>, member: UnsafePointer<CChar>) -> Bool {
        dbus_message_is_signal(pointer, interface, member) != 0
    }

    /// Numbers an unsent message as a connection would; for tests that answer a call never sent.
    func setSerial(_ serial: UInt32) { dbus_message_set_serial(pointer, serial) }
    /// Sets the reply serial; false when libdbus runs out of memory.
    func setReplySerial(_ serial: UInt32) -> Bool { dbus_message_set_reply_serial(pointer, serial) != 0 }
    /// Sets the destination; false when libdbus runs out of memory.
    func setDestination(_ name: UnsafePointer<CChar>) -> Bool { dbus_message_set_destination(pointer, name) != 0 }
    func setNoReply(_ noReply: Bool) { dbus_message_set_no_reply(pointer, noReply ? 1 : 0) }

    /// Header and body as they go on the wire, or nil when libdbus runs out of memory.
    var wireBytes: [UInt8]? {
        var bytes: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(pointer, &bytes, &length) != 0, let bytes else { return nil }
        defer { dbus_free(bytes) }
        return bytes.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }

    // MARK: - Body

    /// Appends `values`, already checked by `validateForEncoding()`.
    func append(_ values: [Value]) throws(BusError) {
        var writer = BodyWriter(appendingTo: self)
        for value in values { try writer.append(value) }
    }

    /// Decodes the whole body.
    func arguments() throws(BusError) -> [Value] {
        guard var reader = BodyReader(reading: self) else { return [] }
        return try reader.decodeAll()
    }

    /// Decodes the elements of the first argument, an array, one at a time.
    func forEachElementOfFirstArgument(_ body: (Value) -> Void) throws(BusError) {
        guard var reader = BodyReader(reading: self) else { throw BusError(.invalidArgs, "expected an array, got no arguments") }
        try reader.forEachElement(body)
    }

    /// Decodes a body whose signature is known to hold `count` complete types, without growing
    /// the array or asking libdbus for the end of the body.
    func arguments(count: Int) throws(BusError) -> [Value] {
        guard count > 0, var reader = BodyReader(reading: self) else { return [] }
        return try reader.decode(count: count)
    }
}

/// One reference to a libdbus message, given back when the handle goes away: the one place a
/// message is unreferenced. Noncopyable, so a reference is never given back twice nor
/// forgotten, and free of an allocation, so a reply on the hot path costs none.
struct OwnedMessage: ~Copyable {
    /// The message, valid while this handle lives.
    let raw: RawMessage

    /// Takes over the reference `raw` holds.
    init(consuming raw: RawMessage) { self.raw = raw }

    /// Takes over the reference of a message libdbus just made; nil when it made none (out of
    /// memory).
    init?(created pointer: OpaquePointer?) {
        guard let pointer else { return nil }
        raw = RawMessage(pointer)
    }

    /// Takes a reference of its own to a message someone else owns.
    init(borrowing raw: RawMessage) { self.raw = RawMessage(dbus_message_ref(raw.pointer)) }

    /// A copy of header and body, unlocked and with serial 0 so that it can be sent.
    borrowing func copy() -> OwnedMessage? { raw.copy() }

    deinit { dbus_message_unref(raw.pointer) }
}

extension WireEncoder {
    /// One header field, a `(yv)`: its code and its value in a variant.
    fileprivate mutating func appendHeaderField(_ code: Int32, _ value: Value) {
        pad(to: 8)
        append(.byte(UInt8(code)))
        appendVariant(value)
    }
}
