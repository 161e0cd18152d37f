import DBus
import Foundation
import NetActivity
import Testing

/// The one rule for text that reaches a person (`PrintableText`), and the JSON and XML writers
/// that follow it.
@Suite struct PrintableTextTests {
    /// Every kind of code point the rule changes, with what it becomes.
    static let hostile: [(String, String)] = [
        ("\u{1B}[31mred", "?[31mred"),  // C0: ESC begins a terminal's escape sequence
        ("\u{9B}31mred", "?31mred"),  // C1: the one-byte CSI
        ("bell\u{07}del\u{7F}", "bell?del?"),
        ("tab\there\nnext", "tab?here?next"),
        ("file\u{202E}gpj.exe", "filegpj.exe"),  // right-to-left override
        ("\u{202A}\u{202B}\u{202C}\u{202D}x", "x"),  // the other embeddings and overrides
        ("\u{2066}\u{2067}\u{2068}\u{2069}x", "x"),  // the isolates
        ("\u{200E}\u{200F}\u{061C}x", "x"),  // the marks
        ("zero\u{200B}width\u{200D}joiner\u{FEFF}", "zerowidthjoiner"),  // other format characters
        ("soft\u{AD}hyphen", "softhyphen"),
        ("tag\u{E0041}", "tag"),  // a tag character, beyond the BMP
        ("line\u{2028}paragraph\u{2029}end", "line paragraph end"),
        ("unassigned\u{0378}", "unassigned?"),
    ]

    @Test(arguments: hostile) func hostileCodePointsAreReplacedOrLeftOut(input: String, shown: String) {
        #expect(PrintableText.printable(input) == shown)
        #expect(PrintableText.printable(input).unicodeScalars.allSatisfy { PrintableText.treatment(of: $0) == .keep })
    }

    @Test func textThatNeedsNothingIsUnchanged() {
        for text in ["Backup photos", "Ünïcödé — 日本語 ✓ 🇫🇷", "", "a\u{301}", "\u{FFFD}"] {
            #expect(PrintableText.printable(text) == text)
        }
    }

    @Test func aLabelMadeFromACommandLineShowsControlsAsSpaces() {
        #expect(PrintableText.printable("curl\t-O\u{1B}x", replacement: " ") == "curl -O x")
    }

    /// JSON keeps the data whole for a parser and escapes, as `\uXXXX`, every code point the
    /// rule would change, so a JSON line printed on a terminal is as safe as text.
    @Test(arguments: hostile) func jsonEscapesWhatTheRuleChanges(input: String, shown: String) throws {
        let quoted = JSONText.quote(input)
        #expect(quoted.unicodeScalars.allSatisfy { PrintableText.treatment(of: $0) == .keep }, "\(quoted)")
        let parsed = try JSONSerialization.jsonObject(with: Data("[\(quoted)]".utf8)) as? [String]
        #expect(parsed == [input])
    }

    @Test func jsonEscapesBeyondTheBMPAsASurrogatePair() {
        #expect(JSONText.quote("\u{E0041}") == "\"\\udb40\\udc41\"")
        #expect(JSONText.quote("\u{9B}") == "\"\\u009b\"")
        #expect(JSONText.quote("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"")
    }

    @Test func xmlEscapesMarkupAndQuotesOnlyInAttributes() {
        #expect(XMLText.escaped("a & <b> \"c\" 'd'") == "a &amp; &lt;b&gt; \"c\" 'd'")
        #expect(XMLText.escaped("\"'", forAttribute: true) == "&quot;&apos;")
    }

    @Test func markupIsPrintableAndEscaped() {
        #expect("\u{9B}1m<b>Tom & Jerry</b>\u{202E}".markupEscaped == "?1m&lt;b&gt;Tom &amp; Jerry&lt;/b&gt;")
    }
}
