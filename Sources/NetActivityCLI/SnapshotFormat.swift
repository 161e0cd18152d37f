import DBus
import NetActivity
import NetActivityContract
import Platform
#if canImport(Glibc)
import Glibc
#endif

/// How a state is shown: to people, to scripts, to panels.
enum SnapshotFormat {
    // MARK: - JSON for scripts

    static func json(_ state: IndicatorSnapshot) -> String {
        JSONText.object([
            ("active", .bool(state.active)),
            ("visible", .bool(state.visible)),
            ("count", .integer(UInt64(state.count))),
            ("progress", state.progress.map { .number($0) } ?? .null),
            ("rate", .number(state.rate)),
            ("remaining_seconds", state.remainingSeconds.map { .integer(UInt64(min($0.rounded(), 1e15))) } ?? .null),
            ("activities", .array(state.activities.map(json))),
            ("service", .bool(state.serviceAvailable)),
        ]).text
    }

    /// An activity: every property its object declares, under the declaration's name in
    /// snake case (`ClaimedApplication` → `claimed_application`), in the declaration's order,
    /// then what a client works out (`remaining_seconds`, `bus`). A property this client keeps
    /// no field for (one the service declares since) comes out of `otherProperties` as it came,
    /// so a new property shows here with no edit.
    private static func json(_ activity: ActivityInfo) -> JSONText {
        var members: [(String, JSONText)] = []
        members.reserveCapacity(activityMembers.count + 2)
        for member in activityMembers {
            if let value = member.value(activity) { members.append((member.name, value)) }
        }
        // Properties of a newer service than this client's declaration, by name.
        if !activity.otherProperties.isEmpty {
            for (name, value) in activity.otherProperties.sorted(by: { $0.key < $1.key }) where !declaredNames.contains(name) {
                members.append((jsonName(name), json(value)))
            }
        }
        members.append(("remaining_seconds", activity.remainingSeconds.map { .integer(UInt64(min($0.rounded(), 1e15))) } ?? .null))
        members.append(("bus", .string(activity.bus == .system ? "system" : "session")))
        return .object(members)
    }

    /// Each declared activity property's JSON name and how its value is read, in the
    /// declaration's order: what the activity holds as the bus carries it, the attribution and
    /// the fraction as a client knows them (null while unknown). Made once, since
    /// `watch --format json` lists every activity on every line.
    private static let activityMembers: [(name: String, value: @Sendable (ActivityInfo) -> JSONText?)] = {
        typealias Object = ActivityObjectInterface
        let known: [MemberName: @Sendable (ActivityInfo) -> JSONText] = [
            Object.processID.name: { $0.processID.map { .integer(UInt64($0)) } ?? .null },
            Object.userID.name: { $0.userID.map { .integer(UInt64($0)) } ?? .null },
            Object.application.name: { .string($0.application) },
            Object.fraction.name: { $0.fraction.map { .number($0) } ?? .null },
        ]
        return Object.properties.map { property in
            let name = property.declaration.name
            let value: @Sendable (ActivityInfo) -> JSONText? =
                known[name] ?? { info in
                    (property.value(of: info.activity) ?? info.otherProperties[name.rawValue]).map(json)
                }
            return (jsonName(name.rawValue), value)
        }
    }()

    private static let declaredNames = Set(ActivityObjectInterface.descriptor.properties.map(\.name.rawValue))

    /// A D-Bus member name in snake case, as JSON keys are: `ProcessID` → `process_id`.
    static func jsonName(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                    result += "_"
                }
            }
            result += character.lowercased()
        }
        return result
    }

    /// Any D-Bus value as JSON: numbers, strings and booleans as themselves, a dictionary with
    /// string keys as an object, other arrays and structs as arrays, a variant as what it holds.
    static func json(_ value: Value) -> JSONText {
        switch value {
        case .byte(let number): .integer(UInt64(number))
        case .boolean(let flag): .bool(flag)
        case .int16(let number): .number(Double(number))
        case .uint16(let number): .integer(UInt64(number))
        case .int32(let number): .number(Double(number))
        case .uint32(let number): .integer(UInt64(number))
        case .int64(let number): .number(Double(number))
        case .uint64(let number): .integer(number)
        case .double(let number): .number(number)
        case .string(let text): .string(text)
        case .objectPath(let path): .string(path.rawValue)
        case .signature(let signature): .string(signature.rawValue)
        case .unixFileDescriptor: .null
        case .variant(let inner): json(inner)
        case .structure(let fields): .array(fields.map(json))
        case .dictEntry(let key, let value): .array([json(key), json(value)])
        case .array(_, let elements):
            if let entries = value.stringKeyedEntries {
                .object(entries.sorted { $0.key < $1.key }.map { ($0.key, json($0.value)) })
            } else {
                .array(elements.map(json))
            }
        }
    }

    // MARK: - One line for people

    /// "active: 2 45% 2.3 MB/s 1:20 left"; the rate and the time left only where known.
    static func plain(_ state: IndicatorSnapshot) -> String {
        guard state.serviceAvailable else { return "idle (service unavailable)" }
        guard state.active else { return "idle" }
        var line = "active: \(state.count)"
        if let progress = state.progress { line += " " + percent(progress) }
        if state.rate > 0 { line += " " + rate(state.rate) }
        if let remaining = state.remainingSeconds { line += " " + clock(remaining) + " left" }
        if !state.visible { line += " (not yet shown)" }
        return line
    }

    // MARK: - waybar's custom module

    /// waybar's `return-type: json`: `text` (empty hides the module), `tooltip`, `class`,
    /// `percentage` where progress is known (the whole percent the text shows; waybar reads it
    /// as an unsigned integer) and `alt`, the busiest transfer's kind, for `format-icons`.
    /// Follows `Visible`, the anti-flicker state.
    static func waybar(_ state: IndicatorSnapshot) -> String {
        let shown = state.visible && state.serviceAvailable
        var members: [(String, JSONText)] = [
            ("text", .string(shown ? text(state) : "")),
            ("tooltip", .string(tooltip(state))),
            ("class", .string(shown ? "active" : "idle")),
        ]
        if let progress = state.progress {
            members.append(("percentage", .integer(UInt64(wholePercent(progress)))))
        }
        if let busiest = state.busiestActivity { members.append(("alt", .string(busiest.kind))) }
        return JSONText.object(members).text
    }

    /// "⇅ 2 50% 2.3 MB/s"; no number while nothing is counted yet (or the indicator is still
    /// shown through the completion delay), so a panel never reads "⇅ 0".
    static func text(_ state: IndicatorSnapshot) -> String {
        let count = max(Int(state.count), state.activities.count)
        return "⇅" + (count > 0 ? " \(count)" : "") + (state.progress.map { " " + percent($0) } ?? "")
            + (state.rate > 0 ? " " + rate(state.rate) : "")
    }

    static func tooltip(_ state: IndicatorSnapshot) -> String {
        guard state.serviceAvailable else { return "Network activity service unavailable" }
        guard state.active else { return "No network activity" }
        let count = max(Int(state.count), state.activities.count)
        var lines = [count > 0 ? "Network activity: \(count)" : "Network activity"]
        // waybar renders the tooltip as Pango markup: a bare & would drop it, <b> would be bold.
        for activity in state.activities.prefix(IndicatorSnapshot.tooltipActivityLimit) {
            lines.append(TransferText.markupLine(activity))
        }
        if let more = state.moreActivitiesLine { lines.append(more) }
        let shared = count - state.activities.count
        if shared > 0 { lines.append("\(shared) other connection" + (shared == 1 ? "" : "s")) }
        return lines.joined(separator: "\n")
    }

    // MARK: - `status` for people

    static func status(_ state: IndicatorSnapshot, now: UInt64 = wallMicroseconds()) -> String {
        var lines = [
            "Active:     " + (state.active ? "yes" : "no"),
            "Visible:    " + (state.visible ? "yes" : "no"),
            "Count:      \(state.count)",
            "Progress:   " + (state.progress.map(percent) ?? "unknown"),
        ]
        if state.rate > 0 {
            lines.append("Rate:       " + rate(state.rate) + (state.remainingSeconds.map { ", " + remainingWords($0) } ?? ""))
        }
        if state.activities.isEmpty {
            lines.append("Activities: none")
        } else {
            lines.append("Activities:")
            for activity in state.activities {
                var line = "  #\(activity.id) \(activity.title)"
                if activity.total > 0 {
                    line += "  \(bytes(activity.completed)) of \(bytes(activity.total))"
                        + (activity.fraction.map { " (\(percent($0)))" } ?? "")
                } else if let fraction = activity.fraction {
                    line += "  \(percent(fraction))"
                } else if activity.completed > 0 {
                    line += "  \(bytes(activity.completed))"
                }
                if activity.rate > 0 {
                    line += "  " + rate(activity.rate) + (activity.remainingSeconds.map { ", " + remainingWords($0) } ?? "")
                }
                line += "  by \(activity.owner)" + (activity.processID.map { " (pid \($0))" } ?? "")
                if now >= activity.started { line += ", for \(duration((now - activity.started) / 1_000_000))" }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    // MARK: - Pieces

    static func percent(_ fraction: Double) -> String { TransferText.percent(fraction) }
    static func wholePercent(_ fraction: Double) -> Int { TransferText.wholePercent(fraction) }
    static func bytes(_ count: UInt64) -> String { TransferText.bytes(count) }
    static func rate(_ bytesPerSecond: Double) -> String { TransferText.rate(bytesPerSecond) }
    static func clock(_ seconds: Double) -> String { TransferText.clock(seconds) }
    static func remainingWords(_ seconds: Double) -> String { TransferText.remainingWords(seconds) }

    static func duration(_ seconds: UInt64) -> String {
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m \(seconds % 60)s" }
        return "\(seconds / 3600)h \(seconds % 3600 / 60)m"
    }

    static func wallMicroseconds() -> UInt64 {
        Clocks.wallMicroseconds()
    }
}
