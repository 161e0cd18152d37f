import BusTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A KDE program with file jobs: `/usr/bin/python3` running `kde-job-client.py`, which reports
/// them to `org.kde.JobViewServer` as KDE Frameworks 6's `KUiServerV2JobTracker` does, and asks
/// for new views with its jobs' whole state whenever the server's name gets a new owner.
///
/// Its first job copies `copyTotal` bytes, growing by `step` at a time, for longer than any run;
/// `move(failing:)` begins a short one labelled `movePrefix` and a number, which moves a few
/// mebibytes to the end or fails halfway. It prints `job N ended CODE` once job N (the first
/// short one is 1) has ended, `job N lost` if its view request failed.
public enum KDEJobApp {
    /// The copy's activity's label: the title and the last part of its source, as the bridge
    /// makes a KIO job's.
    public static let copyLabel = "Copying: stack.iso"
    public static let copyTotal: UInt64 = 64 << 30
    /// The bytes every report of the copy grows by (the program's): what it reports is a
    /// multiple of it.
    public static let step: UInt64 = 512 << 10
    /// The short jobs' labels begin with this.
    public static let movePrefix = "Moving: kjob-"

    /// Starts the program in `scope` on `address`, its jobs claiming `desktopID`.
    public static func launch(_ desktopID: String, address: String, scope: AppScope) throws -> ChildProcess {
        try ChildProcess(
            "sh", scope.run(["/usr/bin/python3", StackWatcher.supportDirectory + "/kde-job-client.py", address, desktopID]))
    }

    /// Begins a short job in the program running as `process`.
    public static func move(in process: ChildProcess, failing: Bool) {
        process.send(signal: failing ? SIGUSR2 : SIGUSR1)
    }

    /// Whether short job `number` of the program running as `process` has ended, or lost its
    /// view for good (its request failed).
    public static func hasEnded(_ number: Int, in process: ChildProcess) -> Bool {
        let output = process.stdoutText
        return output.contains("job \(number) ended ") || output.contains("job \(number) lost\n")
    }
}
