import DesktopApplications
#if canImport(Glibc)
import Glibc
#endif

/// The cgroup v2 hierarchy as `INET_DIAG_CGROUP_ID` names it: a cgroup's id is its directory's
/// inode on the cgroup2 mount, so an id becomes a path by walking the tree once and again only
/// when an id is not in it (a scope made since).
final class CgroupTree {
    /// Where cgroup2 is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` beside v1), and
    /// the cgroup that mount shows as its root; nil without the unified hierarchy.
    let mount: (path: String, root: String)?
    private var paths: [UInt64: String] = [:]

    /// Directories walked at most: a desktop has hundreds; more is not worth a sample's time.
    static let directoryLimit = 20_000

    init(mountInfo: String? = Processes.readFile("/proc/self/mountinfo", limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) }) {
        mount = mountInfo.flatMap(Self.cgroup2Mount(in:))
    }

    /// The cgroup2 mount point and its root in a `/proc/self/mountinfo` text: the fields after
    /// the `-` separator give the type; the 4th and 5th fields are the root and the mount
    /// point, with spaces and the like escaped as `\040`.
    static func cgroup2Mount(in text: String) -> (path: String, root: String)? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let separator = fields.firstIndex(of: "-"), separator >= 5, separator + 1 < fields.count,
                fields[separator + 1] == "cgroup2"
            else { continue }
            return (unescaped(fields[4]), unescaped(fields[3]))
        }
        return nil
    }

    /// The cgroup path (as `/proc/PID/cgroup` writes it) of the cgroup with id `id`, or nil.
    func path(of id: UInt64) -> String? {
        paths(of: [id])[id]
    }

    /// The cgroup paths of `ids` that exist, walking the tree again at most once.
    func paths(of ids: Set<UInt64>) -> [UInt64: String] {
        if ids.contains(where: { paths[$0] == nil }) { rescan() }
        var found: [UInt64: String] = [:]
        for id in ids { found[id] = paths[id] }
        return found
    }

    private func rescan() {
        guard let mount else { return }
        var found: [UInt64: String] = [:]
        var pending: [(directory: String, cgroup: String)] = [(mount.path, mount.root)]
        while let (directory, cgroup) = pending.popLast(), found.count < Self.directoryLimit {
            var status = stat()
            guard stat(directory, &status) == 0 else { continue }
            found[UInt64(status.st_ino)] = cgroup
            guard let stream = opendir(directory) else { continue }
            while let entry = readdir(stream) {
                guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                guard name != ".", name != ".." else { continue }
                pending.append((directory + "/" + name, (cgroup == "/" ? "" : cgroup) + "/" + name))
            }
            closedir(stream)
        }
        paths = found
    }

    /// `\040` and the other octal escapes of mountinfo undone.
    static func unescaped(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "\\"), utf8.count >= 4,
                let value = UInt8(String(decoding: utf8.dropFirst().prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(4)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
