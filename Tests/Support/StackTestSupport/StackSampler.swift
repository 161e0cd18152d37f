import BusTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What one long-lived part of the stack held at one moment of a soak.
public struct PartSample: Sendable {
    /// Since the soak began.
    public var elapsed: Duration
    public var pid: Int32
    /// VmRSS, bytes.
    public var resident: Int
    public var descriptors: Int
    public var threads: Int
    /// Of one core, since the sample before (0 for the first).
    public var cpuPercent: Double
}

/// Samples RSS, open descriptors, threads and CPU of each long-lived part by name, and judges
/// the soak by them: after the warm-up, RSS grows by less than 1 MB, descriptors and threads
/// stay as they were, and no part was ever replaced by another process.
public final class StackSampler {
    public private(set) var samples: [String: [PartSample]] = [:]
    /// The order parts were first sampled in, for the table.
    private var names: [String] = []
    private var cpu: [String: (pid: Int32, nanoseconds: UInt64, at: ContinuousClock.Instant)] = [:]
    private let clock = ContinuousClock()
    /// Parts sampled and shown but not judged: GNOME Shell, whose JavaScript heap grows and
    /// shrinks with its garbage collector whatever the extension does.
    public var reportedOnly: Set<String> = ["gnome-shell"]
    /// The most RSS may grow after the warm-up: 1 MB.
    public static let residentGrowthLimit = 1_000_000

    public init() {}

    /// A long-lived part to sample: its name, its process and, where some of its descriptors
    /// come and go with its clients (the bus's: one a connection), the count of the others,
    /// which the caller made; otherwise the sampler counts them all.
    public struct Part: Sendable {
        public var name: String
        public var pid: Int32
        public var descriptors: Int?

        public init(_ name: String, _ pid: Int32, descriptors: Int? = nil) {
            self.name = name
            self.pid = pid
            self.descriptors = descriptors
        }
    }

    /// How many descriptors `pid` has open now.
    public static func descriptors(of pid: Int32) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    /// Samples each of `parts` now.
    public func sample(_ parts: [Part], elapsed: Duration) {
        let now = clock.now
        for part in parts {
            let (name, pid) = (part.name, part.pid)
            let statistics = ProcessStatistics.sample(pid)
            guard !statistics.threads.isEmpty else { continue }
            let nanoseconds = statistics.cpuNanoseconds
            var percent = 0.0
            if let last = cpu[name], last.pid == pid {
                let wall = (now - last.at).seconds
                if wall > 0 { percent = Double(nanoseconds &- last.nanoseconds) / 1e9 / wall * 100 }
            }
            cpu[name] = (pid, nanoseconds, now)
            let descriptors = part.descriptors ?? Self.descriptors(of: pid)
            if samples[name] == nil { names.append(name) }
            samples[name, default: []].append(PartSample(
                elapsed: elapsed, pid: pid, resident: Int(ProcessMemory.sample(pid).rss) * 1024,
                descriptors: descriptors, threads: statistics.threads.count, cpuPercent: percent))
        }
    }

    /// What broke the pass criteria, judged from the first sample at or after `warmUp`.
    public func problems(warmUp: Duration) -> [String] {
        var problems: [String] = []
        for name in names where !reportedOnly.contains(name) {
            let all = samples[name] ?? []
            if Set(all.map(\.pid)).count > 1 { problems.append("\(name) was replaced: pids \(all.map(\.pid))") }
            guard let base = all.first(where: { $0.elapsed >= warmUp }), let last = all.last else { continue }
            if last.resident - base.resident >= Self.residentGrowthLimit {
                problems.append("\(name)'s RSS grew \(Self.megabytes(last.resident - base.resident)) after the warm-up")
            }
            if last.descriptors > base.descriptors {
                problems.append("\(name)'s descriptors went from \(base.descriptors) to \(last.descriptors)")
            }
            if last.threads > base.threads {
                problems.append("\(name)'s threads went from \(base.threads) to \(last.threads)")
            }
        }
        return problems
    }

    /// One row per sample and part: time, RSS, descriptors, threads, CPU; then each part's
    /// growth from the warm-up to the end.
    public func table(warmUp: Duration) -> String {
        var lines = ["minute  " + Self.padded("part") + "  RSS MB  fds  threads  CPU %"]
        let times = Set(samples.values.flatMap { $0.map(\.elapsed) }).sorted()
        for time in times {
            for name in names {
                guard let sample = samples[name]?.first(where: { $0.elapsed == time }) else { continue }
                lines.append(
                    String(format: "%6.1f  ", time.seconds / 60) + Self.padded(name)
                        + String(format: " %7.2f %4d %8d %6.2f", Double(sample.resident) / 1e6, sample.descriptors,
                                 sample.threads, sample.cpuPercent))
            }
        }
        lines.append("after the warm-up (\(String(format: "%.1f", warmUp.seconds / 60)) min): RSS growth, fds, threads, mean CPU %")
        for name in names {
            let all = samples[name] ?? []
            guard let base = all.first(where: { $0.elapsed >= warmUp }), let last = all.last else { continue }
            let after = all.filter { $0.elapsed > warmUp }
            let meanCPU = after.isEmpty ? 0 : after.map(\.cpuPercent).reduce(0, +) / Double(after.count)
            lines.append(
                "        " + Self.padded(name)
                    + String(format: " %+7.3f MB  %d → %d  %d → %d  %.2f", Double(last.resident - base.resident) / 1e6,
                             base.descriptors, last.descriptors, base.threads, last.threads, meanCPU))
        }
        return lines.joined(separator: "\n")
    }

    /// A part's name in a column of its own (`String(format:)`'s widths do not apply to `%@`).
    static func padded(_ name: String) -> String {
        name.count >= 19 ? name : name + String(repeating: " ", count: 19 - name.count)
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.3f MB", Double(bytes) / 1e6) }
}
