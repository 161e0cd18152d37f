/// The one XML escaper: introspection documents, the test bus's configuration, and the
/// markup of tooltips (Pango's and the tray hosts' HTML subset read the same three entities).
package enum XMLText {
    /// `text` with `&`, `<` and `>` escaped, and the quotes too for an attribute's value.
    package static func escaped(_ text: String, forAttribute: Bool = false) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"" where forAttribute: escaped += "&quot;"
            case "'" where forAttribute: escaped += "&apos;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
