import DBus
#if canImport(Glibc)
import Glibc
#endif

/// The names people know applications by, from their desktop entries
/// (`applications/ID.desktop` under `$XDG_DATA_HOME` and `$XDG_DATA_DIRS`, as the desktop entry
/// specification finds them): `org.gnome.Software` reads "Software" where GNOME Software is
/// installed.
///
/// Application ids come from other processes (the `application` hint), so only names that can
/// be desktop ids are looked up, and what is learned is kept in a bounded cache: a panel that
/// redraws on every change reads each file once.
public enum DesktopEntries {
    private static let cache = Locked<[String: String?]>([:])
    private static let cacheLimit = 256

    /// The `Name` of the desktop entry of `id` (`org.gnome.Software`, without `.desktop`),
    /// or nil where none is installed.
    public static func name(of id: String) -> String? {
        guard isDesktopID(id) else { return nil }
        if let known = cache.withLock({ $0[id] }) { return known }
        let found = directories().lazy.compactMap { readName("\($0)/applications/\(id).desktop") }.first
        cache.withLock { names in
            if names.count >= cacheLimit { names.removeAll(keepingCapacity: true) }
            names[id] = .some(found)
        }
        return found
    }

    /// The `Icon` of the desktop entry of `id` (a themed icon name or an absolute path), or nil
    /// where none is installed or it names none. Kept in a bounded cache like `name(of:)`.
    public static func icon(of id: String) -> String? {
        guard isDesktopID(id) else { return nil }
        if let known = iconCache.withLock({ $0[id] }) { return known }
        let found = directories().lazy.compactMap { readValue("Icon", from: "\($0)/applications/\(id).desktop") }.first
        iconCache.withLock { icons in
            if icons.count >= cacheLimit { icons.removeAll(keepingCapacity: true) }
            icons[id] = .some(found)
        }
        return found
    }

    private static let iconCache = Locked<[String: String?]>([:])

    /// Forgets what was read, for a test that installs an entry.
    public static func forget() {
        cache.withLock { $0.removeAll() }
        iconCache.withLock { $0.removeAll() }
    }

    /// Whether `id` can name a desktop entry: reverse-DNS-ish file names only (letters, digits,
    /// `.`, `-`, `_`), no path, no hidden file, at most 255 bytes.
    public static func isDesktopID(_ id: String) -> Bool {
        let bytes = id.utf8
        return !bytes.isEmpty && bytes.count <= 255 && bytes.first != UInt8(ascii: ".")
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    private static func directories() -> [String] {
        let home = environment("XDG_DATA_HOME") ?? environment("HOME").map { $0 + "/.local/share" }
        let system = (environment("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        return (home.map { [$0] } ?? []) + system
    }

    /// `Name=` of the `[Desktop Entry]` group; nil if the file is missing or has none.
    private static func readName(_ path: String) -> String? {
        readValue("Name", from: path)
    }

    /// `KEY=` of the `[Desktop Entry]` group, at most 128 characters; nil if the file is
    /// missing or has none.
    private static func readValue(_ key: String, from path: String) -> String? {
        let prefix = key + "="
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var inEntry = false
        var lines = 0
        // A desktop entry is a few dozen lines; a huge file is not one.
        while lines < 2_000, getline(&line, &capacity, file) >= 0, let line {
            lines += 1
            let text = String(cString: line).trimmingSuffix()
            if text.hasPrefix("[") {
                inEntry = text == "[Desktop Entry]"
            } else if inEntry, text.hasPrefix(prefix) {
                let value = String(text.dropFirst(prefix.count))
                return value.isEmpty ? nil : String(value.prefix(128))
            }
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingSuffix() -> String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == "\r" || last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
