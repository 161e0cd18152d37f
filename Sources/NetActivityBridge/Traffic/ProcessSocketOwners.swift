import DesktopApplications
import Platform

/// Who owns a socket, from the kernel's and `/proc`'s answers: the socket's cgroup names the
/// application when it is a systemd app unit; otherwise the process holding the socket's inode
/// (found in `/proc/PID/fd` of this user's processes, and of the processes in the socket's cgroup
/// when another uid's socket lies in this user's slice: `sudo curl`) gives the program, and its
/// process tree lets a reporter's `ProcessID` cover it. Where `/proc/PID/fd` may not be read
/// (root's process, and the bridge is not root), the socket's uid's innermost process in its
/// cgroup is taken for it. Asked only for sockets that just began to carry traffic.
///
/// Every read may race a process's exit: a process gone between two reads is simply not the
/// owner, never a crash.
final class ProcessSocketOwners: SocketOwnerLookup {
    private let cgroups: CgroupTree
    private let uid: UInt32
    private let processes: Processes

    /// Processes scanned at most for one lookup, and descriptors per process.
    static let processLimit = 32_768
    static let descriptorLimit = 65_536

    init(uid: UInt32, cgroups: CgroupTree = CgroupTree(), processes: Processes = Processes()) {
        self.uid = uid
        self.cgroups = cgroups
        self.processes = processes
    }

    func cgroupPaths(of ids: Set<UInt64>) -> [UInt64: String] {
        cgroups.paths(of: ids)
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
        // Another uid's sockets counted for this user lie in its slice: their processes are in
        // the sockets' cgroups, whoever they run as.
        var members: [String: [UInt32]] = [:]
        for socket in sockets where socket.uid != uid {
            if let path = socket.cgroupID.flatMap({ paths[$0] }), members[path] == nil {
                members[path] = cgroups.processes(in: path, limit: Self.processLimit)
            }
        }
        let holders = wanted.isEmpty ? [:] : processes(holding: wanted, alsoOf: Set(members.values.joined()))
        var result: [UInt64: SocketOwner] = [:]
        for socket in sockets {
            let cgroup = socket.cgroupID.flatMap { paths[$0] }
            var process = holders[socket.inode]
            if process == nil, socket.uid != uid, let cgroup, let candidates = members[cgroup] {
                process = innermost(of: candidates, runningAs: socket.uid)
            }
            if let owner = Self.owner(cgroup: cgroup, process: process, processes: processes) {
                result[socket.cookie] = owner
            }
        }
        return result
    }

    /// The owner of a socket in `cgroup` held by `process`: nil if neither names an application.
    static func owner(
        cgroup: String?, process: UInt32?, processes: Processes = Processes()
    ) -> SocketOwner? {
        let entries = processes.entries
        let program = process.flatMap(processes.programName(ofProcess:))
        var desktopID = cgroup.flatMap(ApplicationUnit.desktopID(inCgroup:))
        if desktopID == nil, let process, let processCgroup = processes.cgroup(ofProcess: process) {
            desktopID = ApplicationUnit.desktopID(inCgroup: processCgroup)
        }
        if desktopID == nil, let program { desktopID = entries.desktopID(forProgram: program) }
        guard let application = desktopID ?? program else { return nil }
        var ancestry: Set<UInt32> = []
        var next = process
        while let pid = next, pid > 1, ancestry.count < 64, ancestry.insert(pid).inserted {
            next = processes.parent(ofProcess: pid)
        }
        return SocketOwner(
            application: application, desktopID: desktopID, program: program,
            label: desktopID.flatMap(entries.name(of:)) ?? program ?? application,
            icon: desktopID.flatMap(entries.icon(of:)), cgroup: cgroup ?? process.flatMap(processes.cgroup(ofProcess:)),
            processes: ancestry)
    }

    /// Among `candidates`, a process running as `socketUID` that is no parent of another such:
    /// `curl` rather than the `sudo` that started it. Nil when none runs as that uid.
    private func innermost(of candidates: [UInt32], runningAs socketUID: UInt32) -> UInt32? {
        let proc = processes.proc
        let matching = candidates.filter { proc.owner(of: $0) == socketUID }
        let parents = Set(matching.compactMap(processes.parent(ofProcess:)))
        return matching.filter { !parents.contains($0) }.max() ?? matching.max()
    }

    /// The process of this user (or among `others`) holding each of `inodes`, from one walk
    /// of `/proc/*/fd`. Another user's descriptors are read only where this process may.
    private func processes(holding inodes: Set<UInt32>, alsoOf others: Set<UInt32> = []) -> [UInt32: UInt32] {
        let proc = processes.proc
        var found: [UInt32: UInt32] = [:]
        for pid in proc.processIDs(limit: Self.processLimit) where found.count < inodes.count {
            guard others.contains(pid) || proc.owner(of: pid) == uid else { continue }
            for descriptor in proc.descriptors(of: pid, limit: Self.descriptorLimit) {
                guard let target = proc.target(ofDescriptor: descriptor, of: pid), target.hasPrefix("socket:["),
                    target.hasSuffix("]"), let inode = UInt32(target.dropFirst(8).dropLast()), inodes.contains(inode),
                    found[inode] == nil
                else { continue }
                found[inode] = pid
            }
        }
        return found
    }
}
