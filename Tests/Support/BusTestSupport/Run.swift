import Foundation

/// How a finished command ended and what it printed.
public struct ProcessResult: Sendable, CustomStringConvertible {
    /// The exit status, or nil if the process was killed by a signal.
    public var exitStatus: Int32?
    /// The signal that killed the process, or nil if it exited.
    public var signal: Int32?
    /// Everything the process wrote to stdout.
    public var stdout: String
    /// Everything the process wrote to stderr.
    public var stderr: String

    /// Whether the process exited with status 0.
    public var succeeded: Bool {
        exitStatus == 0
    }

    /// The status and both outputs, for failure messages.
    public var description: String {
        let status: String
        if let exitStatus {
            status = "exit status \(exitStatus)"
        } else if let signal {
            status = "killed by signal \(signal)"
        } else {
            status = "reaped by someone else; status unknown"
        }
        return "\(status)\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)"
    }

    init(_ termination: Termination, stdout: String, stderr: String) {
        switch termination {
        case .exited(let status): exitStatus = status
        case .signaled(let number): signal = number
        case .unknown: break
        }
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Runs a command to completion and returns its status and output.
///
/// `executable` may be a path or a bare name looked up in `PATH`. The child's environment is
/// the test process's minus `DBUS_SESSION_BUS_ADDRESS`, `DBUS_SYSTEM_BUS_ADDRESS` and
/// `DBUS_STARTER_*`, plus `environment`. Stdin receives `input` and is then closed (it is
/// `/dev/null` when `input` is nil). Blocks the calling thread.
///
/// - Throws: `BusTestError` if the executable is missing, or if it overruns `timeout`; it is
///   then killed with SIGKILL and reaped, and the error carries what it printed.
public func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:],
    input: String? = nil, timeout: Duration = .seconds(30)
) throws -> ProcessResult {
    let child = try ChildProcess(executable, arguments, environment: environment, input: input)
    return try child.waitForExit(timeout: timeout)
}
