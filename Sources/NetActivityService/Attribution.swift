import DesktopApplications
import Platform

/// Who owns a connection: its process and user ids from the bus, and its application.
struct Attribution: Equatable, Sendable {
    var processID: UInt32
    var userID: UInt32
    var application: String

    /// Best effort, in this order (the contract's `Application`): the Flatpak app id, the
    /// desktop app id of the systemd `app-…` scope or service the process runs in, the
    /// executable's name (`comm`). The desktop's own names come from `DesktopApplications`, as
    /// every other part of NetActivity reads them.
    static func application(cgroup: String?, flatpakInfo: String?, comm: String?) -> String {
        if let flatpakInfo, let id = Processes.flatpakApplication(in: flatpakInfo) { return id }
        if let cgroup, let id = ApplicationUnit.desktopID(inCgroupFile: cgroup) { return id }
        return comm.map { $0.trimmingSuffix(while: { $0 == "\n" }) } ?? ""
    }

    /// Reads what `application(cgroup:flatpakInfo:comm:)` needs from `/proc/PID`.
    static func application(ofProcess processID: UInt32, proc: ProcFS = ProcFS()) -> String {
        // A small file's text, or nil when it cannot be read (no such process, no permission).
        func text(_ file: String) -> String? {
            proc.contents(file, of: processID, limit: 65_536).map { String(decoding: $0, as: UTF8.self) }
        }
        return application(cgroup: text("cgroup"), flatpakInfo: text("root/.flatpak-info"), comm: text("comm"))
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var text = self
        while let last = text.last, predicate(last) { text.removeLast() }
        return text
    }
}
