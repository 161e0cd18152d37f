import Locking
import Platform

#if canImport(Glibc)
import Glibc
#endif

/// The desktop entries installed for this user, found as the desktop entry specification finds
/// them: `applications/` under `$XDG_DATA_HOME` (`~/.local/share`), then under each of
/// `$XDG_DATA_DIRS` (`/usr/local/share:/usr/share`), earlier directories first. A test gives
/// directories of its own.
///
/// Ids come from other processes (an `application` hint, a unit name, a program's name), so only
/// names that can be desktop ids are looked up, and what is learned is kept in bounded caches:
/// a panel that redraws on every change reads each file once, and a browser that opens a socket
/// a second does not read every entry each time to find which one runs it. A program makes one
/// and keeps it; `installed` is the one for code that is given none.
public final class DesktopEntries: Sendable {
    /// Where entries are looked for, earlier first.
    public let directories: [String]
    private let entries = Locked<[String: DesktopEntry?]>([:])
    private let programs = Locked<[String: String?]>([:])
    private static let cacheLimit = 256

    /// The user's entries, in the directories the environment names now.
    public static let installed = DesktopEntries()

    public init(directories: [String] = DesktopEntries.applicationDirectories()) {
        self.directories = directories
    }

    /// The entry of `id` (`org.gnome.Software`, without `.desktop`), or nil where none is installed.
    public func entry(of id: String) -> DesktopEntry? {
        guard Self.isDesktopID(id) else { return nil }
        return Self.remembered(id, in: entries) {
            directories.lazy.compactMap { DesktopEntry(contentsOf: "\($0)/\(id).desktop") }.first
        }
    }

    /// The `Name` of the entry of `id`: "Software" for `org.gnome.Software` where GNOME Software
    /// is installed; nil where no entry is, or it names none.
    public func name(of id: String) -> String? { entry(of: id)?.name }

    /// The `Icon` of the entry of `id` (a themed icon name or an absolute path), or nil.
    public func icon(of id: String) -> String? { entry(of: id)?.icon }

    /// The id of the entry that runs `program` (`gnome-software` → `org.gnome.Software`), or nil
    /// where none does: an entry shown in menus wins over a hidden one (GNOME Software's file
    /// handler), earlier directories over later ones.
    public func desktopID(forProgram program: String) -> String? {
        guard Self.isPlainName(program) else { return nil }
        return Self.remembered(program, in: programs) {
            var hidden: String?
            for directory in directories {
                for file in Self.desktopFiles(in: directory) {
                    guard let entry = DesktopEntry(contentsOf: directory + "/" + file), entry.runs(program) else { continue }
                    let id = String(file.dropLast(".desktop".count))
                    if !entry.hidden { return id }
                    if hidden == nil { hidden = id }
                }
            }
            return hidden
        }
    }

    /// The application id to claim for `program`: its desktop id where an entry runs it, else
    /// the program's own name (`pkcon`).
    public func application(forProgram program: String) -> String {
        desktopID(forProgram: program) ?? program
    }

    /// The value `cache` holds for `key`, else `find()`'s, kept; a full cache starts over.
    private static func remembered<Value: Sendable>(
        _ key: String, in cache: Locked<[String: Value?]>, find: () -> Value?
    ) -> Value? {
        if let known = cache.withLock({ $0[key] }) { return known }
        let found = find()
        cache.withLock { values in
            if values.count >= cacheLimit { values.removeAll(keepingCapacity: true) }
            values[key] = .some(found)
        }
        return found
    }

    // MARK: - Names

    /// Whether `id` can name a desktop entry: letters, digits, `.`, `-`, `_`; no path, no hidden
    /// file, at most 255 bytes.
    public static func isDesktopID(_ id: String) -> Bool {
        isName(id, extra: false)
    }

    /// Letters, digits and `.-_+`, at most 255 bytes: what a program or desktop id is made of.
    /// Anything else (a process that renamed itself to control characters, say) names nothing.
    public static func isPlainName(_ name: String) -> Bool {
        isName(name, extra: true)
    }

    private static func isName(_ name: String, extra plus: Bool) -> Bool {
        let bytes = name.utf8
        return !bytes.isEmpty && bytes.count <= 255 && bytes.first != UInt8(ascii: ".")
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                    || (plus && byte == UInt8(ascii: "+"))
            }
    }

    // MARK: - Directories

    /// `applications/` under `$XDG_DATA_HOME` (`~/.local/share`), then each of `$XDG_DATA_DIRS`,
    /// as `environment` gives them (the process's own by default); an empty variable counts as unset.
    public static func applicationDirectories(environment: (String) -> String? = DesktopEntries.environment) -> [String] {
        let home = environment("XDG_DATA_HOME") ?? environment("HOME").map { $0 + "/.local/share" }
        let system = (environment("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        return ((home.map { [$0] } ?? []) + system).map { $0 + "/applications" }
    }

    /// The `*.desktop` files directly in `directory` whose names are desktop ids, in a stable
    /// order; a directory of more than 10,000 is cut there.
    private static func desktopFiles(in directory: String) -> [String] {
        (Directory.entries(of: directory, limit: 10_000) ?? []).map(\.name)
            .filter { $0.hasSuffix(".desktop") && isDesktopID(String($0.dropLast(".desktop".count))) }.sorted()
    }

    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
