/// A JSON value (RFC 8259), parsed from the bytes of one message.
///
/// The parser is strict (no comments, no trailing commas, nothing after the value) and bounded:
/// at most `maximumDepth` nested arrays and objects, so a hostile message costs no stack.
/// Written here rather than taken from Foundation, which `netactivity` does not link: it would
/// cost every command (`watch`, `tray`) the whole of Foundation and its ICU data.
public enum JSONValue: Equatable, Sendable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    /// Nesting deeper than this is refused.
    public static let maximumDepth = 64

    /// Why bytes are not one JSON value.
    public struct SyntaxError: Error, Equatable, Sendable {
        /// The byte offset where it went wrong.
        public var offset: Int
    }

    /// Parses `bytes` as one JSON value, surrounded by whitespace at most.
    ///
    /// - Throws: `SyntaxError` if they are not, or nest deeper than `maximumDepth`.
    public static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        var parser = Parser(bytes: bytes)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.offset == bytes.count else { throw SyntaxError(offset: parser.offset) }
        return value
    }
}

private struct Parser {
    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    var error: JSONValue.SyntaxError { JSONValue.SyntaxError(offset: offset) }

    mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    mutating func value(depth: Int) throws(JSONValue.SyntaxError) -> JSONValue {
        skipWhitespace()
        guard offset < bytes.count else { throw error }
        switch bytes[offset] {
        case UInt8(ascii: "{"):
            guard depth < JSONValue.maximumDepth else { throw error }
            return try object(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < JSONValue.maximumDepth else { throw error }
            return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return .number(try number())
        }
    }

    mutating func literal(_ word: String, _ value: JSONValue) throws(JSONValue.SyntaxError) -> JSONValue {
        let word = Array(word.utf8)
        guard bytes.count - offset >= word.count, Array(bytes[offset..<(offset + word.count)]) == word else { throw error }
        offset += word.count
        return value
    }

    mutating func object(depth: Int) throws(JSONValue.SyntaxError) -> JSONValue {
        offset += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw error }
            let key = try string()
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw error }
            offset += 1
            // A repeated key: the last one counts, as in most parsers.
            members[key] = try value(depth: depth)
            skipWhitespace()
            guard offset < bytes.count else { throw error }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
            } else if bytes[offset] == UInt8(ascii: "}") {
                offset += 1
                return .object(members)
            } else {
                throw error
            }
        }
    }

    mutating func array(depth: Int) throws(JSONValue.SyntaxError) -> JSONValue {
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard offset < bytes.count else { throw error }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
            } else if bytes[offset] == UInt8(ascii: "]") {
                offset += 1
                return .array(elements)
            } else {
                throw error
            }
        }
    }

    /// A string, its opening quote at `offset`; the bytes are known to be UTF-8 already.
    mutating func string() throws(JSONValue.SyntaxError) -> String {
        offset += 1
        var scalars = String.UnicodeScalarView()
        var run = offset
        func flush(upTo end: Int) {
            scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars)
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                flush(upTo: offset)
                offset += 1
                return String(scalars)
            }
            guard byte >= 0x20 else { throw error }
            guard byte == UInt8(ascii: "\\") else {
                offset += 1
                continue
            }
            flush(upTo: offset)
            offset += 1
            guard offset < bytes.count else { throw error }
            let escape = bytes[offset]
            offset += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800...0xDBFF).contains(code) {
                    // A high surrogate must be followed by an escaped low one.
                    guard bytes.count - offset >= 2, bytes[offset] == UInt8(ascii: "\\"),
                        bytes[offset + 1] == UInt8(ascii: "u")
                    else { throw error }
                    offset += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw error }
                scalars.append(scalar)
            default:
                throw error
            }
            run = offset
        }
        throw error
    }

    mutating func hex4() throws(JSONValue.SyntaxError) -> UInt32 {
        // Four hex digits exactly: `UInt32(_:radix:)` would also take a sign (`\u+041`, `\u-000`).
        guard bytes.count - offset >= 4, bytes[offset..<(offset + 4)].allSatisfy(\.isHexDigit),
            let code = UInt32(String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self), radix: 16)
        else { throw error }
        offset += 4
        return code
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    mutating func number() throws(JSONValue.SyntaxError) -> Double {
        let start = offset
        func digits() -> Int {
            let first = offset
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
            return offset - first
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let integerStart = offset
        guard digits() > 0 else { throw error }
        guard bytes[integerStart] != UInt8(ascii: "0") || offset - integerStart == 1 else { throw error }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw error }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw error }
        }
        guard let number = Double(String(decoding: bytes[start..<offset], as: UTF8.self)) else { throw error }
        return number
    }
}

extension UInt8 {
    /// An ASCII `0-9`, `a-f` or `A-F`.
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
