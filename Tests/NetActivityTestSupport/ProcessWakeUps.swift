import Foundation

/// The threads of `pid` that switched context during `seconds` (a process that sleeps while
/// nothing happens switches none), as "TID NAME: COUNT" counting voluntary and involuntary
/// switches, threads that came or went meanwhile included. Blocks the caller for `seconds`.
public func wakeUps(of pid: Int32, over seconds: Double) throws -> [String] {
    let before = try threadContextSwitches(of: pid)
    Thread.sleep(forTimeInterval: seconds)
    let after = try threadContextSwitches(of: pid)
    var woken: [String] = []
    for (thread, now) in after.sorted(by: { $0.key < $1.key }) {
        let switches = now.switches - (before[thread]?.switches ?? 0)
        if switches > 0 { woken.append("\(thread) \(now.name): \(switches)") }
    }
    for (thread, then) in before where after[thread] == nil {
        woken.append("\(thread) \(then.name): exited")
    }
    return woken
}

/// Each thread of `pid` by id: its name and its context switches so far, from /proc.
public func threadContextSwitches(of pid: Int32) throws -> [String: (name: String, switches: Int)] {
    var threads: [String: (name: String, switches: Int)] = [:]
    for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else {
            continue  // exited while listed
        }
        var name = ""
        var switches = 0
        for line in status.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            if parts[0] == "Name" { name = parts[1] }
            if parts[0].hasSuffix("ctxt_switches") { switches += Int(parts[1]) ?? 0 }
        }
        threads[task] = (name, switches)
    }
    return threads
}
