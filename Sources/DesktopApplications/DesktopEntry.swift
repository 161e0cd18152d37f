import Platform

/// What NetActivity reads of one desktop entry (`applications/ID.desktop`): the keys of its
/// `[Desktop Entry]` group that name and find an application.
///
/// Read by the one reader below, for every use: the names panels show, the icons, and which
/// entry runs a program. Files come from any package or user, so values are cut to a sane
/// length and a file longer than a desktop entry ever is stops being read.
public struct DesktopEntry: Equatable, Sendable {
    public var name: String?
    public var icon: String?
    public var exec: String?
    public var tryExec: String?
    /// `NoDisplay=true` or `Hidden=true`: an entry menus do not show (a file handler, say).
    public var hidden = false

    public init(name: String? = nil, icon: String? = nil, exec: String? = nil, tryExec: String? = nil, hidden: Bool = false) {
        self.name = name
        self.icon = icon
        self.exec = exec
        self.tryExec = tryExec
        self.hidden = hidden
    }

    /// The `[Desktop Entry]` group of the file at `path`, or nil if it cannot be read or has no
    /// such group (`init?(parsing:)`).
    public init?(contentsOf path: String) {
        guard let bytes = FileSystem.contents(of: path, limit: Self.byteLimit) else { return nil }
        self.init(parsing: bytes)
    }

    /// The `[Desktop Entry]` group of a desktop entry's bytes, or nil if it has none. Localized
    /// keys (`Name[de]`) and other groups (`[Desktop Action …]`) are skipped; `Name` and `Icon`
    /// keep 128 bytes, `Exec` and `TryExec` 1,024.
    public init?(parsing bytes: [UInt8]) {
        var inEntry = false
        var sawEntry = false
        // A desktop entry is a few dozen lines; a huge file is not one.
        for line in bytes.split(separator: UInt8(ascii: "\n"), maxSplits: Self.lineLimit, omittingEmptySubsequences: true)
            .prefix(Self.lineLimit)
        {
            let text = String(decoding: line, as: UTF8.self).trimmed(" \t\r\n")
            if text.hasPrefix("[") {
                inEntry = text == "[Desktop Entry]"
                sawEntry = sawEntry || inEntry
                continue
            }
            guard inEntry, let equals = text.firstIndex(of: "=") else { continue }
            let key = text[..<equals].trimmed(" \t")
            let value = text[text.index(after: equals)...].trimmed(" \t")
            switch key {
            case "Name": if name == nil { name = value.nonEmptyPrefix(128) }
            case "Icon": if icon == nil { icon = value.nonEmptyPrefix(128) }
            case "Exec": if exec == nil { exec = value.nonEmptyPrefix(1024) }
            case "TryExec": if tryExec == nil { tryExec = value.nonEmptyPrefix(1024) }
            case "NoDisplay", "Hidden": if value == "true" { hidden = true }
            default: break
            }
        }
        guard sawEntry else { return nil }
    }

    static let lineLimit = 2_000
    /// What is read of a file at most: far more than any desktop entry holds.
    static let byteLimit = 1 << 20

    /// Whether this entry starts `program` (a base name): its `TryExec`, or the first word of
    /// its `Exec` after `env` and its `VAR=value` words; for a Flatpak's exported entry
    /// (`flatpak run --command=PROGRAM … APP-ID`), its `--command`.
    public func runs(_ program: String) -> Bool {
        if let tryExec, tryExec.baseName == program { return true }
        guard let exec else { return false }
        var words = exec.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.trimmed("\"'") }[...]
        if words.first?.baseName == "env" {
            words = words.dropFirst().drop { $0.contains("=") || $0.hasPrefix("-") }
        }
        if words.first?.baseName == "flatpak", let command = words.first(where: { $0.hasPrefix("--command=") }) {
            return String(command.dropFirst("--command=".count)).baseName == program
        }
        return words.first?.baseName == program
    }
}

extension StringProtocol {
    /// Without leading and trailing `characters`.
    /// By scalars, not characters: "\r\n" is one `Character`, so a character-wise trim of
    /// " \t\r\n" would leave a lone "\n".
    func trimmed(_ characters: String) -> String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, characters.unicodeScalars.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, characters.unicodeScalars.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}

extension String {
    /// The last path component.
    var baseName: String {
        split(separator: "/").last.map(String.init) ?? self
    }

    fileprivate func nonEmptyPrefix(_ bytes: Int) -> String? {
        guard !isEmpty else { return nil }
        guard utf8.count > bytes else { return self }
        // Cut on a character boundary at or below `bytes`.
        var end = utf8.index(startIndex, offsetBy: bytes)
        while !isCharacterBoundary(end) { end = utf8.index(before: end) }
        return String(self[..<end])
    }

    private func isCharacterBoundary(_ index: Index) -> Bool {
        index == startIndex || index == endIndex || (utf8[index] & 0xC0) != 0x80
    }
}
