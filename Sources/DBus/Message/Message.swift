internal import CDBus
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A D-Bus message: a method call, a method return, an error or a signal.
///
/// Owns one reference to a libdbus `DBusMessage`, released when the object goes away.
public final class Message: @unchecked Sendable {
    // A DBusMessage is not locked by libdbus while it is written; a Message is handed from
    // thread to thread but only ever written by one at a time (`append`, asserted in debug
    // builds), and once sent it is only read, which libdbus allows from any thread.
    private let owned: OwnedMessage
    #if DEBUG
    private let appending = Atomic<Bool>(false)
    #endif
    var raw: RawMessage { owned.raw }
    // The body signature's length when this object knows it (a message it created and
    // appended to), so `append` need not ask libdbus, which parses the header for it.
    private var knownSignatureLength: Int?

    /// Takes over the caller's message.
    init(consuming owned: consuming OwnedMessage) {
        self.owned = owned
    }

    /// Takes over a new message libdbus just created, whose body is still empty.
    private init(created owned: consuming OwnedMessage) {
        self.owned = owned
        knownSignatureLength = 0
    }

    /// Takes a new reference to a message someone else owns.
    init(borrowing raw: RawMessage) {
        owned = OwnedMessage(borrowing: raw)
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
    public static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        arguments: [Value] = []
    ) throws(BusError) -> Message {
        let raw = withOptionalCString(destination?.rawValue) { destination in
            withOptionalCString(interface?.rawValue) { interface in
                path.rawValue.withCString { path in
                    member.rawValue.withCString { member in
                        RawMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
                    }
                }
            }
        }
        guard let raw else { throw BusError.outOfMemory }
        let message = Message(created: OwnedMessage(consuming: raw))
        try message.append(arguments)
        return message
    }

    /// A signal from `path`.
    public static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [Value] = []
    ) throws(BusError) -> Message {
        // Explicit C strings: passing a String straight to C copies it into a new array.
        let created = path.rawValue.withCString { path in
            interface.rawValue.withCString { interface in
                member.rawValue.withCString { member in RawMessage.signal(path: path, interface: interface, member: member) }
            }
        }
        guard let raw = created else { throw BusError.outOfMemory }
        let message = Message(created: OwnedMessage(consuming: raw))
        try message.append(arguments)
        return message
    }

    /// The message `bytes` hold, header and body, as they come off a socket: checked by libdbus
    /// in full, as every message it reads is, so bytes that break the marshalling rules are an
    /// error, never a message. The seam the fuzz targets feed untrusted bytes through.
    ///
    /// - Throws: libdbus's error for bytes that are no valid message; `NoMemory`.
    public convenience init(wireBytes bytes: [UInt8]) throws(BusError) {
        // Array's withUnsafeBytes rethrows untyped: the typed error is carried out in a Result.
        let parsed = try bytes.withUnsafeBytes { buffer in
            Result { () throws(BusError) in try RawMessage.demarshal(buffer) }
        }.get()
        guard let owned = OwnedMessage(created: parsed) else { throw BusError.outOfMemory }
        self.init(consuming: owned)
    }

    /// The message's size on the wire, header and body, in bytes.
    public var wireSize: Int { wireBytes.count }

    /// The message as it goes on the wire, header and body; empty when libdbus runs out of
    /// memory.
    var wireBytes: [UInt8] { raw.wireBytes ?? [] }

    /// A new message with the same header and body, serial 0 and unlocked, so it can be sent
    /// again; libdbus copies the bytes instead of building them anew.
    public func copy() throws(BusError) -> Message {
        guard let copied = raw.copy() else { throw BusError.outOfMemory }
        return Message(consuming: copied)
    }

    /// The error reply to the method call `call`.
    static func errorReply(to call: RawMessage, _ error: BusError) throws(BusError) -> Message {
        // libdbus treats the message as a printf-free C string; NULs would cut it short.
        let text = String(error.message.map { $0 == "\0" ? "\u{FFFD}" : $0 })
        let reply = error.name.rawValue.withCString { name in
            text.withCString { text in call.errorReply(name: name, text: text) }
        }
        guard let reply else { throw BusError.outOfMemory }
        return Message(consuming: OwnedMessage(consuming: reply))
    }

    // MARK: - Header fields

    public var kind: Kind { raw.type }

    /// The object path, validated by libdbus on receipt.
    public var path: ObjectPath? { raw.path.map { ObjectPath(unchecked: String(cString: $0)) } }
    public var interface: InterfaceName? {
        raw.interface.map { InterfaceName(unchecked: String(cString: $0)) }
    }
    public var member: MemberName? { raw.member.map { MemberName(unchecked: String(cString: $0)) } }
    /// The sender's unique name; the bus fills it in, so it cannot be forged.
    public var sender: BusName? { raw.sender.map { BusName(unchecked: String(cString: $0)) } }
    public var destination: BusName? {
        raw.destination.map { BusName(unchecked: String(cString: $0)) }
    }
    public var errorName: ErrorName? {
        raw.errorName.map { ErrorName(unchecked: String(cString: $0)) }
    }
    /// The signature of the body.
    public var signature: Signature {
        raw.signature.map { Signature(unchecked: String(cString: $0)) } ?? .empty
    }
    public var serial: UInt32 { raw.serial }
    public var replySerial: UInt32 { raw.replySerial }
    /// Whether the caller asked for no reply.
    public var noReply: Bool { raw.noReply }

    /// Whether this is a signal with the given interface and member.
    public func isSignal(_ interface: InterfaceName, _ member: MemberName) -> Bool {
        interface.rawValue.withCString { interface in
            member.rawValue.withCString { member in raw.isSignal(interface: interface, member: member) }
        }
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
        #if DEBUG
        assert(!appending.exchange(true, ordering: .acquiring), "a Message written by two threads at once")
        defer { appending.store(false, ordering: .releasing) }
        #endif
        let known = knownSignatureLength
        knownSignatureLength = nil  // until every value is in: a failure leaves part of them
        knownSignatureLength = try Self.append(values, to: raw, signatureLength: known)
    }

    /// Appends `values` to the body of `raw`, whose signature is `signatureLength` bytes long
    /// (nil: ask libdbus); returns the new length.
    static func append(_ values: [Value], to raw: RawMessage, signatureLength: Int?) throws(BusError) -> Int {
        for value in values { try value.validateForEncoding() }
        // libdbus does not check the body's whole signature against the 255-byte limit.
        let existing = signatureLength ?? raw.signature.map { strlen($0) } ?? 0
        let length = existing + values.reduce(0) { $0 + $1.signatureLength }
        guard length <= 255 else {
            throw BusError(.invalidArgs, "the message's signature would be \(length) bytes; D-Bus allows 255")
        }
        try raw.append(values)
        return length
    }

    /// Decodes the whole body.
    public func arguments() throws(BusError) -> [Value] {
        try raw.arguments()
    }

    /// Decodes the elements of the first argument, an array, handing each to `body` before
    /// decoding the next: for a reply too large to hold as one tree of values (an ObjectManager's
    /// `GetManagedObjects` over tens of thousands of objects is about 40 MB on the wire and
    /// several times that as values).
    ///
    /// - Throws: `InvalidArgs` when the first argument is not an array, or a value in it cannot
    ///   be decoded (the elements before it have been handed over).
    public func forEachElementOfFirstArgument(_ body: (Value) -> Void) throws(BusError) {
        try raw.forEachElementOfFirstArgument(body)
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
