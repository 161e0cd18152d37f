/// The one JSON writer: a fixed key order, so scripts see stable output, and strings escaped
/// so that a JSON line printed on a terminal is as safe as `PrintableText` makes text.
package enum JSONText {
    case string(String)
    case number(Double)
    case integer(UInt64)
    case bool(Bool)
    case null
    case array([JSONText])
    case object([(String, JSONText)])

    package var text: String {
        switch self {
        case .string(let value): Self.quote(value)
        case .number(let value): value.isFinite ? "\(value)" : "null"
        case .integer(let value): "\(value)"
        case .bool(let value): value ? "true" : "false"
        case .null: "null"
        case .array(let values): "[" + values.map(\.text).joined(separator: ",") + "]"
        case .object(let members): "{" + members.map { Self.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    /// `value` as a JSON string. What `PrintableText` would not show as it is (controls,
    /// bidirectional and other format characters, separators, unassigned code points) is
    /// escaped as `\uXXXX`: the data stays whole for a parser, and none of it acts on a terminal.
    package static func quote(_ value: String) -> String {
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where PrintableText.treatment(of: scalar) != .keep:
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
