import DBus
import NetActivity
import Platform

/// A unit's `Description`, as systemd answers on the system bus
/// (`org.freedesktop.systemd1.Manager.GetUnit`, then the unit's `Description` property), else
/// as the unit file on the unit search path says it. Each unit is asked once; its answer (or
/// none) is remembered.
///
/// Not thread-safe: the traffic source asks on the bridge's loop. The bus is asked on a
/// connection of its own, waiting at most `callTimeout`: once per unit, rarely.
final class UnitDescriptions {
    private let bus: BusAddress?
    private let searchPath: [String]
    private var connection: Connection?
    /// Whether systemd is known not to answer (no connection, or no such name): then only files.
    private var systemdSilent = false
    private var known: [String: String?] = [:]

    static let callTimeout: Duration = .milliseconds(500)

    /// Descriptions from systemd on `bus` (none when nil) and from the unit files in
    /// `searchPath` (`UnitDescriptions.searchPath(environment:)`).
    init(bus: BusAddress?, searchPath: [String]) {
        self.bus = bus
        self.searchPath = searchPath
    }

    /// The description of `unit`, or nil when neither systemd nor a unit file tells one.
    func description(of unit: String) -> String? {
        if let answer = known[unit] { return answer }
        let answer = (fromSystemd(unit) ?? fromUnitFile(unit)).map(PrintableText.label)
        if known.count >= 1_024 { known.removeAll() }
        known[unit] = .some(answer)
        return answer
    }

    // MARK: - systemd

    private func fromSystemd(_ unit: String) -> String? {
        guard let bus, !systemdSilent else { return nil }
        do {
            if connection == nil { connection = try Connection(bus) }
            guard let connection else { return nil }
            let path = try connection.callWaiting(
                SystemdInterface.getUnit, unit, destination: SystemdInterface.name, path: SystemdInterface.managerPath,
                timeout: Self.callTimeout)
            let value = try connection.callWaiting(
                PropertiesInterface.get, SystemdInterface.unitInterface.rawValue, SystemdInterface.description.name.rawValue,
                destination: SystemdInterface.name, path: path, timeout: Self.callTimeout)
            guard let text = SystemdInterface.description.decode(value.contents), !text.isEmpty else { return nil }
            return text
        } catch {
            // No such unit is an answer about this unit only; anything else (no bus, no
            // systemd, a timeout) says systemd will not answer the next one either.
            if error.name != SystemdInterface.noSuchUnit {
                systemdSilent = true
                connection = nil
            }
            return nil
        }
    }

    // MARK: - Unit files

    /// The system unit search path: `$SYSTEMD_UNIT_PATH` as systemd reads it (a trailing `:`
    /// appends the defaults), else the defaults.
    static func searchPath(environment: String?) -> [String] {
        let defaults = [
            "/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
            "/lib/systemd/system",
        ]
        guard let environment, !environment.isEmpty else { return defaults }
        let named = environment.split(separator: ":").map(String.init)
        return environment.hasSuffix(":") ? named + defaults : named
    }

    private func fromUnitFile(_ unit: String) -> String? {
        let name = UnitName(unit)
        guard !unit.contains("/"), !unit.hasPrefix(".") else { return nil }
        for candidate in Set([name.name, name.template]).sorted(by: { $0.count > $1.count }) {
            for directory in searchPath {
                guard let bytes = FileSystem.contents(of: directory + "/" + candidate, limit: 256 * 1024),
                    let text = Self.description(inUnitFile: String(decoding: bytes, as: UTF8.self))
                else { continue }
                return Self.specifiersExpanded(text, instance: name.instance, unit: unit)
            }
        }
        return nil
    }

    /// The `Description=` of the `[Unit]` section of a unit file's text (the last one, as
    /// systemd takes it), or nil.
    static func description(inUnitFile text: String) -> String? {
        var section = ""
        var found: String?
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                section = String(line)
                continue
            }
            guard section == "[Unit]", let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingSpaces
            if key == "Description" {
                let value = line[line.index(after: equals)...].trimmingSpaces
                found = value.isEmpty ? nil : String(value)
            }
        }
        return found
    }

    /// `%i`, `%I`, `%n`, `%N`, `%p` and `%%` expanded as systemd would; any other specifier left.
    static func specifiersExpanded(_ text: String, instance: String?, unit: String) -> String {
        guard text.contains("%") else { return text }
        let name = UnitName(unit)
        let prefix = String(name.template.split(separator: "@").first ?? Substring(unit)).split(separator: ".").first.map(String.init) ?? unit
        let withoutSuffix = unit.split(separator: ".").dropLast().joined(separator: ".")
        var result = ""
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "%", let specifier = iterator.next() else {
                result.append(character)
                continue
            }
            switch specifier {
            case "i", "I": result += instance ?? ""
            case "n": result += unit
            case "N": result += withoutSuffix
            case "p": result += prefix
            case "%": result += "%"
            default: result += "%" + String(specifier)
            }
        }
        return result
    }
}
