/// One D-Bus value of any type: the basic types, containers and variants.
///
/// Containers carry the signature of their elements so that an empty array still has a type.
/// A dictionary is an array of `.dictEntry` values; `Value.dictionary(key:value:_:)` builds one.
public enum Value: Hashable, Sendable {
    // Only the cases that hold a Value directly are indirect: boxing every case would cost a
    // heap allocation per string or number sent, several per entry of a large Activities signal.
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
    /// A file descriptor a received message carried (`h`). Nothing here takes one: the
    /// descriptor was closed when the message was read, and this only holds its place, so that
    /// a message with one (dbus-daemon 1.16's `GetConnectionCredentials` reply, whose
    /// `ProcessFD` is a pidfd) reads whole. It cannot be sent.
    case unixFileDescriptor
    /// An array whose elements all have the signature `element`.
    case array(element: Signature, [Value])
    /// A struct: one or more fields.
    case structure([Value])
    /// A dictionary entry; only valid as the element of an array.
    indirect case dictEntry(key: Value, value: Value)
    /// A value together with its own type.
    indirect case variant(Value)

    /// Whether this is a value of a basic type: a number, boolean, string, object path or
    /// signature, not a container or variant.
    public var isBasic: Bool {
        switch self {
        case .array, .structure, .dictEntry, .variant: false
        default: true
        }
    }

    /// The value's type signature.
    public var signature: Signature {
        Signature(unchecked: signatureText)
    }

    var signatureText: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFileDescriptor: "h"
        case .array(let element, _): "a" + element.rawValue
        case .structure(let fields): "(" + fields.map(\.signatureText).joined() + ")"
        case .dictEntry(let key, let value): "{" + key.signatureText + value.signatureText + "}"
        case .variant: "v"
        }
    }

    /// A dictionary `a{KV}` from key/value pairs, in the order given.
    public static func dictionary(key: Signature, value: Signature, _ entries: [(Value, Value)]) -> Value {
        .array(
            element: Signature(unchecked: "{" + key.rawValue + value.rawValue + "}"),
            entries.map { .dictEntry(key: $0.0, value: $0.1) }
        )
    }

    /// An `a{sv}` dictionary, the usual shape of property maps.
    public static func properties(_ entries: [(String, Value)]) -> Value {
        .array(element: .stringToVariantEntry, entries.map { .dictEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    /// The length in bytes of `signatureText`, computed without building it.
    var signatureLength: Int {
        switch self {
        case .array(let element, _): 1 + element.rawValue.utf8.count
        case .structure(let fields): fields.reduce(2) { $0 + $1.signatureLength }
        case .dictEntry(let key, let value): 2 + key.signatureLength + value.signatureLength
        default: 1
        }
    }

    /// Whether `signatureText == signature`, decided without building `signatureText`: this
    /// runs for every element of every array that is sent.
    func hasSignature(_ signature: Signature) -> Bool {
        var text = signature.rawValue
        return text.withUTF8 { bytes in signatureEnd(in: bytes, from: 0) == bytes.count }
    }

    /// If `signatureText` appears in `bytes` at `start`, the index just past it; else nil.
    private func signatureEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        func expect(_ code: Unicode.Scalar, at index: Int) -> Int? {
            index < bytes.count && bytes[index] == UInt8(ascii: code) ? index + 1 : nil
        }
        switch self {
        case .array(let element, _):
            guard let next = expect("a", at: start) else { return nil }
            var element = element.rawValue
            return element.withUTF8 { element in
                guard next + element.count <= bytes.count,
                    element.indices.allSatisfy({ bytes[next + $0] == element[$0] })
                else { return nil }
                return next + element.count
            }
        case .structure(let fields):
            guard var index = expect("(", at: start) else { return nil }
            for field in fields {
                guard let next = field.signatureEnd(in: bytes, from: index) else { return nil }
                index = next
            }
            return expect(")", at: index)
        case .dictEntry(let key, let value):
            guard let afterOpen = expect("{", at: start),
                let afterKey = key.signatureEnd(in: bytes, from: afterOpen),
                let afterValue = value.signatureEnd(in: bytes, from: afterKey)
            else { return nil }
            return expect("}", at: afterValue)
        case .byte: return expect("y", at: start)
        case .boolean: return expect("b", at: start)
        case .int16: return expect("n", at: start)
        case .uint16: return expect("q", at: start)
        case .int32: return expect("i", at: start)
        case .uint32: return expect("u", at: start)
        case .int64: return expect("x", at: start)
        case .uint64: return expect("t", at: start)
        case .double: return expect("d", at: start)
        case .string: return expect("s", at: start)
        case .objectPath: return expect("o", at: start)
        case .signature: return expect("g", at: start)
        case .unixFileDescriptor: return expect("h", at: start)
        case .variant: return expect("v", at: start)
        }
    }
}

extension Signature {
    /// `{sv}`: the element of property maps, a constant so that no literal is re-validated
    /// for every `PropertiesChanged`.
    static let stringToVariantEntry = Signature(unchecked: "{sv}")
    /// `s`: the element of arrays of names (`InterfacesRemoved`, invalidated properties).
    static let string: Signature = "s"
}

// MARK: - Reading values

extension Value {
    /// The string inside `.string`, `.objectPath` or `.signature`.
    public var string: String? {
        switch self {
        case .string(let text): text
        case .objectPath(let path): path.rawValue
        case .signature(let signature): signature.rawValue
        default: nil
        }
    }

    public var bool: Bool? { if case .boolean(let value) = self { value } else { nil } }
    public var uint32: UInt32? { if case .uint32(let value) = self { value } else { nil } }
    public var int32: Int32? { if case .int32(let value) = self { value } else { nil } }
    public var uint64: UInt64? { if case .uint64(let value) = self { value } else { nil } }
    public var int64: Int64? { if case .int64(let value) = self { value } else { nil } }
    public var double: Double? { if case .double(let value) = self { value } else { nil } }

    /// The elements of an array.
    public var elements: [Value]? { if case .array(_, let values) = self { values } else { nil } }
    /// The fields of a struct.
    public var fields: [Value]? { if case .structure(let values) = self { values } else { nil } }
    /// The value inside a variant.
    public var unwrapped: Value? { if case .variant(let inner) = self { inner } else { nil } }

    /// The entries of a dictionary with string keys (`a{s…}`), variants left as they are.
    /// Later duplicates of a key win.
    public var stringKeyedEntries: [String: Value]? {
        guard case .array(_, let entries) = self else { return nil }
        var result: [String: Value] = [:]
        for entry in entries {
            guard case .dictEntry(.string(let key), let value) = entry else { return nil }
            result[key] = value
        }
        return result
    }
}

// MARK: - Checking before encoding

extension Value {
    /// Checks what libdbus would otherwise abort on: array elements that do not match the
    /// declared element type, dictionary entries outside arrays, empty structs, strings with an
    /// embedded NUL, and nesting beyond the D-Bus limits (32 arrays, 32 structs, 64 containers
    /// in all, variants included).
    func validateForEncoding() throws(BusError) {
        try validateForEncoding(depth: Depth())
    }

    /// How deep a value sits, counted through variants as the bus counts it.
    private struct Depth {
        var arrays = 0
        var structs = 0
        var total = 0

        func entering(array: Bool = false, structure: Bool = false) throws(BusError) -> Depth {
            var next = self
            next.total += 1
            if array { next.arrays += 1 }
            if structure { next.structs += 1 }
            guard next.arrays <= 32, next.structs <= 32, next.total <= 64 else {
                throw BusError(.invalidArgs, "value nested deeper than D-Bus allows (32 arrays, 32 structs, 64 in all)")
            }
            return next
        }
    }

    private func validateForEncoding(depth: Depth) throws(BusError) {
        // A basic type or a variant is always one complete type; only containers, whose
        // element signatures come from outside, need libdbus to check.
        guard !isContainer || hasSingleCompleteSignature else {
            throw BusError(.invalidArgs, "'\(signatureText)' is not a valid single complete type")
        }
        try validateContents(insideArray: false, depth: depth)
    }

    private func validateContents(insideArray: Bool, depth: Depth) throws(BusError) {
        switch self {
        case .string(let text):
            guard !text.containsNUL else {
                throw BusError(.invalidArgs, "strings may not contain NUL characters")
            }
        case .array(let element, let values):
            let inner = try depth.entering(array: true)
            for value in values {
                guard value.hasSignature(element) else {
                    throw BusError(
                        .invalidArgs,
                        "array of '\(element)' holds an element of type '\(value.signatureText)'")
                }
                try value.validateContents(insideArray: true, depth: inner)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw BusError(.invalidArgs, "structs need at least one field") }
            let inner = try depth.entering(structure: true)
            for field in fields { try field.validateContents(insideArray: false, depth: inner) }
        case .dictEntry(let key, let value):
            guard insideArray else {
                throw BusError(.invalidArgs, "a dictionary entry may only stand inside an array")
            }
            let inner = try depth.entering(structure: true)
            try key.validateContents(insideArray: false, depth: inner)
            try value.validateContents(insideArray: false, depth: inner)
        case .variant(let inner):
            try inner.validateForEncoding(depth: try depth.entering())
        default:
            break
        }
    }
}

extension Value {
    /// Whether this is an array, struct or dictionary entry (variants do not count: `v` is
    /// always one complete type).
    fileprivate var isContainer: Bool {
        switch self {
        case .array, .structure, .dictEntry: true
        default: false
        }
    }

    /// Whether `signature` is one complete type. Arrays of a basic type, of variants or of
    /// `{sv}` (nearly every array sent, `PropertiesChanged` included) are recognised here
    /// without asking libdbus, whose check costs more than encoding a small signal's body.
    fileprivate var hasSingleCompleteSignature: Bool {
        guard case .array(let element, _) = self else { return signature.isSingleCompleteType }
        if element == .stringToVariantEntry || Self.knownElements.contains(element.rawValue) { return true }
        let codes = element.rawValue.utf8
        if codes.count == 1, let code = codes.first, Self.singleCodeTypes.utf8.contains(code) { return true }
        // A struct of basic types, as a list of records is sent.
        if codes.count > 2, codes.first == UInt8(ascii: "("), codes.last == UInt8(ascii: ")"),
            codes.dropFirst().dropLast().allSatisfy({ Self.singleCodeTypes.utf8.contains($0) })
        {
            return true
        }
        return signature.isSingleCompleteType
    }

    /// Element signatures every ObjectManager signal and reply carries, known to be one
    /// complete type each.
    private static let knownElements: Set<String> = ["{sa{sv}}", "{oa{sa{sv}}}"]

    /// The type codes that are a complete type on their own: the basic types (but for the
    /// rare `h`, left to libdbus) and `v`.
    private static let singleCodeTypes = "ybnqiuxtdsogv"
}
