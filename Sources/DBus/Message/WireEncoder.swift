#if canImport(Glibc)
import Glibc
#endif

/// Marshals values into D-Bus wire format (little-endian), without libdbus.
///
/// For replies too large to build well through libdbus's type writer (an ObjectManager's
/// `GetManagedObjects` over tens of thousands of objects): libdbus checks and reformats every
/// value it appends one call at a time, which costs several times more than writing the bytes.
/// The message made from these bytes (`RawMessage.message(from:)`) is still
/// validated in full by libdbus before it is sent, so a mistake here is an error reply, never
/// a malformed message on the bus.
///
/// Offsets are counted from the start of `bytes`, which must be 8-aligned within the message:
/// a body always is, and a whole message (header first) starts at 0.
struct WireEncoder {
    /// Where the bytes live: one growable allocation, shared by copies of the encoder until one
    /// of them writes (then that one copies it first, as an array would). Not an `[UInt8]`:
    /// a reply over tens of thousands of objects is a million small appends, and an array's
    /// checks on each cost more than the bytes (see docs/benchmarks.md, "Scale").
    private var buffer: Buffer?
    /// Bytes written so far.
    private(set) var count = 0
    /// Set when memory for the bytes could not be had: nothing is written from then on, and
    /// `RawMessage.message(from:)` throws `NoMemory`, as libdbus's own writer reports it.
    private(set) var outOfMemory = false

    /// A copy of the bytes written.
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Calls `body` with the bytes written, valid only during the call.
    func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: buffer?.base, count: count))
    }

    /// Appends `value`. Nothing is checked here: values that break the rules (a NUL in a
    /// string, an element of another type than its array's) make bytes libdbus refuses.
    mutating func append(_ value: Value) {
        switch value {
        case .byte(let number): write(number)
        case .boolean(let flag): appendInteger(UInt32(flag ? 1 : 0))
        case .int16(let number): appendInteger(number)
        case .uint16(let number): appendInteger(number)
        case .int32(let number): appendInteger(number)
        case .uint32(let number): appendInteger(number)
        case .int64(let number): appendInteger(number)
        case .uint64(let number): appendInteger(number)
        case .double(let number): appendInteger(number.bitPattern)
        case .string(let text): appendString(text)
        case .objectPath(let path): appendString(path.rawValue)
        case .signature(let signature): appendSignature(signature.rawValue)
        // An index into descriptors the message does not carry: refused with the whole message,
        // as nothing here sends one.
        case .unixFileDescriptor: appendInteger(UInt32.max)
        case .array(let element, let values):
            // An array over 64 MiB is written anyway, and refused with the whole message.
            appendArray(of: element) { encoder in
                for value in values { encoder.append(value) }
            }
        case .structure(let fields):
            pad(to: 8)
            for field in fields { append(field) }
        case .dictEntry(let key, let entryValue):
            pad(to: 8)
            append(key)
            append(entryValue)
        case .variant(let inner):
            appendVariant(inner)
        }
    }

    /// Appends `value` as a variant, without boxing it in a `Value.variant` first.
    mutating func appendVariant(_ value: Value) {
        appendSignature(value.signatureText)
        append(value)
    }

    /// Appends a dictionary entry's start: its alignment and its key, without building the entry.
    mutating func appendEntryKey(_ key: Value) {
        pad(to: 8)
        append(key)
    }

    /// Appends an array of `element`-typed values that `fill` appends one at a time.
    ///
    /// - Throws: what `fill` throws.
    mutating func appendArray<Failure: Error>(
        of element: Signature, _ fill: (inout WireEncoder) throws(Failure) -> Void
    ) throws(Failure) {
        pad(to: 4)
        let lengthOffset = count
        write(UInt32(0))
        pad(to: Self.alignment(of: element.rawValue.utf8.first ?? 0))
        let start = count
        try fill(&self)
        patch(UInt32(truncatingIfNeeded: count - start), at: lengthOffset)
    }

    mutating func reserveCapacity(_ capacity: Int) {
        if (buffer?.capacity ?? 0) < capacity, !grow(to: capacity) { outOfMemory = true }
    }

    /// Overwrites the bytes at `offset` with `number`, little-endian.
    mutating func patch<Number: FixedWidthInteger>(_ number: Number, at offset: Int) {
        precondition(offset >= 0 && offset + MemoryLayout<Number>.size <= count, "patching outside the bytes written")
        guard let end = room(0) else { return }
        (end - count + offset).storeBytes(of: number.littleEndian, toByteOffset: 0, as: Number.self)
    }

    /// Overwrites the bytes at `offset` with `raw`.
    mutating func patch(_ raw: UnsafeRawBufferPointer, at offset: Int) {
        precondition(offset >= 0 && offset + raw.count <= count, "patching outside the bytes written")
        guard let source = raw.baseAddress, raw.count > 0, let end = room(0) else { return }
        (end - count + offset).copyMemory(from: source, byteCount: raw.count)
    }

    /// Reads the little-endian number at `offset`, for checks of the bytes written.
    func load<Number: FixedWidthInteger>(_: Number.Type, at offset: Int) -> Number? {
        guard offset >= 0, offset + MemoryLayout<Number>.size <= count else { return nil }
        return withUnsafeBytes { Number(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: Number.self)) }
    }

    /// Writes the body's length into a whole message's fixed header (`RawMessage.signalHeader`,
    /// `methodReturnHeader`), once header and body are in.
    ///
    /// - Throws: `LimitsExceeded` for a message longer than D-Bus allows.
    mutating func finishMessage() throws(BusError) {
        guard count <= Int(Int32.max) else {
            throw BusError(.limitsExceeded, "a message of \(count) bytes is longer than D-Bus allows")
        }
        patch(UInt32(count - headerLength), at: 4)
    }

    /// The length of the message header these bytes start with, padding included: 16 fixed
    /// bytes and the array of header fields, whose length is the fixed part's last 4 bytes.
    var headerLength: Int {
        guard count >= 16 else { return count }
        let fields = withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self))) }
        return (16 + fields + 7) / 8 * 8
    }

    /// Appends raw bytes, for a message's fixed header.
    mutating func appendBytes(_ raw: [UInt8]) {
        raw.withUnsafeBytes { write($0) }
    }

    /// Pads with zeros to a multiple of `boundary`.
    mutating func pad(to boundary: Int) {
        let remainder = count % boundary
        guard remainder != 0 else { return }
        let padding = boundary - remainder
        guard let at = room(padding) else { return }
        at.initializeMemory(as: UInt8.self, repeating: 0, count: padding)
        count += padding
    }

    private mutating func appendInteger<Number: FixedWidthInteger>(_ number: Number) {
        pad(to: MemoryLayout<Number>.size)
        write(number)
    }

    private mutating func appendString(_ text: String) {
        pad(to: 4)
        text.withUTF8Bytes { utf8 in
            write(UInt32(utf8.count))
            write(UnsafeRawBufferPointer(utf8))
        }
        write(UInt8(0))
    }

    private mutating func appendSignature(_ text: String) {
        text.withUTF8Bytes { utf8 in
            write(UInt8(truncatingIfNeeded: utf8.count))
            write(UnsafeRawBufferPointer(utf8))
        }
        write(UInt8(0))
    }

    // MARK: - The buffer

    private final class Buffer {
        private(set) var base: UnsafeMutableRawPointer
        private(set) var capacity: Int

        init?(capacity: Int) {
            guard let base = malloc(capacity) else { return nil }
            self.base = base
            self.capacity = capacity
        }

        /// Whether the buffer now holds `capacity` bytes (false: unchanged, out of memory).
        func resize(to capacity: Int) -> Bool {
            guard let base = realloc(base, capacity) else { return false }
            self.base = base
            self.capacity = capacity
            return true
        }

        deinit { free(base) }
    }

    /// Where the next `extra` bytes go: the encoder's own buffer (copied first if a copy of the
    /// encoder shares it), with room for them; nil once out of memory. The caller writes them
    /// and adds to `count`.
    @inline(__always)
    private mutating func room(_ extra: Int) -> UnsafeMutableRawPointer? {
        guard !outOfMemory else { return nil }
        if !isKnownUniquelyReferenced(&buffer) || buffer.unsafelyUnwrapped.capacity - count < extra {
            guard grow(to: count + extra) else {
                outOfMemory = true
                return nil
            }
        }
        return buffer.unsafelyUnwrapped.base + count
    }

    /// Makes the buffer the encoder's own with room for `needed` bytes: twice the last size
    /// when that can be had, else just enough. False when not even that can.
    private mutating func grow(to needed: Int) -> Bool {
        let doubled = Swift.max(needed, (buffer?.capacity ?? 0) * 2, 64)
        // Two tries, without an array of them: an array would be an allocation per growth.
        for attempt in 0..<2 {
            let capacity = attempt == 0 ? doubled : needed
            if attempt == 1, capacity == doubled { break }
            // Uniqueness first: binding the buffer to a name would be a second reference.
            if isKnownUniquelyReferenced(&buffer), let buffer {
                if buffer.resize(to: capacity) { return true }
                continue
            }
            guard let fresh = Buffer(capacity: Swift.max(capacity, 1)) else { continue }
            if let buffer, count > 0 { fresh.base.copyMemory(from: buffer.base, byteCount: count) }
            buffer = fresh
            return true
        }
        return false
    }

    private mutating func write<Number: FixedWidthInteger>(_ number: Number) {
        guard let at = room(MemoryLayout<Number>.size) else { return }
        at.storeBytes(of: number.littleEndian, as: Number.self)
        count += MemoryLayout<Number>.size
    }

    private mutating func write(_ raw: UnsafeRawBufferPointer) {
        guard let source = raw.baseAddress, raw.count > 0, let at = room(raw.count) else { return }
        at.copyMemory(from: source, byteCount: raw.count)
        count += raw.count
    }

    /// The alignment of a value whose signature starts with `code`.
    static func alignment(of code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 4
        }
    }
}

extension String {
    /// `body` run on the string's UTF-8, without copying it when, as almost always, it is stored
    /// contiguously (a native string's is).
    func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(utf8).withUnsafeBufferPointer(body)
    }
}

extension UnsafeRawBufferPointer {
    /// Whether `other` holds the same bytes: one memcmp, where `elementsEqual` would walk both
    /// through their iterators byte by byte (on every activity's signals, for object paths).
    func holdsSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        count == other.count && (count == 0 || memcmp(baseAddress!, other.baseAddress!, count) == 0)
    }
}
