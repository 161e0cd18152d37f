@testable import DesktopApplications
import Platform

extension FuzzTarget {
    /// What `/proc` files say, read as the product reads each: the input as a process's
    /// `status` (`PPid:`, `Uid:`), `cgroup`, `cmdline` and `root/.flatpak-info`, and as this
    /// process's `mountinfo`.
    public static let procFS = FuzzTarget("procfs") { bytes in
        _ = ProcFS.statusField("PPid:", in: bytes)
        _ = ProcFS.statusField("Uid:", in: bytes)
        _ = ProcFS.unifiedCgroup(in: bytes)
        _ = Processes.programName(inCommandLine: bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        _ = Processes.flatpakApplication(in: text)
        _ = ProcFS.mounts(in: text)
    }
}
