#if canImport(Glibc)
import Glibc
#endif

/// Files and links by path: the questions the rest of the code asks the file system.
public enum FileSystem {
    /// At most `limit` bytes of the file at `path`; nil if it cannot be read or is empty.
    public static func contents(of path: String, limit: Int) -> [UInt8]? {
        guard let descriptor = try? FileDescriptor.open(readOnly: path) else { return nil }
        defer { descriptor.close() }
        guard let bytes = try? descriptor.readAll(limit: limit), !bytes.isEmpty else { return nil }
        return bytes
    }

    /// The target a symbolic link names, up to `limit` bytes; nil if `path` is no link or is
    /// gone. The corresponding C function is `readlink`.
    public static func destination(ofLink path: String, limit: Int = 4_096) -> String? {
        var buffer = [CChar](repeating: 0, count: limit)
        let count = system_readlink(path, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What `stat` says of `path` that the code asks: its inode and its owner; nil if it is gone.
    public static func status(of path: String) -> (inode: UInt64, owner: UInt32)? {
        var status = stat()
        guard system_stat(path, &status) == 0 else { return nil }
        return (UInt64(status.st_ino), status.st_uid)
    }

    /// Whether anything exists at `path`.
    public static func exists(_ path: String) -> Bool {
        system_access(path, F_OK) == 0
    }
}
