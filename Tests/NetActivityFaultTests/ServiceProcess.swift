import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private bus with the real `netactivityd` on it, which a test may SIGKILL and start again.
final class ServiceProcess: @unchecked Sendable {
    let bus: PrivateBus
    let arguments: [String]
    private(set) var process: ChildProcess
    /// Instances killed earlier, kept so their output stays readable in failure messages.
    private var killed: [ChildProcess] = []

    /// Starts a bus and `netactivityd --address <bus> <arguments>`, and waits until it owns
    /// its name.
    init(_ arguments: [String] = []) throws {
        bus = try PrivateBus()
        self.arguments = arguments
        process = try Self.launch(on: bus, arguments)
    }

    deinit {
        if process.isRunning { process.send(signal: SIGTERM) }
        _ = try? process.waitForExit(timeout: .seconds(10))
        bus.stop()
    }

    var address: String { bus.address }

    /// A new raw client connection to the bus.
    func client() throws -> RawClient {
        try RawClient(address: bus.address)
    }

    /// SIGKILLs the service and waits until the bus has seen it go.
    func kill() throws {
        process.send(signal: SIGKILL)
        let result = try process.waitForExit(timeout: .seconds(10))
        guard result.signal == SIGKILL else { throw BusTestError("netactivityd did not die of SIGKILL: \(result)") }
        killed.append(process)
        let probe = try client()
        try waitUntil("the bus to see the killed netactivityd leave") {
            try probe.connection.owner(of: NetActivityBus.name) == nil
        }
    }

    /// Starts a new instance on the same bus and waits until it owns the name.
    func restart() throws {
        process = try Self.launch(on: bus, arguments)
    }

    /// The service's resident set size (VmRSS) in bytes.
    func residentBytes() throws -> Int {
        try residentSetSize(of: process.pid)
    }

    /// Stops the service with SIGTERM and returns how it ended. Under AddressSanitizer this is
    /// also when LeakSanitizer reports, on stderr and in the exit status.
    func stop() throws -> ProcessResult {
        process.send(signal: SIGTERM)
        return try process.waitForExit(timeout: .seconds(30))
    }

    /// What the service printed to stderr, for failure messages.
    var log: String { process.stderrText }

    private static func launch(on bus: PrivateBus, _ arguments: [String]) throws -> ChildProcess {
        let process = try ChildProcess(
            try builtProduct("netactivityd"), ["--address", bus.address] + arguments, environment: leakChecking)
        let probe = try RawClient(address: bus.address)
        try waitUntil("netactivityd to own \(NetActivityBus.name)", timeout: .seconds(30)) {
            guard process.isRunning else {
                throw BusTestError("netactivityd exited early: \(process.stderrText)")
            }
            return try probe.connection.owner(of: NetActivityBus.name) != nil
        }
        return process
    }
}

/// The sanitizer this test binary, and so every product of the same build, was built with.
enum Sanitizer {
    static let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
    static let thread = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
    static var any: Bool { address || thread }
}

/// Under AddressSanitizer, LeakSanitizer on in the service even when the test process turns
/// it off (`make test-asan` does: Swift keeps enum payload pointers tagged, which LeakSanitizer
/// cannot follow, so the test process's long-lived values read as leaks).
private var leakChecking: [String: String] {
    guard Sanitizer.address else { return [:] }
    let inherited = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
    return ["ASAN_OPTIONS": inherited + "detect_leaks=1"]
}

/// Stops the service with SIGTERM and expects exit status 0 and nothing on stderr, where a
/// sanitizer's report (a leak found at exit, say) would be.
func expectCleanExit(_ service: ServiceProcess, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let result = try service.stop()
    #expect(
        result.exitStatus == 0 && result.stderr.isEmpty, "netactivityd did not stop cleanly: \(result)",
        sourceLocation: sourceLocation)
}

/// VmRSS of a process, in bytes, from /proc/<pid>/status.
func residentSetSize(of pid: Int32) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if fields.count >= 2, let kibibytes = Int(fields[1]) { return kibibytes * 1024 }
    }
    throw BusTestError("no VmRSS in /proc/\(pid)/status")
}

/// The tests' sizes: a short form by default, the soak with `NETACTIVITY_SOAK=1`.
enum Scale {
    static let soak = ProcessInfo.processInfo.environment["NETACTIVITY_SOAK"] == "1"

    /// `short` normally, `soak` under `NETACTIVITY_SOAK=1`.
    static func pick<Value>(_ short: Value, soak: Value) -> Value {
        Scale.soak ? soak : short
    }

    /// The seed of a randomized test: `NETACTIVITY_SEED` if set (to replay a failure),
    /// otherwise a fresh one. Tests print it in their failure messages.
    static func seed() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["NETACTIVITY_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 1...UInt64(UInt32.max))
    }
}
