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
    private(set) var bytes: [UInt8] = []

    /// Appends `value`. Nothing is checked here: values that break the rules (a NUL in a
    /// string, an element of another type than its array's) make bytes libdbus refuses.
    mutating func append(_ value: Value) {
        switch value {
        case .byte(let number): bytes.append(number)
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
        let lengthOffset = bytes.count
        bytes.append(contentsOf: [0, 0, 0, 0])
        pad(to: Self.alignment(of: element.rawValue.utf8.first ?? 0))
        let start = bytes.count
        try fill(&self)
        patch(UInt32(truncatingIfNeeded: bytes.count - start), at: lengthOffset)
    }

    mutating func reserveCapacity(_ capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Overwrites the four bytes at `offset` with `number`.
    mutating func patch(_ number: UInt32, at offset: Int) {
        withUnsafeBytes(of: number.littleEndian) { number in
            for index in 0..<4 { bytes[offset + index] = number[index] }
        }
    }

    /// The length of the message header these bytes start with, padding included: 16 fixed
    /// bytes and the array of header fields, whose length is the fixed part's last 4 bytes.
    var headerLength: Int {
        let fields = Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
        return (16 + fields + 7) / 8 * 8
    }

    /// Appends raw bytes, for a message's fixed header.
    mutating func appendBytes(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
    }

    /// Pads with zeros to a multiple of `boundary`.
    mutating func pad(to boundary: Int) {
        let remainder = bytes.count % boundary
        if remainder != 0 { bytes.append(contentsOf: repeatElement(0, count: boundary - remainder)) }
    }

    private mutating func appendInteger<Number: FixedWidthInteger>(_ number: Number) {
        pad(to: MemoryLayout<Number>.size)
        withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func appendString(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            appendInteger(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
        bytes.append(0)
    }

    private mutating func appendSignature(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            bytes.append(UInt8(utf8.count))
            bytes.append(contentsOf: utf8)
        }
        bytes.append(0)
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
