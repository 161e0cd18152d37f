/// The kernel's process file system, under a root that tests can give (a directory tree made
/// like `/proc`). Every read may race a process's exit: each answer is optional, and a process
/// gone between two reads is simply unknown.
public struct ProcFS: Sendable {
    /// Where it is mounted: `/proc`, or a test's tree.
    public let root: String

    public init(root: String = "/proc") {
        self.root = root
    }

    /// The path of `file` in the directory of `process`, or of this process (`self`) for nil.
    public func path(_ file: String, of process: UInt32?) -> String {
        root + "/" + (process.map(String.init) ?? "self") + (file.isEmpty ? "" : "/" + file)
    }

    /// At most `limit` bytes of `file` of `process` (this one for nil); nil if it cannot be
    /// read or is empty.
    public func contents(_ file: String, of process: UInt32?, limit: Int) -> [UInt8]? {
        if process == 0 { return nil }
        return FileSystem.contents(of: path(file, of: process), limit: limit)
    }

    /// The ids of the processes there are, at most `limit`, in the order the kernel lists them.
    public func processIDs(limit: Int = .max) -> [UInt32] {
        var ids: [UInt32] = []
        for entry in Directory.entries(of: root) ?? [] where ids.count < limit {
            if let id = UInt32(entry.name), id > 0 { ids.append(id) }
        }
        return ids
    }

    /// The user that owns `process`: its directory's owner, as the kernel sets it.
    public func owner(of process: UInt32) -> UInt32? {
        FileSystem.status(of: path("", of: process))?.owner
    }

    /// The numbers of the descriptors `process` (this one for nil) has open, at most `limit`.
    public func descriptors(of process: UInt32?, limit: Int = .max) -> [Int32] {
        (Directory.entries(of: path("fd", of: process), limit: limit) ?? []).compactMap { Int32($0.name) }
    }

    /// What descriptor `descriptor` of `process` is open on: a path, `socket:[INODE]`,
    /// `pipe:[INODE]`; nil if it is closed or the process gone.
    public func target(ofDescriptor descriptor: Int32, of process: UInt32?) -> String? {
        FileSystem.destination(ofLink: path("fd/\(descriptor)", of: process), limit: 256)
    }

    /// The executable `process` (this one for nil) runs, as an absolute path; nil if it is gone
    /// or not this user's.
    public func executable(of process: UInt32?) -> String? {
        FileSystem.destination(ofLink: path("exe", of: process))
    }

    /// A number field of `/proc/PID/status` (`"PPid:"`, `"Uid:"`: the first number after it).
    public func statusField(_ key: String, of process: UInt32) -> UInt32? {
        contents("status", of: process, limit: 4096).flatMap { Self.statusField(key, in: $0) }
    }

    /// A number field in the bytes of a `/proc/PID/status` file: the first number after `key`
    /// on the first line that starts with it.
    public static func statusField(_ key: String, in bytes: [UInt8]) -> UInt32? {
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: key.utf8) {
            let value = line.dropFirst(key.utf8.count).drop { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: " ") }
            return UInt32(String(decoding: value.prefix { $0 >= 0x30 && $0 <= 0x39 }, as: UTF8.self))
        }
        return nil
    }

    /// The cgroup v2 path of `process` (`0::/user.slice/…/app-….scope` in `/proc/PID/cgroup`),
    /// or nil on a system without the unified hierarchy.
    public func cgroup(of process: UInt32) -> String? {
        contents("cgroup", of: process, limit: 8192).flatMap(Self.unifiedCgroup(in:))
    }

    /// The unified hierarchy's path in the bytes of a `/proc/PID/cgroup` file (its `0::` line).
    public static func unifiedCgroup(in bytes: [UInt8]) -> String? {
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: "0::".utf8) {
            return String(decoding: line.dropFirst(3), as: UTF8.self)
        }
        return nil
    }

    // MARK: - Mounts

    /// One line of `/proc/self/mountinfo`: what is mounted where.
    public struct Mount: Equatable, Sendable {
        /// The directory of the file system that is mounted (`/` for all of it).
        public var root: String
        /// Where it is mounted.
        public var mountPoint: String
        /// The file system's type (`cgroup2`, `proc`, …).
        public var type: String

        public init(root: String, mountPoint: String, type: String) {
            self.root = root
            self.mountPoint = mountPoint
            self.type = type
        }
    }

    /// This process's mounts, from `/proc/self/mountinfo`.
    public func mounts() -> [Mount] {
        contents("mountinfo", of: nil, limit: 1 << 20).map { Self.mounts(in: String(decoding: $0, as: UTF8.self)) } ?? []
    }

    /// The mounts in a `mountinfo` text: the 4th and 5th fields are the root and the mount
    /// point, with spaces and the like escaped as `\040`; the field after the `-` separator is
    /// the type.
    public static func mounts(in text: String) -> [Mount] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard let separator = fields.firstIndex(of: "-"), separator >= 5, separator + 1 < fields.count else { return nil }
            return Mount(root: unescaped(fields[3]), mountPoint: unescaped(fields[4]), type: String(fields[separator + 1]))
        }
    }

    /// `\040` and the other octal escapes of mountinfo undone.
    static func unescaped(_ field: Substring) -> String {
        String(decoding: ByteEscapes.undone(field, .octal, strict: false) ?? [], as: UTF8.self)
    }
}
