import DesktopApplications
import NetActivity
import Platform

/// Whether plasma-browser-integration shows a browser's downloads in Plasma's job list itself,
/// so the mirror leaves NetActivity's browser downloads out: a download that the browser
/// extension's host (`netactivity browser-host`) reports while a
/// `plasma-browser-integration-host` runs.
///
/// Both are asked of `/proc` only for an activity that could be such a download, and each
/// reporter's answer is kept while it lives.
final class BrowserIntegration {
    private let processes: Processes
    /// Whether each reporting process is the extension's host, by pid.
    private var hosts: [UInt32: Bool] = [:]

    init(processes: Processes) {
        self.processes = processes
    }

    func showsItself(_ activity: ActivityInfo) -> Bool {
        guard activity.bus == .session, activity.kind == "download", let pid = activity.processID else { return false }
        if hosts[pid] == nil {
            if hosts.count >= 256 { hosts.removeAll() }
            hosts[pid] = isBrowserHost(pid)
        }
        return hosts[pid] == true && integrationRuns()
    }

    private func isBrowserHost(_ pid: UInt32) -> Bool {
        guard let arguments = processes.proc.contents("cmdline", of: pid, limit: 4096) else { return false }
        return arguments.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == "browser-host" }
    }

    private func integrationRuns() -> Bool {
        processes.proc.processIDs().contains { processes.programName(ofProcess: $0) == "plasma-browser-integration-host" }
    }
}
