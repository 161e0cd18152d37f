@_exported import struct PrivateBusLauncher.ProcessMemory
@_exported import struct PrivateBusLauncher.ProcessStatistics
import Foundation

/// The threads of `pid` that switched context during `seconds` (a process that sleeps while
/// nothing happens switches none), as "TID NAME: COUNT" counting voluntary and involuntary
/// switches, threads that came or went meanwhile included. Blocks the caller for `seconds`.
///
/// - Throws: `BusTestError` if the process is gone.
public func wakeUps(of pid: Int32, over seconds: Double) throws -> [String] {
    let before = ProcessStatistics.sample(pid)
    Thread.sleep(forTimeInterval: seconds)
    let after = ProcessStatistics.sample(pid)
    guard !before.threads.isEmpty, !after.threads.isEmpty else {
        throw BusTestError("process \(pid) is gone")
    }
    return ProcessStatistics.wakeUps(from: before, to: after)
}

/// The resident set size (VmRSS) of `pid`, this process by default, in bytes.
///
/// - Throws: `BusTestError` if the process is gone.
public func residentSetSize(of pid: Int32 = getpid()) throws -> Int {
    let rss = ProcessMemory.sample(pid).rss
    guard rss > 0 else { throw BusTestError("no VmRSS in /proc/\(pid)/status") }
    return Int(rss) * 1024
}
