import Platform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `/proc` says of a running process and each of its threads: the one reader of
/// context switches, CPU time and memory for the tests (wake-ups while idle, CPU per change)
/// and the benchmark. Without Foundation, like the rest of this target.
public struct ProcessStatistics: Sendable {
    /// One thread (`/proc/PID/task/TID`).
    public struct Thread: Sendable, Equatable {
        /// Its name (`Name:`).
        public var name: String
        /// Voluntary context switches: how often it went to sleep.
        public var voluntarySwitches: UInt64
        /// Voluntary plus involuntary context switches.
        public var contextSwitches: UInt64
        /// The scheduler's exact `sum_exec_runtime` (`schedstat`), nil where the kernel has none.
        public var cpuNanoseconds: UInt64?
        /// Its state letter (`R`, `S`, `D`, ...) from `stat`.
        public var state: Character?
    }

    /// Each thread by id. A thread that exits while it is read is left out.
    public var threads: [Int32: Thread]
    /// `utime + stime` of the whole process, in clock ticks (`/proc/PID/stat`).
    public var cpuTicks: UInt64

    /// Voluntary plus involuntary context switches of every thread.
    public var contextSwitches: UInt64 { threads.values.reduce(0) { $0 + $1.contextSwitches } }

    /// CPU time in nanoseconds: the threads' `schedstat` (exact) where every thread has it,
    /// else `cpuTicks` converted (10 ms steps).
    public var cpuNanoseconds: UInt64 {
        let exact = threads.values.compactMap(\.cpuNanoseconds)
        if exact.count == threads.count, !exact.isEmpty {
            let sum = exact.reduce(0, +)
            if sum > 0 { return sum }
        }
        let hertz = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))
        return cpuTicks * (1_000_000_000 / hertz)
    }

    /// Reads `pid` now (`getpid()` for this process); no threads and no time if it is gone.
    public static func sample(_ pid: Int32) -> ProcessStatistics {
        let stat = readProcFile("/proc/\(pid)/stat") ?? ""
        var threads: [Int32: Thread] = [:]
        for task in taskIDs(of: pid) {
            if let thread = thread(task, of: pid) { threads[task] = thread }
        }
        let fields = fieldsAfterName(stat)
        // utime and stime are the stat file's fields 14 and 15: 12 and 13 after state (3).
        let ticks = fields.count > 12 ? (UInt64(fields[11]) ?? 0) + (UInt64(fields[12]) ?? 0) : 0
        return ProcessStatistics(threads: threads, cpuTicks: ticks)
    }

    /// Reads thread `tid` of `pid` now; nil if it is gone.
    public static func thread(_ tid: Int32, of pid: Int32) -> Thread? {
        let base = "/proc/\(pid)/task/\(tid)"
        guard let status = readProcFile(base + "/status") else { return nil }
        let voluntary = number(after: "voluntary_ctxt_switches:", in: status)
        let involuntary = number(after: "nonvoluntary_ctxt_switches:", in: status)
        let runtime = readProcFile(base + "/schedstat").flatMap { $0.split(separator: " ").first.flatMap { UInt64($0) } }
        let state = readProcFile(base + "/stat").flatMap { fieldsAfterName($0).first?.first }
        return Thread(
            name: text(after: "Name:", in: status), voluntarySwitches: voluntary,
            contextSwitches: voluntary + involuntary, cpuNanoseconds: runtime, state: state)
    }

    /// The threads of `pid` that switched context between `before` and `after`, as
    /// "TID NAME: COUNT", and those that exited meanwhile as "TID NAME: exited".
    public static func wakeUps(from before: ProcessStatistics, to after: ProcessStatistics) -> [String] {
        var woken: [String] = []
        for (tid, now) in after.threads.sorted(by: { $0.key < $1.key }) {
            let switches = now.contextSwitches - min(now.contextSwitches, before.threads[tid]?.contextSwitches ?? 0)
            if switches > 0 { woken.append("\(tid) \(now.name): \(switches)") }
        }
        for (tid, then) in before.threads.sorted(by: { $0.key < $1.key }) where after.threads[tid] == nil {
            woken.append("\(tid) \(then.name): exited")
        }
        return woken
    }
}

/// Memory of a running process from `/proc/PID/status`, in KiB.
public struct ProcessMemory: Sendable {
    public var rss: UInt64
    public var anonymous: UInt64
    public var file: UInt64
    public var peak: UInt64

    /// Reads `pid` now; all zero if it is gone.
    public static func sample(_ pid: Int32) -> ProcessMemory {
        let status = readProcFile("/proc/\(pid)/status") ?? ""
        return ProcessMemory(
            rss: number(after: "VmRSS:", in: status), anonymous: number(after: "RssAnon:", in: status),
            file: number(after: "RssFile:", in: status), peak: number(after: "VmHWM:", in: status))
    }
}

/// A small file's text (/proc files report size 0, so it is read until end of file); nil if it
/// cannot be opened. At most 1 MiB.
public func readProcFile(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while bytes.count < 1 << 20 {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The ids in `/proc/PID/task`.
private func taskIDs(of pid: Int32) -> [Int32] {
    (Directory.entries(of: ProcFS().path("task", of: UInt32(pid))) ?? []).compactMap { Int32($0.name) }
}

/// A stat file's fields after the parenthesised command name (which may hold spaces): state first.
private func fieldsAfterName(_ stat: String) -> [Substring] {
    guard let close = stat.lastIndex(of: ")") else { return [] }
    return stat[stat.index(after: close)...].split(separator: " ")
}

/// The number after `name` on its line of a /proc status file; 0 if absent.
private func number(after name: String, in status: String) -> UInt64 {
    UInt64(text(after: name, in: status).prefix { $0.isNumber }) ?? 0
}

/// The rest of `name`'s line of a /proc status file, trimmed; "" if absent.
private func text(after name: String, in text: String) -> String {
    for line in text.split(separator: "\n") where line.hasPrefix(name) {
        return String(line.dropFirst(name.count).drop { $0 == " " || $0 == "\t" })
    }
    return ""
}
