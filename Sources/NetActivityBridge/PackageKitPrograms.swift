#if canImport(Glibc)
import Glibc
#endif

/// The application a PackageKit transaction is for: the program behind the transaction's
/// `Sender`, as a desktop id where a desktop entry runs it (`gnome-software` →
/// `org.gnome.Software`), else the program's own name (`pkcon`).
///
/// The program is read from `/proc/PID/cmdline` (its `argv[0]`, without the directory), else
/// `/proc/PID/comm`: both are readable for every user's processes, where `/proc/PID/exe` is not.
/// A desktop entry names it when the first word of its `Exec` (after `env` and its `VAR=value`
/// words; for a Flatpak's entry, its `--command=`), or its `TryExec`, is that program. Entries are found as the desktop entry
/// specification finds them: `applications/` under `$XDG_DATA_HOME` (`~/.local/share`), then
/// under each of `$XDG_DATA_DIRS` (`/usr/local/share:/usr/share`), in that order; an entry
/// shown in menus wins over a hidden one (`NoDisplay`, `Hidden`), such as GNOME Software's
/// file handler.
enum PackageKitPrograms {
    /// The program name of process `pid`, or nil if it is gone or its name is no plain name.
    static func programName(ofProcess pid: UInt32) -> String? {
        guard pid > 0 else { return nil }
        if let arguments = readFile("/proc/\(pid)/cmdline", limit: 4096) {
            let first = arguments.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
            let base = first.split(separator: UInt8(ascii: "/")).last.map { String(decoding: $0, as: UTF8.self) }
            if let base, isPlainName(base) { return base }
        }
        if let comm = readFile("/proc/\(pid)/comm", limit: 64) {
            let name = String(decoding: comm.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            if isPlainName(name) { return name }
        }
        return nil
    }

    /// The application id to claim for `program`: its desktop id where an entry runs it, else
    /// the program's name.
    static func application(forProgram program: String) -> String {
        desktopID(forProgram: program) ?? program
    }

    /// The id of the desktop entry that runs `program`, or nil where none does: looked for in
    /// `directories` (by default the desktop entry specification's), earlier ones first.
    static func desktopID(
        forProgram program: String, in directories: [String] = PackageKitPrograms.applicationDirectories()
    ) -> String? {
        var hidden: String?
        for directory in directories {
            for file in desktopFiles(in: directory) {
                guard let entry = readEntry(directory + "/" + file), entry.runs(program) else { continue }
                let id = String(file.dropLast(".desktop".count))
                if !entry.hidden { return id }
                if hidden == nil { hidden = id }
            }
        }
        return hidden
    }

    // MARK: - Names

    /// Letters, digits and `.-_+`, at most 255 bytes: what a program or desktop id is made of.
    /// Anything else (a process that renamed itself to control characters, say) names nothing.
    static func isPlainName(_ name: String) -> Bool {
        let bytes = name.utf8
        return !bytes.isEmpty && bytes.count <= 255 && bytes.first != UInt8(ascii: ".")
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "+")
            }
    }

    // MARK: - Desktop entries

    private struct Entry {
        var exec: String?
        var tryExec: String?
        var hidden = false

        func runs(_ program: String) -> Bool {
            if let tryExec, PackageKitPrograms.baseName(tryExec) == program { return true }
            guard let exec else { return false }
            var words = exec.split(whereSeparator: { $0 == " " || $0 == "\t" }).map {
                $0.trimmingCharacters(in: "\"'")
            }[...]
            if words.first.map(PackageKitPrograms.baseName) == "env" {
                words = words.dropFirst().drop { $0.contains("=") || $0.hasPrefix("-") }
            }
            // A Flatpak's exported entry runs `flatpak run --command=PROGRAM … APP-ID`.
            if words.first.map(PackageKitPrograms.baseName) == "flatpak",
                let command = words.first(where: { $0.hasPrefix("--command=") })
            {
                return PackageKitPrograms.baseName(String(command.dropFirst("--command=".count))) == program
            }
            return words.first.map(PackageKitPrograms.baseName) == program
        }
    }

    private static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    /// `applications/` under `$XDG_DATA_HOME` (`~/.local/share`), then each of `$XDG_DATA_DIRS`.
    static func applicationDirectories() -> [String] {
        let home = environment("XDG_DATA_HOME") ?? environment("HOME").map { $0 + "/.local/share" }
        let system = (environment("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        return ((home.map { [$0] } ?? []) + system).map { $0 + "/applications" }
    }

    /// The `*.desktop` file names directly in `directory`, in a stable order; a directory of
    /// more than a few thousand is cut there.
    private static func desktopFiles(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while names.count < 10_000, let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasSuffix(".desktop"), isPlainName(String(name.dropLast(".desktop".count))) { names.append(name) }
        }
        return names.sorted()
    }

    /// The `[Desktop Entry]` group's `Exec`, `TryExec`, `NoDisplay` and `Hidden`.
    private static func readEntry(_ path: String) -> Entry? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var entry = Entry()
        var inEntry = false
        var lines = 0
        // A desktop entry is a few dozen lines; a huge file is not one.
        while lines < 2_000, getline(&line, &capacity, file) >= 0, let line {
            lines += 1
            var text = String(cString: line)
            while let last = text.last, last.isNewline || last == " " || last == "\t" { text.removeLast() }
            if text.hasPrefix("[") {
                inEntry = text == "[Desktop Entry]"
            } else if inEntry, let equals = text.firstIndex(of: "=") {
                let key = text[..<equals].trimmingCharacters(in: " ")
                let value = String(text[text.index(after: equals)...].trimmingCharacters(in: " ").prefix(1024))
                switch key {
                case "Exec": entry.exec = value
                case "TryExec": entry.tryExec = value
                case "NoDisplay", "Hidden": if value == "true" { entry.hidden = true }
                default: break
                }
            }
        }
        return entry.exec == nil && entry.tryExec == nil ? nil : entry
    }

    /// At most `limit` bytes of a file; nil if it cannot be read.
    private static func readFile(_ path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit)
        var filled = 0
        while filled < limit {
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + filled, limit - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return filled > 0 ? Array(bytes[..<filled]) : nil
    }
}

extension StringProtocol {
    /// Without leading and trailing `characters`.
    fileprivate func trimmingCharacters(in characters: String) -> String {
        var text = Substring(self)
        while let first = text.first, characters.contains(first) { text.removeFirst() }
        while let last = text.last, characters.contains(last) { text.removeLast() }
        return String(text)
    }
}
