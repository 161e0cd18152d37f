internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libdbus's `DBusMessage*`, seen without a reference of its own: valid as long as whoever
/// owns the message keeps it (a `Message`, libdbus's queue during a dispatch, or code that
/// called `retain`/`release` itself).
///
/// The object server answers each call from this view instead of a `Message`, which would cost
/// an allocation and a reference per call (see docs/benchmarks.md). Every libdbus function on
/// messages is called here, and in `ValueCoding.swift` for bodies.
struct RawMessage {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    // MARK: - Ownership

    /// Takes one more reference, to be given back with `release()`.
    @discardableResult
    func retain() -> RawMessage { RawMessage(dbus_message_ref(pointer)) }

    /// Gives back one reference.
    func release() { dbus_message_unref(pointer) }

    // MARK: - Making messages; each returns a message with one reference the caller owns

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
    static func emptyMethodReturn() -> RawMessage? {
        dbus_message_new(CDBus_MESSAGE_TYPE_METHOD_RETURN).map(RawMessage.init)
    }

    /// The successful reply to this method call, its body still empty.
    func methodReturn() -> RawMessage? { dbus_message_new_method_return(pointer).map(RawMessage.init) }

    /// The error reply `name` to this method call, with `text` as its message.
    func errorReply(name: UnsafePointer<CChar>, text: UnsafePointer<CChar>) -> RawMessage? {
        dbus_message_new_error(pointer, name, text).map(RawMessage.init)
    }

    /// The header of the successful reply to this method call, for a body of type `signature`
    /// to be appended after it; `message(from:)` makes the reply.
    func methodReturnHeader(signature: Signature) -> WireEncoder {
        var fields: [Value] = [Self.field(CDBus_HEADER_FIELD_REPLY_SERIAL, .uint32(serial))]
        if let sender { fields.append(Self.field(CDBus_HEADER_FIELD_DESTINATION, .string(String(cString: sender)))) }
        return Self.header(CDBus_MESSAGE_TYPE_METHOD_RETURN, fields, signature: signature)
    }

    /// The header of a signal, for a body of type `signature` to be appended after it;
    /// `message(from:)` makes the signal.
    static func signalHeader(
        path: ObjectPath, interface: InterfaceName, member: MemberName, signature: Signature
    ) -> WireEncoder {
        header(
            CDBus_MESSAGE_TYPE_SIGNAL,
            [
                field(CDBus_HEADER_FIELD_PATH, .objectPath(path)),
                field(CDBus_HEADER_FIELD_INTERFACE, .string(interface.rawValue)),
                field(CDBus_HEADER_FIELD_MEMBER, .string(member.rawValue)),
            ], signature: signature)
    }

    private static func field(_ code: Int32, _ value: Value) -> Value {
        .structure([.byte(UInt8(code)), .variant(value)])
    }

    private static func header(_ type: Int32, _ fields: [Value], signature: Signature) -> WireEncoder {
        var fields = fields
        if !signature.rawValue.isEmpty { fields.append(field(CDBus_HEADER_FIELD_SIGNATURE, .signature(signature))) }
        var header = WireEncoder()
        // Byte order, type, flags (no reply expected, as libdbus sets on its own replies and
        // signals), protocol version; the body's length (filled in by `message(from:)`) and a
        // serial (replaced there).
        header.appendBytes([UInt8(ascii: "l"), UInt8(type), 0x01, 1])
        header.append(.uint32(0))
        header.append(.uint32(1))
        header.append(.array(element: headerField, fields))
        header.pad(to: 8)
        return header
    }

    private static let headerField: Signature = "(yv)"

    /// The message `wire` holds: a header from `methodReturnHeader(signature:)` and the body
    /// appended after it. libdbus validates header and body in full (as it does every message
    /// it receives), so bytes that break the marshalling rules become an error, not a message.
    static func message(from wire: consuming WireEncoder) throws(BusError) -> RawMessage {
        guard !wire.outOfMemory else { throw BusError.outOfMemory }
        let bodyStart = wire.headerLength
        guard wire.count <= Int(Int32.max) else {
            throw BusError(.limitsExceeded, "a message of \(wire.count) bytes is longer than D-Bus allows")
        }
        wire.patch(UInt32(wire.count - bodyStart), at: 4)
        let parsed = try wire.withUnsafeBytes { (buffer) throws(BusError) in
            try withDBusError { error in
                dbus_message_demarshal(buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(buffer.count), error)
            }
        }
        _ = consume wire
        guard let parsed else { throw BusError.outOfMemory }
        defer { dbus_message_unref(parsed) }
        // A copy has serial 0, so the connection numbers it like any message it sends.
        guard let reply = dbus_message_copy(parsed) else { throw BusError.outOfMemory }
        return RawMessage(reply)
    }

    /// A copy of header and body, unlocked and with serial 0 so that it can be sent.
    func copy() -> RawMessage? { dbus_message_copy(pointer).map(RawMessage.init) }

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

    /// Sets the object path of an unsent copy; false when libdbus runs out of memory.
    ///
    /// A path as long as the one there is written over its characters in place: libdbus hands
    /// out a pointer to them in the header itself, and nothing else in the header depends on
    /// them. libdbus's own setter rewrites the header, several times the cost of the copy.
    func setPath(_ path: ObjectPath) -> Bool {
        var characters = path.rawValue
        let written = characters.withUTF8 { utf8 in
            guard let current = dbus_message_get_path(pointer), strlen(current) == utf8.count else { return false }
            UnsafeMutableRawPointer(mutating: current).copyMemory(from: utf8.baseAddress!, byteCount: utf8.count)
            return true
        }
        return written || characters.withCString { dbus_message_set_path(pointer, $0) != 0 }
    }

    /// The first byte of the body, when the first argument is a string or an object path (its
    /// 4-byte length): found through the pointer libdbus hands out to the characters, which lie
    /// in the body itself. Only for writing values of unchanged size into an unsent copy
    /// (`SignalShapes`, `RemovalSignals`).
    var bodyStart: UnsafeMutableRawPointer? {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iter) != 0 else { return nil }
        let type = dbus_message_iter_get_arg_type(&iter)
        guard type == CDBus_TYPE_STRING || type == CDBus_TYPE_OBJECT_PATH else { return nil }
        var characters: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iter, &characters)
        return characters.map { UnsafeMutableRawPointer(mutating: $0) - 4 }
    }

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
