#if canImport(Glibc)
import Glibc
#endif

/// CPU affinity for the sequential measurements.
///
/// With one call in flight only one of client, bus and contender runs at a time. Left to the
/// scheduler, a wake-up may or may not cross to the other CPU, and which process pays for that
/// (in a VM, a lot) changes with every placement: the CPU per call then swings by ±30 %. On one
/// shared CPU every wake-up is local, and the CPU per call is the work itself.
enum Affinity {
    /// Runs `body` with `pids` (and this process) confined to the CPU this process is on, then
    /// lets them all run anywhere again. Without `sched_setaffinity` it just runs `body`.
    static func onOneCPU<Result>(_ pids: [pid_t], _ body: () throws(BenchError) -> Result) throws(BenchError) -> Result {
        guard let setAffinity = Calls.setAffinity, let currentCPU = Calls.currentCPU else { return try body() }
        let everyone = pids + [getpid()]
        let cpus = Int(max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        var one = mask(of: [Int(max(0, currentCPU()))])
        for pid in everyone { _ = setAffinity(pid, one.count, &one) }
        defer {
            var all = mask(of: Array(0..<cpus))
            for pid in everyone { _ = setAffinity(pid, all.count, &all) }
        }
        return try body()
    }

    /// A `cpu_set_t` (1,024 bits) with `cpus` set; CPU_SET is a macro Swift cannot import.
    private static func mask(of cpus: [Int]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 128)
        for cpu in cpus where cpu / 8 < bytes.count { bytes[cpu / 8] |= UInt8(1) << UInt8(cpu % 8) }
        return bytes
    }

    // glibc declares these only for _GNU_SOURCE, which the Glibc module is not built with.
    private enum Calls {
        typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32
        typealias CurrentCPU = @convention(c) () -> Int32
        static let setAffinity: SetAffinity? = symbol("sched_setaffinity")
        static let currentCPU: CurrentCPU? = symbol("sched_getcpu")

        private static func symbol<Function>(_ name: String) -> Function? {
            dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: Function.self) }
        }
    }
}
