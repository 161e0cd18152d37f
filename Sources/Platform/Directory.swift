#if canImport(Glibc)
import Glibc
#endif

/// A directory's entries, their names decoded once here. The corresponding C functions are
/// `opendir`, `readdir` and `closedir`.
public enum Directory {
    /// One entry: its name and whether it is a directory itself.
    public struct Entry: Equatable, Sendable {
        public var name: String
        /// True for a directory; `readdir` says so on every file system this code reads.
        public var isDirectory: Bool

        public init(name: String, isDirectory: Bool) {
            self.name = name
            self.isDirectory = isDirectory
        }
    }

    /// The entries of `path` but `.` and `..`, in the order the file system gives, at most
    /// `limit`; nil if it cannot be opened.
    public static func entries(of path: String, limit: Int = .max) -> [Entry]? {
        guard let stream = system_opendir(path) else { return nil }
        defer { system_closedir(stream) }
        var entries: [Entry] = []
        while entries.count < limit, let entry = system_readdir(stream) {
            let entryName = name(of: entry)
            guard entryName != ".", entryName != ".." else { continue }
            entries.append(Entry(name: entryName, isDirectory: entry.pointee.d_type == UInt8(DT_DIR)))
        }
        return entries
    }
}
