import Platform

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

    init(mounts: [ProcFS.Mount] = ProcFS().mounts()) {
        mount = Self.cgroup2Mount(in: mounts)
    }

    /// The cgroup2 mount point and the cgroup it shows as its root, among `mounts`.
    static func cgroup2Mount(in mounts: [ProcFS.Mount]) -> (path: String, root: String)? {
        mounts.first { $0.type == "cgroup2" }.map { ($0.mountPoint, $0.root) }
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

    /// The processes in cgroup `path` itself (its `cgroup.procs`), at most `limit`; none when
    /// it is gone or unreadable.
    func processes(in path: String, limit: Int) -> [UInt32] {
        guard let mount, path.hasPrefix(mount.root), !path.contains("/../") else { return [] }
        let relative = path.dropFirst(mount.root == "/" ? 0 : mount.root.count)
        guard let bytes = FileSystem.contents(of: mount.path + (relative.hasPrefix("/") ? "" : "/") + relative + "/cgroup.procs", limit: 1 << 20)
        else { return [] }
        return bytes.split(separator: UInt8(ascii: "\n")).prefix(limit).compactMap { UInt32(String(decoding: $0, as: UTF8.self)) }
    }

    private func rescan() {
        guard let mount else { return }
        var found: [UInt64: String] = [:]
        var pending: [(directory: String, cgroup: String)] = [(mount.path, mount.root)]
        while let (directory, cgroup) = pending.popLast(), found.count < Self.directoryLimit {
            guard let inode = FileSystem.status(of: directory)?.inode else { continue }
            found[inode] = cgroup
            for entry in Directory.entries(of: directory) ?? [] where entry.isDirectory {
                pending.append((directory + "/" + entry.name, (cgroup == "/" ? "" : cgroup) + "/" + entry.name))
            }
        }
        paths = found
    }
}
