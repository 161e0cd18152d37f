/// `PropertiesChanged` signals whose new values are all numbers or booleans, built once per
/// shape (interface, property names, value types) and then sent as copies with the numbers
/// written in place.
///
/// Each activity object announces its progress (`Completed`, `Total`) in a signal of the same
/// shape with other numbers and another path. libdbus builds such a signal slowly, value by
/// value through its type writer, and copies one in a small fraction of that; the body's layout
/// of a given shape never changes, so each value's offset is worked out once and checked against
/// the bytes libdbus wrote before the shape is used. Anything else (strings, invalidated names)
/// is built in full as before. Figures in docs/benchmarks.md.
final class SignalShapes {
    private struct Key: Hashable {
        let interface: InterfaceName
        let names: [MemberName]
        let types: [UInt8]
    }

    private struct Shape {
        let template: Message
        let path: ObjectPath
        /// Where each value lies, from the first byte of the body.
        let offsets: [Int]
    }

    private var shapes: [Key: Shape] = [:]
    /// Shapes kept at once: each interface announces a handful.
    static let limit = 16

    /// Whether these contents have a shape worth keeping.
    static func isPatchable(changed: [(MemberName, Value)], invalidated: [MemberName]) -> Bool {
        invalidated.isEmpty && !changed.isEmpty && changed.allSatisfy { Self.size(of: $0.1) != nil }
    }

    /// A copy of the kept signal of this shape at `path` carrying `changed`, ready to send; nil
    /// when no signal of this shape is kept (or libdbus runs out of memory).
    func signal(interface: InterfaceName, path: ObjectPath, changed: [(MemberName, Value)]) -> Message? {
        let key = Self.key(interface, changed)
        guard let shape = shapes[key], let (copy, template) = try? shape.template.copy(from: shape.path, to: path)
        else { return nil }
        if let template { shapes[key] = Shape(template: template, path: path, offsets: shape.offsets) }
        guard let body = copy.raw.bodyStart else { return nil }
        for ((_, value), offset) in zip(changed, shape.offsets) { Self.write(value, at: body + offset) }
        return copy
    }

    /// Keeps `signal`, just built by libdbus with these contents, as its shape's template, once
    /// the offsets worked out for the shape are found to hold exactly these values.
    func remember(_ signal: Message, interface: InterfaceName, path: ObjectPath, changed: [(MemberName, Value)]) {
        let key = Self.key(interface, changed)
        guard shapes[key] == nil, let template = try? signal.copy() else { return }
        let offsets = Self.offsets(interface: interface, changed: changed)
        let wire = signal.wireBytes
        // Little-endian messages only (the byte order libdbus writes on this machine's CPUs).
        guard wire.count >= 16, wire[0] == UInt8(ascii: "l") else { return }
        let bodyLength = Int(wire[4]) | Int(wire[5]) << 8 | Int(wire[6]) << 16 | Int(wire[7]) << 24
        let bodyStart = wire.count - bodyLength
        for ((_, value), offset) in zip(changed, offsets) {
            guard let size = Self.size(of: value), bodyStart + offset + size <= wire.count,
                Array(wire[(bodyStart + offset)..<(bodyStart + offset + size)]) == Self.bytes(of: value)
            else { return }
        }
        if shapes.count == Self.limit { shapes.removeAll(keepingCapacity: true) }
        shapes[key] = Shape(template: template, path: path, offsets: offsets)
    }

    // MARK: - The body's layout

    private static func key(_ interface: InterfaceName, _ changed: [(MemberName, Value)]) -> Key {
        Key(interface: interface, names: changed.map(\.0), types: changed.map { typeCode(of: $0.1) })
    }

    /// The body `(s a{sv} as)` by the marshalling rules: each value's offset in it.
    static func offsets(interface: InterfaceName, changed: [(MemberName, Value)]) -> [Int] {
        var offset = 0
        func align(_ boundary: Int) { offset = (offset + boundary - 1) / boundary * boundary }
        offset += 4 + interface.rawValue.utf8.count + 1  // s
        align(4)
        offset += 4  // the array's length
        var offsets: [Int] = []
        for (name, value) in changed {
            align(8)  // a dictionary entry starts on 8
            offset += 4 + name.rawValue.utf8.count + 1  // the key
            offset += 3  // the variant's signature: length, type code, NUL
            let size = Self.size(of: value) ?? 0
            align(size)
            offsets.append(offset)
            offset += size
        }
        return offsets
    }

    private static func size(of value: Value) -> Int? {
        switch value {
        case .boolean, .int32, .uint32: 4
        case .int64, .uint64, .double: 8
        default: nil
        }
    }

    private static func typeCode(of value: Value) -> UInt8 {
        value.signatureText.utf8.first ?? 0
    }

    private static func bytes(of value: Value) -> [UInt8] {
        switch value {
        case .boolean(let flag): withUnsafeBytes(of: UInt32(flag ? 1 : 0).littleEndian, Array.init)
        case .int32(let number): withUnsafeBytes(of: number.littleEndian, Array.init)
        case .uint32(let number): withUnsafeBytes(of: number.littleEndian, Array.init)
        case .int64(let number): withUnsafeBytes(of: number.littleEndian, Array.init)
        case .uint64(let number): withUnsafeBytes(of: number.littleEndian, Array.init)
        case .double(let number): withUnsafeBytes(of: number.bitPattern.littleEndian, Array.init)
        default: []
        }
    }

    private static func write(_ value: Value, at address: UnsafeMutableRawPointer) {
        switch value {
        case .boolean(let flag): address.storeBytes(of: UInt32(flag ? 1 : 0).littleEndian, as: UInt32.self)
        case .int32(let number): address.storeBytes(of: number.littleEndian, as: Int32.self)
        case .uint32(let number): address.storeBytes(of: number.littleEndian, as: UInt32.self)
        case .int64(let number): address.storeBytes(of: number.littleEndian, as: Int64.self)
        case .uint64(let number): address.storeBytes(of: number.littleEndian, as: UInt64.self)
        case .double(let number): address.storeBytes(of: number.bitPattern.littleEndian, as: UInt64.self)
        default: break
        }
    }
}

extension Message {
    /// `PropertiesChanged` built in full, for contents no kept signal fits (a string among the
    /// values, invalidated names, a shape seen first): marshalled by `WireEncoder` and validated
    /// once by libdbus, byte for byte the signal libdbus's type writer builds at several times
    /// the cost (an owner's attribution reaches each of its up to 1,024 objects this way).
    static func propertiesChanged(
        path: ObjectPath, interface: InterfaceName, changed: [(MemberName, Value)], invalidated: [MemberName]
    ) throws(BusError) -> Message {
        var wire = RawMessage.signalHeader(
            path: path, interface: .properties, member: .propertiesChanged, signature: .propertiesChangedArguments)
        wire.append(.string(interface.rawValue))
        wire.appendArray(of: .stringToVariantEntry) { entries in
            for (name, value) in changed {
                entries.appendEntryKey(.string(name.rawValue))
                entries.appendVariant(value)
            }
        }
        wire.appendArray(of: .string) { names in
            for name in invalidated { names.append(.string(name.rawValue)) }
        }
        return Message(consuming: try RawMessage.message(from: wire))
    }
}

// Constants rather than literals at the call site: a literal is validated every time it runs.
extension MemberName {
    fileprivate static let propertiesChanged: MemberName = "PropertiesChanged"
}

extension Signature {
    fileprivate static let propertiesChangedArguments: Signature = "sa{sv}as"
}
