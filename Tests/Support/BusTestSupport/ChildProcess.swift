import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A long-running child: the service under test, `dbus-monitor`, a client to SIGKILL.
///
/// Stdout and stderr are read on background threads into buffers, so the child never blocks
/// on a full pipe. Stdin is `/dev/null`. The environment is the test process's minus any
/// `DBUS_SESSION_BUS_ADDRESS`, `DBUS_SYSTEM_BUS_ADDRESS` and `DBUS_STARTER_*`, plus
/// `environment`. A child still running when the object is released is killed with SIGKILL
/// and reaped. All members may be called from any thread; the waits block the caller.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    public let pid: Int32
    /// The command line, for messages.
    public let commandLine: String

    private let stdout: OutputBuffer
    private let stderr: OutputBuffer
    private let reaper: Reaper

    /// Starts `executable` (a path, or a bare name looked up in `PATH`) with `arguments`.
    ///
    /// - Throws: `BusTestError` if the executable is missing or cannot be started.
    public convenience init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:]
    ) throws {
        try self.init(executable, arguments, environment: environment, input: nil)
    }

    /// Starts the child; with `input`, stdin is a pipe that receives `input` and is then closed.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String], input: String?
    ) throws {
        let child = try spawn(executable, arguments, environment: environment, pipeStdin: input != nil)
        pid = child.pid
        commandLine = ([executable] + arguments).joined(separator: " ")
        reaper = Reaper(pid: child.pid)
        stdout = OutputBuffer(reading: child.stdout, name: "stdout \(child.pid)")
        stderr = OutputBuffer(reading: child.stderr, name: "stderr \(child.pid)")
        if let input, let descriptor = child.stdin {
            feed(input, to: descriptor)
        }
    }

    deinit {
        if !reaper.hasExited {
            reaper.signal(SIGKILL)
            _ = reaper.wait(before: Duration.seconds(10).fromNow)
        }
    }

    // MARK: - Watching

    /// Whether the child is still running (not yet reaped).
    public var isRunning: Bool {
        !reaper.hasExited
    }

    /// Everything the child has printed to stdout so far, lines already read included.
    public var stdoutText: String {
        stdout.text
    }

    /// Everything the child has printed to stderr so far.
    public var stderrText: String {
        stderr.text
    }

    /// The next line of stdout, without its newline; nil once stdout is closed and drained.
    ///
    /// - Throws: `BusTestError` if no line arrives within `timeout`; the child keeps running.
    public func readLine(timeout: Duration) throws -> String? {
        let (line, atEOF) = stdout.nextLine(before: timeout.fromNow)
        if line == nil && !atEOF {
            throw BusTestError(
                "timed out after \(timeout.spoken) waiting for a line on stdout of `\(commandLine)`"
                    + diagnostics())
        }
        return line
    }

    /// Waits for the child to exit and returns its status and complete output.
    ///
    /// - Throws: `BusTestError` if it is still running after `timeout`; it is then killed with
    ///   SIGKILL and reaped before the error is thrown.
    public func waitForExit(timeout: Duration) throws -> ProcessResult {
        guard let termination = reaper.wait(before: timeout.fromNow) else {
            reaper.signal(SIGKILL)
            _ = reaper.wait(before: Duration.seconds(10).fromNow)
            throw BusTestError(
                "`\(commandLine)` did not exit within \(timeout.spoken); killed it with SIGKILL"
                    + diagnostics())
        }
        // Output written before exit is already in the pipes; the short grace only matters
        // when a grandchild keeps a pipe open, and then we return what we have.
        let grace = Duration.seconds(1).fromNow
        _ = stdout.waitForEOF(before: grace)
        _ = stderr.waitForEOF(before: grace)
        return ProcessResult(termination, stdout: stdout.text, stderr: stderr.text)
    }

    // MARK: - Controlling

    /// Sends `signal` (`SIGTERM`, `SIGKILL`, …) to the child; does nothing once it has exited.
    public func send(signal: Int32) {
        reaper.signal(signal)
    }

    // MARK: - Private

    private func diagnostics() -> String {
        "\n--- stdout so far ---\n\(stdout.text)\n--- stderr so far ---\n\(stderr.text)"
    }
}

/// Writes `input` to a child's stdin and closes it, on a thread of its own so a child that
/// reads slowly (or never) cannot block the test.
private func feed(_ input: String, to descriptor: Int32) {
    let thread = Thread {
        // A child that exits without reading must not kill the test process with SIGPIPE:
        // blocked on this thread, the signal stays pending here and write fails with EPIPE.
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        var bytes = Array(input.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                break
            }
            bytes = bytes.dropFirst(written)
        }
        _ = close(descriptor)
    }
    thread.name = "stdin \(descriptor)"
    thread.start()
}
