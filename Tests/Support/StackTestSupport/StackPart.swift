import BusTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One long-lived program of the stack (the bridge, the tray, the shell, an app), started again
/// the way a desktop starts it again: the bridge's and the tray's as systemd's
/// `Restart=on-failure` does (after an exit with a non-zero status or a signal, not after a
/// clean exit, which is what the programs' own units say), an app as its user would, whatever
/// ended it.
public final class StackPart {
    public enum Restart: Sendable {
        /// systemd's `Restart=on-failure`.
        case onFailure
        /// Always, as a user starts an app again.
        case always
    }

    public let name: String
    private let restart: Restart
    private let launch: () throws -> ChildProcess
    /// The running (or last) instance.
    public private(set) var process: ChildProcess
    /// Every instance that ended, for failure messages and for the check that none is left.
    public private(set) var ended: [ChildProcess] = []
    /// How each instance that ended did, in order: "exit 1", "signal 9".
    public private(set) var endings: [String] = []

    public init(_ name: String, restart: Restart, launch: @escaping () throws -> ChildProcess) throws {
        self.name = name
        self.restart = restart
        self.launch = launch
        process = try launch()
    }

    deinit {
        stop()
    }

    public var pid: Int32 { process.pid }

    /// Starts the part again if it ended and its restart rule says so; true when it did.
    @discardableResult
    public func supervise() throws -> Bool {
        guard !process.isRunning, !isDownForGood else { return false }
        let result = try process.waitForExit(timeout: .seconds(5))
        let failed = result.signal != nil || result.exitStatus != 0
        endings.append(result.signal.map { "signal \($0)" } ?? "exit \(result.exitStatus ?? -1)")
        guard restart == .always || failed else {
            isDownForGood = true
            return false
        }
        ended.append(process)
        process = try launch()
        return true
    }

    /// Whether the part ended and its rule leaves it down (a clean exit under `.onFailure`).
    public private(set) var isDownForGood = false

    /// SIGKILLs the running instance and reaps it (not its children: what they do then is
    /// what is under test); returns its pid.
    @discardableResult
    public func kill() throws -> Int32 {
        let pid = process.pid
        process.send(signal: SIGKILL)
        _ = try process.waitForExit(timeout: .seconds(10))
        return pid
    }

    /// Ends the part for good: SIGTERM, then SIGKILL, with every process it started.
    public func stop() {
        let descendants = descendantsOf(process.pid)
        process.send(signal: SIGTERM)
        if (try? process.waitForExit(timeout: .seconds(5))) == nil { process.send(signal: SIGKILL) }
        for pid in descendants { Glibc.kill(pid, SIGKILL) }
    }
}

/// Every process below `pid` now, children before grandchildren.
public func descendantsOf(_ pid: Int32) -> [Int32] {
    var found: [Int32] = []
    var queue = [pid]
    while let next = queue.popLast() {
        // Each thread lists the children it forked: a browser forks from several.
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(next)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(next)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        found += children
        queue += children
    }
    return found
}

/// Whether process `pid` has gone: no such process, or a zombie no one reaped yet.
public func hasGone(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return true }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
}
