import DesktopApplications

/// Which application a job's caller is, from what it claims and what its process is.
///
/// A job view's `desktopEntry` (KF5: `appName`) is the caller's word; it is taken as the
/// activity's application only when the caller's own process bears it out, as the launcher
/// API's ids are: its desktop application (Flatpak sandbox, systemd app unit) is that id, or the
/// desktop entry runs the caller's program. Otherwise the activity claims what the process is
/// (`Processes.application(ofProcess:)`), so no caller can pass its jobs off as another
/// application's.
enum JobCaller {
    /// The application id to claim for a job that `pid` asked for claiming `claimed`; nil when
    /// the process is gone (or its id unknown) and the claim cannot be checked.
    static func application(claimed: String, pid: UInt32?, processes: Processes = Processes()) -> String? {
        guard let pid else { return nil }
        if DesktopEntries.isDesktopID(claimed) {
            if processes.desktopApplication(ofProcess: pid) == claimed { return claimed }
            if let program = processes.programName(ofProcess: pid), let entry = processes.entries.entry(of: claimed),
                entry.runs(program)
            {
                return claimed
            }
        }
        return processes.application(ofProcess: pid)
    }
}
