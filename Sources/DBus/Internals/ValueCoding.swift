import Platform

internal import CDBus

// MARK: - Writing a body

/// Appends values to a message body, or to a container inside one: libdbus's append iterator.
struct BodyWriter {
    fileprivate var iter = DBusMessageIter()

    /// A writer at the end of `message`'s body.
    init(appendingTo message: RawMessage) {
        dbus_message_iter_init_append(message.pointer, &iter)
    }

    private init() {}

    /// Appends `value`, which must have passed `validateForEncoding()`: the only failure left
    /// is libdbus running out of memory.
    mutating func append(_ value: Value) throws(BusError) {
        try value.encode(into: &iter)
    }

    /// Opens a container of `type` (`CDBus_TYPE_ARRAY` and so on) holding `signature`, lets
    /// `fill` write its contents, and closes it; abandons it if `fill` throws, so libdbus frees
    /// what it allocated.
    mutating func appendContainer(
        _ type: Int32, _ signature: String?, _ fill: (inout BodyWriter) throws(BusError) -> Void
    ) throws(BusError) {
        try withContainer(&iter, type, signature) { (sub) throws(BusError) in
            var writer = BodyWriter()
            writer.iter = sub
            defer { sub = writer.iter }
            try fill(&writer)
        }
    }

    /// Opens an array of `element`, as `appendContainer` does.
    mutating func appendArray(
        of element: Signature, _ fill: (inout BodyWriter) throws(BusError) -> Void
    ) throws(BusError) {
        try appendContainer(CDBus_TYPE_ARRAY, element.rawValue, fill)
    }
}

// MARK: - Encoding

extension Value {
    /// Appends this value at `iter`. The value must have passed `validateForEncoding()`, so
    /// the only failure left is libdbus running out of memory.
    fileprivate func encode(into iter: inout DBusMessageIter) throws(BusError) {
        switch self {
        case .byte(var value): try appendBasic(&iter, CDBus_TYPE_BYTE, &value)
        case .boolean(let value):
            var flag: dbus_bool_t = value ? 1 : 0
            try appendBasic(&iter, CDBus_TYPE_BOOLEAN, &flag)
        case .int16(var value): try appendBasic(&iter, CDBus_TYPE_INT16, &value)
        case .uint16(var value): try appendBasic(&iter, CDBus_TYPE_UINT16, &value)
        case .int32(var value): try appendBasic(&iter, CDBus_TYPE_INT32, &value)
        case .uint32(var value): try appendBasic(&iter, CDBus_TYPE_UINT32, &value)
        case .int64(var value): try appendBasic(&iter, CDBus_TYPE_INT64, &value)
        case .uint64(var value): try appendBasic(&iter, CDBus_TYPE_UINT64, &value)
        case .double(var value): try appendBasic(&iter, CDBus_TYPE_DOUBLE, &value)
        case .string(let text): try appendString(&iter, CDBus_TYPE_STRING, text)
        case .objectPath(let path): try appendString(&iter, CDBus_TYPE_OBJECT_PATH, path.rawValue)
        case .signature(let signature): try appendString(&iter, CDBus_TYPE_SIGNATURE, signature.rawValue)
        case .unixFileDescriptor: throw BusError(.invalidArgs, "a file descriptor cannot be sent")
        case .array(let element, let values):
            try withContainer(&iter, CDBus_TYPE_ARRAY, element.rawValue) { (sub) throws(BusError) in
                for value in values { try value.encode(into: &sub) }
            }
        case .structure(let fields):
            try withContainer(&iter, CDBus_TYPE_STRUCT, nil) { (sub) throws(BusError) in
                for field in fields { try field.encode(into: &sub) }
            }
        case .dictEntry(let key, let value):
            try withContainer(&iter, CDBus_TYPE_DICT_ENTRY, nil) { (sub) throws(BusError) in
                try key.encode(into: &sub)
                try value.encode(into: &sub)
            }
        case .variant(let inner):
            try withContainer(&iter, CDBus_TYPE_VARIANT, inner.signatureText) { (sub) throws(BusError) in
                try inner.encode(into: &sub)
            }
        }
    }
}

private func appendBasic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: inout T) throws(BusError) {
    guard dbus_message_iter_append_basic(&iter, type, &value) != 0 else { throw BusError.outOfMemory }
}

private func appendString(_ iter: inout DBusMessageIter, _ type: Int32, _ text: String) throws(BusError) {
    let appended = text.withCString { pointer in
        var pointer: UnsafePointer<CChar>? = pointer
        return dbus_message_iter_append_basic(&iter, type, &pointer)
    }
    guard appended != 0 else { throw BusError.outOfMemory }
}

/// Opens a container, fills it, and closes it; abandons it if filling fails so libdbus frees
/// what it allocated.
private func withContainer(
    _ iter: inout DBusMessageIter, _ type: Int32, _ signature: String?,
    _ fill: (inout DBusMessageIter) throws(BusError) -> Void
) throws(BusError) {
    var sub = DBusMessageIter()
    let opened = withOptionalCString(signature) { dbus_message_iter_open_container(&iter, type, $0, &sub) }
    guard opened != 0 else { throw BusError.outOfMemory }
    do {
        try fill(&sub)
    } catch {
        dbus_message_iter_abandon_container(&iter, &sub)
        throw error
    }
    guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw BusError.outOfMemory }
}

// MARK: - Reading a body

/// Reads values from a message body: libdbus's read iterator.
struct BodyReader {
    private var iter = DBusMessageIter()

    /// A reader at the start of `message`'s body, or nil when the body is empty.
    init?(reading message: RawMessage) {
        guard dbus_message_iter_init(message.pointer, &iter) != 0 else { return nil }
    }

    /// Decodes every value to the end of the body.
    mutating func decodeAll() throws(BusError) -> [Value] { try Value.decodeAll(&iter) }

    /// Decodes `count` values; the body must hold at least one.
    mutating func decode(count: Int) throws(BusError) -> [Value] { try Value.decode(&iter, count: count) }

    /// Decodes the elements of the array at the reader's position one at a time, handing each
    /// to `body` before decoding the next.
    ///
    /// - Throws: `InvalidArgs` when the value there is not an array.
    mutating func forEachElement(_ body: (Value) -> Void) throws(BusError) {
        guard dbus_message_iter_get_arg_type(&iter) == CDBus_TYPE_ARRAY else {
            throw BusError(.invalidArgs, "expected an array")
        }
        var elements = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &elements)
        while dbus_message_iter_get_arg_type(&elements) != CDBus_TYPE_INVALID {
            body(try Value.decode(&elements))
            dbus_message_iter_next(&elements)
        }
    }
}

// MARK: - Decoding

extension Value {
    /// Decodes every value from `iter` to the end of its container.
    fileprivate static func decodeAll(_ iter: inout DBusMessageIter) throws(BusError) -> [Value] {
        var values: [Value] = []
        while dbus_message_iter_get_arg_type(&iter) != CDBus_TYPE_INVALID {
            values.append(try decode(&iter))
            dbus_message_iter_next(&iter)
        }
        return values
    }

    /// Decodes `count` values from `iter`, which must point at the first of them.
    fileprivate static func decode(_ iter: inout DBusMessageIter, count: Int) throws(BusError) -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(count)
        for index in 0..<count {
            if index > 0, dbus_message_iter_next(&iter) == 0 {
                throw BusError(.invalidArgs, "expected \(count) arguments, got \(index)")
            }
            values.append(try decode(&iter))
        }
        return values
    }

    /// Decodes the value `iter` points at. libdbus validated the message when it arrived, so
    /// the structure is sound; anything unexpected still becomes an error, never a crash.
    fileprivate static func decode(_ iter: inout DBusMessageIter) throws(BusError) -> Value {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case CDBus_TYPE_BYTE: return .byte(readBasic(&iter, UInt8(0)))
        case CDBus_TYPE_BOOLEAN: return .boolean(readBasic(&iter, dbus_bool_t(0)) != 0)
        case CDBus_TYPE_INT16: return .int16(readBasic(&iter, Int16(0)))
        case CDBus_TYPE_UINT16: return .uint16(readBasic(&iter, UInt16(0)))
        case CDBus_TYPE_INT32: return .int32(readBasic(&iter, Int32(0)))
        case CDBus_TYPE_UINT32: return .uint32(readBasic(&iter, UInt32(0)))
        case CDBus_TYPE_INT64: return .int64(readBasic(&iter, Int64(0)))
        case CDBus_TYPE_UINT64: return .uint64(readBasic(&iter, UInt64(0)))
        case CDBus_TYPE_DOUBLE: return .double(readBasic(&iter, Double(0)))
        case CDBus_TYPE_STRING: return .string(readString(&iter))
        case CDBus_TYPE_OBJECT_PATH: return .objectPath(ObjectPath(unchecked: readString(&iter)))
        case CDBus_TYPE_SIGNATURE: return .signature(Signature(unchecked: readString(&iter)))
        case CDBus_TYPE_ARRAY:
            let signature = currentSignature(&iter)
            guard signature.hasPrefix("a") else {
                throw BusError(.invalidArgs, "malformed array signature '\(signature)'")
            }
            let element = Signature(unchecked: String(signature.dropFirst()))
            return .array(element: element, try decodeContents(&iter))
        case CDBus_TYPE_STRUCT:
            return .structure(try decodeContents(&iter))
        case CDBus_TYPE_DICT_ENTRY:
            let pair = try decodeContents(&iter)
            guard pair.count == 2 else { throw BusError(.invalidArgs, "malformed dictionary entry") }
            return .dictEntry(key: pair[0], value: pair[1])
        case CDBus_TYPE_VARIANT:
            let inner = try decodeContents(&iter)
            guard inner.count == 1 else { throw BusError(.invalidArgs, "malformed variant") }
            return .variant(inner[0])
        case CDBus_TYPE_UNIX_FD:
            // libdbus hands out a duplicate that the reader owns; nothing here uses descriptors.
            let descriptor = readBasic(&iter, Int32(-1))
            if descriptor >= 0 { FileDescriptor(rawValue: descriptor).close() }
            return .unixFileDescriptor
        default:
            throw BusError(.invalidArgs, "unknown type code \(type)")
        }
    }

    private static func decodeContents(_ iter: inout DBusMessageIter) throws(BusError) -> [Value] {
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        return try decodeAll(&sub)
    }
}

private func readBasic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
    var value = initial
    dbus_message_iter_get_basic(&iter, &value)
    return value
}

private func readString(_ iter: inout DBusMessageIter) -> String {
    var pointer: UnsafePointer<CChar>? = nil
    dbus_message_iter_get_basic(&iter, &pointer)
    return pointer.map { String(cString: $0) } ?? ""
}

/// The signature of the value at `iter`; libdbus returns a copy the caller frees.
private func currentSignature(_ iter: inout DBusMessageIter) -> String {
    guard let text = dbus_message_iter_get_signature(&iter) else { return "" }
    defer { dbus_free(text) }
    return String(cString: text)
}
