/// A minimal JSON writer with a fixed key order, so scripts see stable output.
enum JSONText {
    case string(String)
    case number(Double)
    case integer(UInt64)
    case bool(Bool)
    case null
    case array([JSONText])
    case object([(String, JSONText)])

    var text: String {
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

    static func quote(_ value: String) -> String {
        var quoted = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case let control where control.value < 0x20 || control.value == 0x7F || (0x2028...0x2029).contains(control.value):
                let hex = String(control.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
