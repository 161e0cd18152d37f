import NetActivity

/// Text laid out in a terminal's cells: what reaches the terminal is printable, and how many
/// cells it takes is known, however hostile the label it came from.
///
/// Labels, application names and kinds come from other processes. A control character (an
/// escape sequence begins with one) would move the cursor or retitle the window; a format
/// character (a bidirectional override, a zero-width joiner) would reorder or merge what
/// follows; an emoji sequence's width differs between terminals. None of them may reach the
/// screen of `netactivity top` as it came.
enum TerminalText {
    // MARK: - Printable

    /// `text` with each character made one whose width every terminal agrees on: printable by
    /// the one rule (`PrintableText`: controls and unassigned code points as "?", format
    /// characters left out, separators as spaces), a flag as its two letters ("FR");
    /// of any other character made of several scalars, the first and its combining marks (an
    /// emoji sequence shows as its first emoji).
    static func printable(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for character in text {
            var scalars = character.unicodeScalars.makeIterator()
            guard let first = scalars.next() else { continue }
            switch PrintableText.treatment(of: first) {
            case .replace: result.append("?")
            case .drop: continue
            case .space: result.append(" ")
            case _ where regionalIndicators.contains(first.value):
                // A flag is two of these, one or two cells wide by terminal: its letters instead.
                for scalar in character.unicodeScalars where regionalIndicators.contains(scalar.value) {
                    let letter = UInt8(scalar.value - regionalIndicators.lowerBound)
                    result.append(Unicode.Scalar(UInt8(ascii: "A") + letter))
                }
            default:
                result.append(first)
                while let next = scalars.next() {
                    switch next.properties.generalCategory {
                    case .nonspacingMark, .enclosingMark, .spacingMark: result.append(next)
                    default: continue
                    }
                }
            }
        }
        return String(result)
    }

    private static let regionalIndicators: ClosedRange<UInt32> = 0x1F1E6...0x1F1FF

    // MARK: - Width

    /// The cells `text` takes; exact for `printable` text.
    static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + width(of: $1) }
    }

    /// The cells one scalar takes: 0 for combining marks and format characters, 2 for East
    /// Asian wide and fullwidth characters and emoji shown as emoji, else 1. Ambiguous-width
    /// characters ("—", "…") count 1, as terminals outside CJK locales show them.
    static func width(of scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        let value = scalar.value
        // Hangul's conjoining medial vowels and final consonants join the syllable before.
        if (0x1160...0x11FF).contains(value) { return 0 }
        if scalar.properties.isEmojiPresentation || wide.contains(where: { $0.contains(value) }) { return 2 }
        return 1
    }

    /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth.txt, W and F), by block.
    private static let wide: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
        0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
        0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x18AFF, 0x1B000...0x1B2FF, 0x20000...0x2FFFD,
        0x30000...0x3FFFD,
    ]

    // MARK: - Fitting

    /// `text` (printable) cut to at most `cells`, ending in "…" when cut; a wide character that
    /// would straddle the edge is left out whole.
    static func fitted(_ text: String, to cells: Int) -> String {
        guard cells > 0 else { return "" }
        guard width(text) > cells else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let needed = width(String(character))
            guard used + needed <= cells - 1 else { break }
            kept.append(character)
            used += needed
        }
        return kept + "…"
    }

    /// Where `padded` puts the spaces.
    enum Alignment { case left, right }

    /// `text` (printable) fitted to `cells` and filled with spaces to exactly `cells`.
    static func padded(_ text: String, to cells: Int, _ alignment: Alignment = .left) -> String {
        let fitted = fitted(text, to: cells)
        let fill = String(repeating: " ", count: max(0, cells - width(fitted)))
        return alignment == .left ? fitted + fill : fill + fitted
    }
}
