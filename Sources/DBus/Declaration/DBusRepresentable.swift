/// A Swift type with one D-Bus type: its signature, and the conversions to and from `Value`.
///
/// A descriptor's Swift type carries its signature, so the service's getter, the client's
/// decoder and the generated introspection XML cannot disagree on it.
public protocol DBusRepresentable: Sendable {
    /// The D-Bus type signature of every value of this type.
    static var signature: Signature { get }
    /// Decodes `value`; nil if it has another type. Never traps on what a peer sent.
    init?(_ value: Value)
    /// The value on the wire.
    var value: Value { get }
    /// `values[index]` as this type: the step `MethodDescriptor.decode` takes for each argument.
    static func decoded(_ values: [Value], at index: Int) throws(ArgumentMismatch) -> Self
}

extension DBusRepresentable {
    // A requirement with a default, not a generic helper: each conformance's witness is this
    // body made for its own type, so decoding a call's arguments asks the runtime for no
    // `Optional` metadata (docs/benchmarks.md, "Why the hot path looks the way it does").
    @inlinable public static func decoded(_ values: [Value], at index: Int) throws(ArgumentMismatch) -> Self {
        guard let decoded = Self(values[index]) else { throw ArgumentMismatch() }
        return decoded
    }
}

// Stored, not computed: a signature is made (and checked) once, not at every use.

extension Bool: DBusRepresentable {
    public static let signature: Signature = "b"
    public init?(_ value: Value) {
        guard case .boolean(let flag) = value else { return nil }
        self = flag
    }
    public var value: Value { .boolean(self) }
}

extension UInt8: DBusRepresentable {
    public static let signature: Signature = "y"
    public init?(_ value: Value) {
        guard case .byte(let number) = value else { return nil }
        self = number
    }
    public var value: Value { .byte(self) }
}

extension Int32: DBusRepresentable {
    public static let signature: Signature = "i"
    public init?(_ value: Value) {
        guard case .int32(let number) = value else { return nil }
        self = number
    }
    public var value: Value { .int32(self) }
}

extension UInt32: DBusRepresentable {
    public static let signature: Signature = "u"
    public init?(_ value: Value) {
        guard case .uint32(let number) = value else { return nil }
        self = number
    }
    public var value: Value { .uint32(self) }
}

extension UInt64: DBusRepresentable {
    public static let signature: Signature = "t"
    public init?(_ value: Value) {
        guard case .uint64(let number) = value else { return nil }
        self = number
    }
    public var value: Value { .uint64(self) }
}

extension Double: DBusRepresentable {
    public static let signature: Signature = "d"
    public init?(_ value: Value) {
        guard case .double(let number) = value else { return nil }
        self = number
    }
    public var value: Value { .double(self) }
}

extension String: DBusRepresentable {
    public static let signature: Signature = "s"
    public init?(_ value: Value) {
        guard case .string(let text) = value else { return nil }
        self = text
    }
    public var value: Value { .string(self) }
}

extension ObjectPath: DBusRepresentable {
    public static let signature: Signature = "o"
    public init?(_ value: Value) {
        guard case .objectPath(let path) = value else { return nil }
        self = path
    }
    public var value: Value { .objectPath(self) }
}

/// `aX` for an element type `X`. Decoding is all or nothing: one element of another type
/// rejects the array.
extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var signature: Signature { Signature(unchecked: "a" + Element.signature.rawValue) }
    public init?(_ value: Value) {
        guard case .array(_, let elements) = value else { return nil }
        var decoded: [Element] = []
        decoded.reserveCapacity(elements.count)
        for element in elements {
            guard let item = Element(element) else { return nil }
            decoded.append(item)
        }
        self = decoded
    }
    public var value: Value { .array(element: Element.signature, map(\.value)) }
}

/// An `a{sv}` dictionary as it was sent: every entry in order, duplicates and unknown keys
/// kept, so that the receiver decides what each one means (`BeginActivityWithHints`' hints).
public struct VariantDictionary: DBusRepresentable, Equatable {
    public static let signature: Signature = "a{sv}"
    /// The `a{sv}` value.
    public let value: Value

    /// Wraps an `a{sv}` value; nil for any other type.
    public init?(_ value: Value) {
        guard case .array(let element, _) = value, element.rawValue == "{sv}" else { return nil }
        self.value = value
    }

    /// The dictionary of `entries`, in order, each value wrapped in a variant.
    public init(_ entries: [(String, Value)]) {
        value = .properties(entries)
    }
}

/// A `v`: one value of any type, as `Properties.Get` answers and a hint carries it; a
/// `PropertyDescriptor` decodes `contents` to its own type.
public struct Variant: DBusRepresentable, Equatable {
    public static let signature: Signature = "v"
    /// The value inside.
    public let contents: Value

    public init?(_ value: Value) {
        guard let inner = value.unwrapped else { return nil }
        contents = inner
    }

    public init(wrapping contents: Value) {
        self.contents = contents
    }

    public var value: Value { .variant(contents) }
}
