import DBus

/// What one call on a served job view changes, read from the call's decoded arguments by a pure
/// function, so a test or a fuzzer can drive it without a bus.
///
/// Both versions of the view say the same things: version 2 one setter a field
/// (`setInfoMessage`, `setProcessedAmount(amount, "bytes")`), version 3 a dictionary of what
/// changed (`update({"infoMessage": …, "processedBytes": …})`), and a V2 `requestView`'s hints
/// may carry the first state in version 3's keys. Everything is bounded here: a text longer than
/// `maximumTextBytes` is refused (`InvalidArgs`, nothing changes), amounts in units other than
/// bytes, unknown keys and keys of the wrong type are ignored, and a dictionary is read for its
/// first `maximumEntries` entries at most.
enum JobChange: Equatable, Sendable {
    case title(String)
    case infoMessage(String)
    /// Description field `number` (0 or 1: KIO's "Source" and "Destination") is `name: value`.
    case descriptionField(number: UInt32, name: String, value: String)
    case clearDescriptionField(number: UInt32)
    case processedBytes(UInt64)
    case totalBytes(UInt64)
    case percent(UInt32)
    case speed(UInt64)
    case suspended(Bool)
    /// The job failed; its `terminate` follows.
    case error(UInt32)
    case terminated

    /// The longest text a caller may set, in UTF-8 bytes: far above any title or URL KIO sends,
    /// far below what would let one caller fill the bridge's memory.
    static let maximumTextBytes = 4_096
    /// Description fields kept: KIO uses two.
    static let descriptionFields: ClosedRange<UInt32> = 0...1
    /// Entries of one `update` or hints dictionary that are read.
    static let maximumEntries = 64

    /// A call's arguments did not make sense (a text too long): the caller gets `InvalidArgs`.
    struct Refused: Error, Equatable {
        let message: String
    }

    // MARK: - Version 2: one setter a field

    /// The changes a version 2 call (`org.kde.JobViewV2`) with the decoded `arguments` makes;
    /// empty for a call that changes nothing shown (`setDestUrl`, an amount in files).
    static func version2(_ member: String, _ arguments: [Value]) throws(Refused) -> [JobChange] {
        typealias Views = JobViewInterfaces
        switch member {
        case Views.setInfoMessage.name.rawValue:
            guard let message = try? Views.setInfoMessage.decode(arguments) else { return [] }
            return [.infoMessage(try checked(message))]
        case Views.setDescriptionField.name.rawValue:
            guard let (number, name, value) = try? Views.setDescriptionField.decode(arguments),
                descriptionFields.contains(number)
            else { return [] }
            return [.descriptionField(number: number, name: try checked(name), value: try checked(value))]
        case Views.clearDescriptionField.name.rawValue:
            guard let number = try? Views.clearDescriptionField.decode(arguments), descriptionFields.contains(number) else {
                return []
            }
            return [.clearDescriptionField(number: number)]
        case Views.setProcessedAmount.name.rawValue:
            guard let (amount, unit) = try? Views.setProcessedAmount.decode(arguments), unit == "bytes" else { return [] }
            return [.processedBytes(amount)]
        case Views.setTotalAmount.name.rawValue:
            guard let (amount, unit) = try? Views.setTotalAmount.decode(arguments), unit == "bytes" else { return [] }
            return [.totalBytes(amount)]
        case Views.setPercent.name.rawValue:
            guard let percent = try? Views.setPercent.decode(arguments) else { return [] }
            return [.percent(min(percent, 100))]
        case Views.setSpeed.name.rawValue:
            guard let speed = try? Views.setSpeed.decode(arguments) else { return [] }
            return [.speed(speed)]
        case Views.setSuspended.name.rawValue:
            guard let suspended = try? Views.setSuspended.decode(arguments) else { return [] }
            return [.suspended(suspended)]
        case Views.setError.name.rawValue:
            guard let code = try? Views.setError.decode(arguments) else { return [] }
            return [.error(code)]
        case Views.terminate.name.rawValue:
            guard let message = try? Views.terminate.decode(arguments) else { return [] }
            _ = try checked(message)
            return [.terminated]
        default:
            return []
        }
    }

    // MARK: - Version 3: a dictionary

    /// The changes of a version 3 `update(properties)`, or of `requestView`'s `hints`.
    static func version3(_ properties: VariantDictionary) throws(Refused) -> [JobChange] {
        guard case .array(_, let entries) = properties.value else { return [] }
        var changes: [JobChange] = []
        var labels: [UInt32: String] = [:]
        var values: [UInt32: String] = [:]
        for entry in entries.prefix(maximumEntries) {
            guard case .dictEntry(.string(let key), .variant(let value)) = entry else { continue }
            switch (key, value) {
            case ("title", .string(let text)): changes.append(.title(try checked(text)))
            case ("infoMessage", .string(let text)): changes.append(.infoMessage(try checked(text)))
            case ("descriptionLabel1", .string(let text)): labels[0] = try checked(text)
            case ("descriptionValue1", .string(let text)): values[0] = try checked(text)
            case ("descriptionLabel2", .string(let text)): labels[1] = try checked(text)
            case ("descriptionValue2", .string(let text)): values[1] = try checked(text)
            case ("processedBytes", .uint64(let amount)): changes.append(.processedBytes(amount))
            case ("totalBytes", .uint64(let amount)): changes.append(.totalBytes(amount))
            case ("percent", .uint32(let percent)): changes.append(.percent(min(percent, 100)))
            case ("speed", .uint64(let speed)): changes.append(.speed(speed))
            case ("suspended", .boolean(let suspended)): changes.append(.suspended(suspended))
            default: continue
            }
        }
        // A field is its label and value together; an empty value clears it, as KJobWidgets does.
        for number in descriptionFields where labels[number] != nil || values[number] != nil {
            let value = values[number] ?? ""
            changes.append(
                value.isEmpty
                    ? .clearDescriptionField(number: number)
                    : .descriptionField(number: number, name: labels[number] ?? "", value: value))
        }
        return changes
    }

    /// The changes of a version 3 `terminate(errorCode, errorMessage, hints)`.
    static func version3Terminate(_ code: UInt32, _ message: String) throws(Refused) -> [JobChange] {
        _ = try checked(message)
        return code == 0 ? [.terminated] : [.error(code), .terminated]
    }

    private static func checked(_ text: String) throws(Refused) -> String {
        guard text.utf8.count <= maximumTextBytes else {
            throw Refused(message: "a text of \(text.utf8.count) bytes; at most \(maximumTextBytes) are taken")
        }
        return text
    }
}
