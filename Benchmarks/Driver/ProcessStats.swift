#if canImport(Glibc)
import Glibc
#endif

/// What /proc says about a running process, summed over its threads.
struct ProcessStats {
    /// CPU time in nanoseconds: the scheduler's `sum_exec_runtime` from
    /// /proc/PID/task/TID/schedstat (exact), or utime + stime from /proc/PID/stat (10 ms ticks)
    /// where the kernel has no schedstat.
    var cpuNanoseconds: UInt64
    /// voluntary + nonvoluntary context switches.
    var contextSwitches: UInt64

    /// Reads `pid`'s counters now.
    static func sample(_ pid: pid_t) -> ProcessStats {
        var cpu: UInt64 = 0
        var switches: UInt64 = 0
        var haveSchedstat = true
        for task in tasks(of: pid) {
            let base = "/proc/\(pid)/task/\(task)"
            if let schedstat = readText(base + "/schedstat"),
                let first = schedstat.split(separator: " ").first, let runtime = UInt64(first)
            {
                cpu += runtime
            } else {
                haveSchedstat = false
            }
            let status = readText(base + "/status") ?? ""
            switches += field(status, "voluntary_ctxt_switches:") + field(status, "nonvoluntary_ctxt_switches:")
        }
        if !haveSchedstat || cpu == 0 { cpu = statTicks(pid) }
        return ProcessStats(cpuNanoseconds: cpu, contextSwitches: switches)
    }

    /// utime + stime of the whole process, in nanoseconds.
    private static func statTicks(_ pid: pid_t) -> UInt64 {
        guard let stat = readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return 0 }
        // Fields after "(comm)": state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return 0 }
        let hertz = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))
        return (user + system) * (1_000_000_000 / hertz)
    }

    private static func tasks(of pid: pid_t) -> [String] {
        guard let directory = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name.first?.isNumber == true { names.append(name) }
        }
        return names
    }
}

/// Memory of a running process from /proc/PID/status, in KiB.
struct Memory {
    var rss: UInt64
    var anonymous: UInt64
    var file: UInt64
    var peak: UInt64

    static func sample(_ pid: pid_t) -> Memory {
        let status = readText("/proc/\(pid)/status") ?? ""
        return Memory(
            rss: field(status, "VmRSS:"), anonymous: field(status, "RssAnon:"), file: field(status, "RssFile:"),
            peak: field(status, "VmHWM:"))
    }
}

/// The number after `name` on its line of a /proc status file; 0 if absent.
private func field(_ text: String, _ name: String) -> UInt64 {
    for line in text.split(separator: "\n") where line.hasPrefix(name) {
        let digits = line.dropFirst(name.count).filter { $0.isNumber }
        return UInt64(digits) ?? 0
    }
    return 0
}

/// A small file's contents (the /proc files report size 0, so read until EOF).
func readText(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
