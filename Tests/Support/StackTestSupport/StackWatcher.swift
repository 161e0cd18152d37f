import BusTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One live activity as the service publishes it or a watcher printed it.
public struct ShownActivity: Equatable, Sendable, CustomStringConvertible {
    public var label: String
    /// The owner's process, from the service; `UInt32.max` where unknown or not shown.
    public var processID: UInt32 = .max
    public var application: String
    public var claimedApplication: String
    public var completed: UInt64
    public var total: UInt64
    /// -1 when unknown.
    public var fraction: Double

    public var description: String {
        "'\(label)'" + (processID == .max ? "" : " pid \(processID)")
            + " \(claimedApplication.isEmpty ? application : claimedApplication) \(completed)/\(total)"
            + (fraction >= 0 ? " \(fraction)" : "")
    }
}

/// A watcher of the stack: `netactivity watch --format json` or the GLib client
/// (`glib-watcher.py`), each printing one JSON state a line into a file of its own.
///
/// A file, not a pipe read into memory: an hour's soak prints hundreds of megabytes, and the
/// test keeps only the last state, reading on from where it stopped. Every state read is handed
/// to a check, so a state that never existed is caught however briefly it was shown.
public final class StackWatcher {
    public enum Kind: String, Sendable {
        /// `netactivity watch --format json`.
        case json
        /// A GDBusObjectManagerClient in PyGObject.
        case glib
    }

    public let kind: Kind
    public let process: ChildProcess
    private let file: String
    private var offset: off_t = 0
    private var partial: [UInt8] = []
    /// The last state read.
    public private(set) var last: [ShownActivity] = []
    /// How many states were read.
    public private(set) var states = 0

    /// Starts the watcher on `address`, printing into `directory/watch-KIND.jsonl`.
    public init(_ kind: Kind, address: String, directory: String) throws {
        self.kind = kind
        file = directory + "/watch-\(kind.rawValue).jsonl"
        let command: [String]
        switch kind {
        case .json: command = [try builtProduct("netactivity"), "--address", address, "watch", "--format", "json"]
        case .glib: command = ["/usr/bin/python3", Self.supportDirectory + "/glib-watcher.py", address]
        }
        process = try ChildProcess("sh", ["-c", "exec \"$@\" > '\(file)'", "sh"] + command)
    }

    deinit {
        process.send(signal: SIGKILL)
        _ = try? process.waitForExit(timeout: .seconds(10))
        unlink(file)
    }

    static var supportDirectory: String { URL(fileURLWithPath: #filePath).deletingLastPathComponent().path }

    /// Reads the states printed since the last call, hands each to `check` (which returns what
    /// is wrong with it, or nil), and returns the problems found, each with the watcher's name.
    @discardableResult
    public func read(checking check: ([ShownActivity]) -> String? = { _ in nil }) -> [String] {
        var problems: [String] = []
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return ["\(kind): cannot open \(file)"] }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = pread(descriptor, &buffer, buffer.count, offset)
            guard count > 0 else { break }
            offset += off_t(count)
            partial += buffer[..<count]
        }
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(partial[..<newline])
            partial.removeSubrange(...newline)
            states += 1
            guard let state = parse(line) else {
                problems.append("\(kind): an unreadable line: \(String(decoding: line, as: UTF8.self).prefix(300))")
                continue
            }
            last = state.activities
            if let problem = state.problem ?? check(state.activities) {
                problems.append("\(kind) showed a state that never existed: \(problem): \(state.activities)")
            }
        }
        return problems
    }

    private func parse(_ line: [UInt8]) -> (activities: [ShownActivity], problem: String?)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
            let list = object["activities"] as? [[String: Any]]
        else { return nil }
        let activities = list.map { entry in
            ShownActivity(
                label: entry["label"] as? String ?? "", application: entry["application"] as? String ?? "",
                claimedApplication: entry["claimed_application"] as? String ?? "",
                completed: (entry["completed"] as? NSNumber)?.uint64Value ?? 0,
                total: (entry["total"] as? NSNumber)?.uint64Value ?? 0,
                fraction: (entry["fraction"] as? NSNumber)?.doubleValue ?? -1)
        }
        // `watch` also says whether anything is active and how much: the contract's consistency.
        var problem: String?
        if kind == .json, let active = object["active"] as? Bool, let count = (object["count"] as? NSNumber)?.intValue {
            if active != (count > 0) { problem = "active \(active) with count \(count)" }
            if count < activities.count { problem = "count \(count) below \(activities.count) activities" }
        }
        return (activities, problem)
    }
}
