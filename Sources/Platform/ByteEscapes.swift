/// Names the kernel and systemd write with some bytes escaped as a backslash and three
/// characters: `\040` (octal) in mountinfo, `\x2d` (hex) in unit names. One decoder for both, so
/// the two formats differ only in how three characters name a byte.
public enum ByteEscapes {
    /// How the three characters after a backslash name a byte.
    public enum Notation: Sendable {
        /// Three octal digits: mountinfo's `\040`.
        case octal
        /// `x` and two hex digits: systemd's `\x2d`.
        case hex
    }

    /// `text`'s bytes with every escape in `notation` undone. A backslash that starts no valid
    /// escape is kept as it is, unless `strict`, which refuses the text (nil).
    public static func undone(_ text: Substring, _ notation: Notation, strict: Bool) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var rest = text.utf8[...]
        while let byte = rest.first {
            if byte == UInt8(ascii: "\\") {
                if let value = decode(rest.dropFirst().prefix(3), notation) {
                    bytes.append(value)
                    rest = rest.dropFirst(4)
                    continue
                }
                if strict { return nil }
            }
            bytes.append(byte)
            rest = rest.dropFirst()
        }
        return bytes
    }

    private static func decode(_ characters: Substring.UTF8View.SubSequence, _ notation: Notation) -> UInt8? {
        guard characters.count == 3 else { return nil }
        switch notation {
        case .octal:
            return UInt8(String(decoding: characters, as: UTF8.self), radix: 8)
        case .hex:
            guard characters.first == UInt8(ascii: "x") else { return nil }
            return UInt8(String(decoding: characters.dropFirst(), as: UTF8.self), radix: 16)
        }
    }
}
