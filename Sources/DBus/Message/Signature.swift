/// A D-Bus type signature: zero or more complete types, such as `a(sv)` or `ss`.
public struct Signature: ValidatedName {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
    public static let kind = "type signature"

    public static func isValid(_ string: String) -> Bool {
        NameCheck.signature.accepts(string)
    }

    /// The empty signature (no arguments).
    public static let empty = Signature(unchecked: "")

    /// Whether this signature holds exactly one complete type.
    public var isSingleCompleteType: Bool {
        guard !rawValue.isEmpty else { return false }
        return NameCheck.singleCompleteType.accepts(rawValue)
    }

    /// The complete types this signature is made of: `sa{sv}u` gives `s`, `a{sv}`, `u`.
    public var completeTypes: [Signature] {
        var types: [Signature] = []
        var rest = Substring(rawValue)
        while !rest.isEmpty {
            let length = Signature.completeTypeLength(rest)
            guard length > 0 else { break }
            types.append(Signature(unchecked: String(rest.prefix(length))))
            rest = rest.dropFirst(length)
        }
        return types
    }

    /// Length in characters of the complete type at the start of `text`, 0 if there is none.
    /// Only called on signatures libdbus has already validated.
    private static func completeTypeLength(_ text: Substring) -> Int {
        guard let first = text.first else { return 0 }
        switch first {
        case "a":
            let element = completeTypeLength(text.dropFirst())
            return element > 0 ? element + 1 : 0
        case "(", "{":
            let close: Character = first == "(" ? ")" : "}"
            var length = 1
            var rest = text.dropFirst()
            while let next = rest.first, next != close {
                let inner = completeTypeLength(rest)
                guard inner > 0 else { return 0 }
                length += inner
                rest = rest.dropFirst(inner)
            }
            return rest.first == close ? length + 1 : 0
        default:
            return 1
        }
    }
}
