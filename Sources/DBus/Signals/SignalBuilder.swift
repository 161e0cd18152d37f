/// Makes every `PropertiesChanged`, `InterfacesAdded` and `InterfacesRemoved` the object server
/// sends: the one place that decides how a signal is built.
///
/// Three ways, the cheapest that fits:
/// - **a copy** (`dbus_message_copy`) of a signal sent lately with exactly these contents at
///   this path: a busy desktop flips `Active` back and forth, sending the same two signals over
///   and over;
/// - **a patch**: the bytes of the last signal of the same shape (member, interface, names,
///   the strings among the values, the types of the numbers, the path's length), kept here, with
///   the numbers and the path's characters written anew, handed to libdbus like a full build.
///   Each activity object announces its progress, and each `EndActivity` its object's removal,
///   in a signal of one shape with other numbers and another path;
/// - **a full build** by `WireEncoder`, byte for byte what libdbus's type writer makes at several
///   times the cost, whose bytes become the shape's template.
///
/// Bytes become a message through `dbus_message_demarshal`, which validates them in full, as
/// libdbus does every message it receives. Nothing is written into memory libdbus hands out:
/// numbers and paths are patched in this builder's own bytes. Figures in docs/benchmarks.md.
final class SignalBuilder {
    // MARK: - Kept signals

    /// A signal sent lately, kept to be copied for the same contents at the same path.
    private struct Recent {
        let path: ObjectPath
        let interface: InterfaceName
        let names: [MemberName]
        let values: [Value]
        /// The signal itself: a copy of a sent message is unsent, with serial 0.
        let message: Message
    }

    /// The bytes of the last `PropertiesChanged` of one shape.
    private struct ChangeShape {
        let interface: InterfaceName
        let pathLength: Int
        let names: [MemberName]
        /// The values last written: numbers stand for their type, the rest must be equal.
        var values: [Value]
        let invalidated: [MemberName]
        /// Where each number lies in `bytes`; nil for a value that is part of the shape.
        let offsets: [Int?]
        var bytes: WireEncoder

        func fits(
            _ interface: InterfaceName, _ pathLength: Int, _ changed: [(MemberName, Value)], _ invalidated: [MemberName]
        ) -> Bool {
            self.interface == interface && self.pathLength == pathLength && names.count == changed.count
                && self.invalidated == invalidated
                && zip(zip(names, values), zip(offsets, changed)).allSatisfy { kept, new in
                    let ((name, value), (offset, (newName, newValue))) = (kept, new)
                    guard name == newName else { return false }
                    return offset == nil ? value == newValue : SignalBuilder.sameNumberType(value, newValue)
                }
        }
    }

    /// The bytes of the last `InterfacesRemoved` of one shape.
    private struct RemovalShape {
        let manager: ObjectPath
        let pathLength: Int
        let interfaces: [InterfaceName]
        /// Where the removed object's path begins in `bytes` (its length, then its characters).
        let pathOffset: Int
        var bytes: WireEncoder
    }

    private var recent: [Recent] = []
    private var changeShapes: [ChangeShape] = []
    private var removalShapes: [RemovalShape] = []
    /// The bytes the next `InterfacesAdded` is expected to take.
    private var addedSize = 0

    /// Signals kept for copying: a handful keeps the search short.
    static let recentLimit = 4
    /// Values a signal kept for copying may carry.
    static let recentValueLimit = 4
    /// Shapes kept of each member: each interface announces a handful, a family of objects has
    /// a handful of path lengths.
    static let shapeLimit = 16

    /// How the last signal was made, for tests.
    private(set) var lastWay: Way = .built

    /// The ways a signal is made.
    enum Way: Equatable {
        case copied, patched, built
    }

    // MARK: - PropertiesChanged

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` from `path` for `interface`, carrying
    /// `changed` in order and naming `invalidated`, ready to send.
    ///
    /// - Throws: `NoMemory`; libdbus's error for values that break the marshalling rules.
    func propertiesChanged(
        path: ObjectPath, interface: InterfaceName, changed: [(MemberName, Value)], invalidated: [MemberName]
    ) throws(BusError) -> Message {
        let copyable =
            invalidated.isEmpty && changed.count <= Self.recentValueLimit && changed.allSatisfy { $0.1.isBasic }
        if copyable, let index = recent.lastIndex(where: { Self.isRecent($0, path, interface, changed) }) {
            let kept = recent[index]
            if index != recent.count - 1 { recent.append(recent.remove(at: index)) }
            lastWay = .copied
            return try kept.message.copy()
        }
        let signal: Message
        let pathLength = path.rawValue.utf8.count
        if let index = changeShapes.firstIndex(where: { $0.fits(interface, pathLength, changed, invalidated) }) {
            signal = try patch(&changeShapes[index], path: path, changed: changed)
            lastWay = .patched
        } else {
            signal = try build(path: path, interface: interface, changed: changed, invalidated: invalidated)
            lastWay = .built
        }
        if copyable {
            if recent.count == Self.recentLimit { recent.removeFirst() }
            recent.append(
                Recent(path: path, interface: interface, names: changed.map(\.0), values: changed.map(\.1), message: signal))
        }
        return signal
    }

    private static func isRecent(
        _ kept: Recent, _ path: ObjectPath, _ interface: InterfaceName, _ changed: [(MemberName, Value)]
    ) -> Bool {
        kept.interface == interface && kept.names.count == changed.count && kept.path == path
            && zip(zip(kept.names, kept.values), changed).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    private func patch(
        _ shape: inout ChangeShape, path: ObjectPath, changed: [(MemberName, Value)]
    ) throws(BusError) -> Message {
        Self.writePath(path, into: &shape.bytes, at: Self.headerPathOffset)
        for (index, (offset, (_, value))) in zip(shape.offsets, changed).enumerated() {
            guard let offset else { continue }
            Self.write(value, into: &shape.bytes, at: offset)
            shape.values[index] = value
        }
        return Message(consuming: try RawMessage.message(ofFinished: shape.bytes))
    }

    private func build(
        path: ObjectPath, interface: InterfaceName, changed: [(MemberName, Value)], invalidated: [MemberName]
    ) throws(BusError) -> Message {
        var wire = RawMessage.signalHeader(
            path: path, interface: .properties, member: .propertiesChanged, signature: .propertiesChangedArguments)
        wire.append(.string(interface.rawValue))
        var offsets: [Int?] = []
        wire.appendArray(of: .stringToVariantEntry) { entries in
            for (name, value) in changed {
                entries.appendEntryKey(.string(name.rawValue))
                entries.appendVariant(value)
                offsets.append(Self.size(of: value).map { entries.count - $0 })
            }
        }
        wire.appendArray(of: .string) { names in
            for name in invalidated { names.append(.string(name.rawValue)) }
        }
        try wire.finishMessage()
        let signal = Message(consuming: try RawMessage.message(ofFinished: wire))
        // libdbus has accepted the bytes: they are a template worth keeping.
        if Self.holdsPath(path, wire, at: Self.headerPathOffset) {
            if changeShapes.count == Self.shapeLimit { changeShapes.removeAll(keepingCapacity: true) }
            changeShapes.append(
                ChangeShape(
                    interface: interface, pathLength: path.rawValue.utf8.count, names: changed.map(\.0),
                    values: changed.map(\.1), invalidated: invalidated, offsets: offsets, bytes: wire))
        }
        return signal
    }

    // MARK: - ObjectManager

    /// `org.freedesktop.DBus.ObjectManager.InterfacesAdded` from `manager` for the object at
    /// `path`, its interfaces and properties written by `write`: built in full every time, as
    /// each object's label, owner and start differ.
    func interfacesAdded(
        manager: ObjectPath, path: ObjectPath, write: (inout WireEncoder) -> Void
    ) throws(BusError) -> Message {
        var wire = RawMessage.signalHeader(
            path: manager, interface: .objectManager, member: .interfacesAdded, signature: .interfacesAddedArguments,
            capacity: addedSize)
        wire.append(.objectPath(path))
        write(&wire)
        lastWay = .built
        // Room for one as large next time: the objects of a family announce much the same.
        addedSize = wire.count + wire.count / 8
        return Message(consuming: try RawMessage.message(from: wire))
    }

    /// `org.freedesktop.DBus.ObjectManager.InterfacesRemoved` from `manager` for the object at
    /// `path`, which had `interfaces`.
    func interfacesRemoved(
        manager: ObjectPath, path: ObjectPath, interfaces: [InterfaceName]
    ) throws(BusError) -> Message {
        let pathLength = path.rawValue.utf8.count
        if let index = removalShapes.firstIndex(where: {
            $0.pathLength == pathLength && $0.manager == manager && $0.interfaces == interfaces
        }) {
            Self.writePath(path, into: &removalShapes[index].bytes, at: removalShapes[index].pathOffset)
            lastWay = .patched
            return Message(consuming: try RawMessage.message(ofFinished: removalShapes[index].bytes))
        }
        var wire = RawMessage.signalHeader(
            path: manager, interface: .objectManager, member: .interfacesRemoved,
            signature: .interfacesRemovedArguments)
        let pathOffset = wire.count
        wire.append(.objectPath(path))
        wire.appendArray(of: .string) { names in
            for interface in interfaces { names.append(.string(interface.rawValue)) }
        }
        try wire.finishMessage()
        let signal = Message(consuming: try RawMessage.message(ofFinished: wire))
        lastWay = .built
        if Self.holdsPath(path, wire, at: pathOffset) {
            if removalShapes.count == Self.shapeLimit { removalShapes.removeAll(keepingCapacity: true) }
            removalShapes.append(
                RemovalShape(
                    manager: manager, pathLength: pathLength, interfaces: interfaces, pathOffset: pathOffset, bytes: wire))
        }
        return signal
    }

    // MARK: - The bytes

    /// Where a signal's path begins (its length, then its characters) in the header
    /// `RawMessage.signalHeader` writes: the first field, after the 16 fixed bytes, the field's
    /// code and the variant's signature `o`.
    static let headerPathOffset = 20

    /// Whether `wire` holds `path` (length and characters) at `offset`: the check that a template
    /// is laid out as its patches assume.
    private static func holdsPath(_ path: ObjectPath, _ wire: WireEncoder, at offset: Int) -> Bool {
        var characters = path.rawValue
        return characters.withUTF8 { utf8 in
            guard wire.load(UInt32.self, at: offset) == UInt32(utf8.count) else { return false }
            return wire.withUnsafeBytes { bytes in
                offset + 4 + utf8.count <= bytes.count
                    && UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 4 + utf8.count)])
                        .holdsSameBytes(as: UnsafeRawBufferPointer(utf8))
            }
        }
    }

    /// Writes the characters of `path`, as long as the one there, over those at `offset`.
    private static func writePath(_ path: ObjectPath, into bytes: inout WireEncoder, at offset: Int) {
        var characters = path.rawValue
        characters.withUTF8 { utf8 in bytes.patch(UnsafeRawBufferPointer(utf8), at: offset + 4) }
    }

    /// The size of a number whose bytes a patch rewrites; nil for any other value.
    private static func size(of value: Value) -> Int? {
        switch value {
        case .boolean, .int32, .uint32: 4
        case .int64, .uint64, .double: 8
        default: nil
        }
    }

    private static func sameNumberType(_ one: Value, _ other: Value) -> Bool {
        switch (one, other) {
        case (.boolean, .boolean), (.int32, .int32), (.uint32, .uint32), (.int64, .int64), (.uint64, .uint64),
            (.double, .double):
            true
        default: false
        }
    }

    private static func write(_ value: Value, into bytes: inout WireEncoder, at offset: Int) {
        switch value {
        case .boolean(let flag): bytes.patch(UInt32(flag ? 1 : 0), at: offset)
        case .int32(let number): bytes.patch(number, at: offset)
        case .uint32(let number): bytes.patch(number, at: offset)
        case .int64(let number): bytes.patch(number, at: offset)
        case .uint64(let number): bytes.patch(number, at: offset)
        case .double(let number): bytes.patch(number.bitPattern, at: offset)
        default: break
        }
    }
}

// Constants rather than literals at the call site: a literal is validated every time it runs.
extension MemberName {
    fileprivate static let propertiesChanged: MemberName = "PropertiesChanged"
    fileprivate static let interfacesAdded: MemberName = "InterfacesAdded"
    fileprivate static let interfacesRemoved: MemberName = "InterfacesRemoved"
}

extension Signature {
    fileprivate static let propertiesChangedArguments: Signature = "sa{sv}as"
    fileprivate static let interfacesAddedArguments: Signature = "oa{sa{sv}}"
    fileprivate static let interfacesRemovedArguments: Signature = "oas"
}
