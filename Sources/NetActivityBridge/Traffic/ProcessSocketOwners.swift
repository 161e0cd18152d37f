import DesktopApplications
#if canImport(Glibc)
import Glibc
#endif

/// Who owns a socket, from the kernel's and `/proc`'s answers: the socket's cgroup names the
/// application when it is a systemd app unit; otherwise the process holding the socket's inode
/// (found in `/proc/PID/fd` of this user's processes only) gives the program, and its process
/// tree lets a reporter's `ProcessID` cover it. Asked only for sockets that just began to carry
/// traffic.
///
/// Every read may race a process's exit: a process gone between two reads is simply not the
/// owner, never a crash.
final class ProcessSocketOwners: SocketOwnerLookup {
    private let cgroups: CgroupTree
    private let uid: UInt32
    private let procRoot: String

    /// Processes scanned at most for one lookup, and descriptors per process.
    static let processLimit = 32_768
    static let descriptorLimit = 65_536

    init(uid: UInt32, cgroups: CgroupTree = CgroupTree(), procRoot: String = "/proc") {
        self.uid = uid
        self.cgroups = cgroups
        self.procRoot = procRoot
    }

    func owners(of sockets: [SocketRecord]) -> [UInt64: SocketOwner] {
        // The root cgroup (id 1) names no application.
        let paths = cgroups.paths(of: Set(sockets.compactMap { $0.cgroupID.flatMap { $0 > 1 ? $0 : nil } }))
        // Walking /proc/*/fd reads every descriptor of every process of the user: only for the
        // sockets whose cgroup is no app unit (a terminal's scope, no systemd, before Linux 5.8).
        // In an app unit a reporter is found by its cgroup as well as by its process.
        let wanted = Set(
            sockets.filter { socket in
                socket.inode != 0
                    && socket.cgroupID.flatMap { paths[$0] }.flatMap(ApplicationUnit.desktopID(inCgroup:)) == nil
            }.map(\.inode))
        let holders = wanted.isEmpty ? [:] : processes(holding: wanted)
        var result: [UInt64: SocketOwner] = [:]
        for socket in sockets {
            let cgroup = socket.cgroupID.flatMap { paths[$0] }
            if let owner = Self.owner(cgroup: cgroup, process: holders[socket.inode], entries: entryOfProgram) {
                result[socket.cookie] = owner
            }
        }
        return result
    }

    /// The desktop id of the entry that runs each program, remembered: finding it reads every
    /// desktop entry, and a browser opens a socket a second.
    private var programEntries: [String: String?] = [:]

    private func entryOfProgram(_ program: String) -> String? {
        if let known = programEntries[program] { return known }
        if programEntries.count >= 256 { programEntries.removeAll() }
        let id = DesktopEntries.desktopID(forProgram: program)
        programEntries[program] = .some(id)
        return id
    }

    /// The owner of a socket in `cgroup` held by `process`: nil if neither names an application.
    static func owner(
        cgroup: String?, process: UInt32?,
        entries: (String) -> String? = { DesktopEntries.desktopID(forProgram: $0) }
    ) -> SocketOwner? {
        let program = process.flatMap(Processes.programName(ofProcess:))
        var desktopID = cgroup.flatMap(ApplicationUnit.desktopID(inCgroup:))
        if desktopID == nil, let process, let processCgroup = Processes.cgroup(ofProcess: process) {
            desktopID = ApplicationUnit.desktopID(inCgroup: processCgroup)
        }
        if desktopID == nil, let program { desktopID = entries(program) }
        guard let application = desktopID ?? program else { return nil }
        var processes: Set<UInt32> = []
        var next = process
        while let pid = next, pid > 1, processes.count < 64, processes.insert(pid).inserted {
            next = Processes.parent(ofProcess: pid)
        }
        return SocketOwner(
            application: application, desktopID: desktopID, program: program,
            label: desktopID.flatMap(DesktopEntries.name(of:)) ?? program ?? application,
            icon: desktopID.flatMap(DesktopEntries.icon(of:)), cgroup: cgroup ?? process.flatMap(Processes.cgroup(ofProcess:)),
            processes: processes)
    }

    /// The process of this user holding each of `inodes`, from one walk of `/proc/*/fd`.
    private func processes(holding inodes: Set<UInt32>) -> [UInt32: UInt32] {
        guard let proc = opendir(procRoot) else { return [:] }
        defer { closedir(proc) }
        var found: [UInt32: UInt32] = [:]
        var scanned = 0
        while found.count < inodes.count, scanned < Self.processLimit, let entry = readdir(proc) {
            let name = Self.name(of: entry)
            guard let pid = UInt32(name) else { continue }
            scanned += 1
            var status = stat()
            guard stat(procRoot + "/" + name, &status) == 0, status.st_uid == uid else { continue }
            let fdDirectory = procRoot + "/" + name + "/fd"
            guard let fds = opendir(fdDirectory) else { continue }
            var descriptors = 0
            var link = [CChar](repeating: 0, count: 64)
            while descriptors < Self.descriptorLimit, let fd = readdir(fds) {
                descriptors += 1
                let count = readlink(fdDirectory + "/" + Self.name(of: fd), &link, link.count - 1)
                guard count > 9 else { continue }
                let target = String(decoding: link[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                guard target.hasPrefix("socket:["), target.hasSuffix("]"),
                    let inode = UInt32(target.dropFirst(8).dropLast()), inodes.contains(inode), found[inode] == nil
                else { continue }
                found[inode] = pid
            }
            closedir(fds)
        }
        return found
    }

    private static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
