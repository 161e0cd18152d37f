/// The one rule for text that another program wrote and a person reads: labels, application
/// names, kinds, file names, words from the environment. Every output follows it (`status`,
/// `watch` in every format, `top`, the shell hooks' messages, the tray's tooltip, the browser
/// host's log), and the GNOME Shell extension's `printable` in `text.js` follows the same.
///
/// Labels come from any program on the bus. A control character begins a terminal's escape
/// sequence (C1's U+009B is a whole CSI in one code point); a bidirectional control reorders
/// what follows it, so a file name can read backwards from what it is; other format characters
/// are invisible. None of them may reach a person as written.
package enum PrintableText {
    /// What the rule does to one code point.
    package enum Treatment: Equatable, Sendable {
        /// Shown as it is.
        case keep
        /// A control character (C0, DEL, C1) or an unassigned code point: shown as a
        /// replacement, so that something stands where it stood.
        case replace
        /// A line or paragraph separator: a space.
        case space
        /// A format character: the bidirectional controls (U+202A–202E, U+2066–2069, U+200E,
        /// U+200F, U+061C), zero-width characters, the soft hyphen, tags: left out.
        case drop
    }

    package static func treatment(of scalar: Unicode.Scalar) -> Treatment {
        // ASCII's printable range first: nearly every label is only that.
        if scalar.value >= 0x20 && scalar.value < 0x7F { return .keep }
        switch scalar.properties.generalCategory {
        case .control, .unassigned, .surrogate: return .replace
        case .format: return .drop
        case .lineSeparator, .paragraphSeparator: return .space
        default: return .keep
        }
    }

    /// `text` by the rule, controls shown as `replacement`. Invalid UTF-8 was already made
    /// U+FFFD where the text was decoded, which shows as itself.
    package static func printable(_ text: some StringProtocol, replacement: Unicode.Scalar = "?") -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return String(text) }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch treatment(of: scalar) {
            case .keep: result.append(scalar)
            case .replace: result.append(replacement)
            case .space: result.append(" ")
            case .drop: continue
            }
        }
        return String(result)
    }

    /// A label made from text another program wrote (a command line, a unit's description): one
    /// printable line, a control as a space, cut on a character to what the service accepts.
    package static func label(_ text: some StringProtocol) -> String {
        NetActivityClient.fitted(printable(text, replacement: " "))
    }
}

extension Substring {
    /// Without the spaces, tabs and line ends at either end: a value in a `key = value` line.
    package var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
