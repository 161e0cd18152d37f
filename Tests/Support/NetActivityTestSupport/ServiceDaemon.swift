import BusTestSupport
import DBus
import Foundation
import NetActivityContract

#if canImport(Glibc)
import Glibc
#endif

/// The real `netactivityd` binary, run for a test on a private bus (or on a bus the test
/// started itself); the one place the test suites start the service.
///
/// A test may stop it (SIGTERM), kill it (SIGKILL), start it again on the same bus, or start a
/// successor with `--replace`. Every instance still running is stopped with SIGTERM when the
/// daemon is released, and the private bus after it. All members may be called from any
/// thread; the waits block the caller.
public final class ServiceDaemon: Sendable {
    /// No throttle and no debounce delays: every change is announced at once.
    public static let immediate = ["--throttle-ms", "0", "--activation-delay", "0", "--completion-delay", "0"]

    /// The address clients connect to.
    public let address: String
    /// The arguments every instance gets after `--address <address>`.
    public let arguments: [String]

    private let privateBus: PrivateBus?
    private let environment: [String: String]
    private let instances = Locked(Instances())

    private struct Instances {
        var current: ChildProcess?
        /// Instances replaced with `--replace`, stopped or killed: kept so their output stays
        /// readable in failure messages, and so a replaced one still running is stopped at the end.
        var earlier: [ChildProcess] = []
        var replaced: [ChildProcess] = []
        var lastOwner: String?
    }

    /// Starts a private bus and, when `startService`, `netactivityd --address <bus> <arguments>`,
    /// waiting until it owns its name.
    ///
    /// - Parameters:
    ///   - serviceDirectories: `.service` directories of the private bus, for D-Bus activation.
    ///   - leakChecking: under AddressSanitizer, LeakSanitizer on in the service even when the
    ///     test process turns it off (`make test-asan` does: Swift keeps enum payload pointers
    ///     tagged, which LeakSanitizer cannot follow, so the test process's long-lived values
    ///     read as leaks). A leak then shows in `stop()`'s exit status and stderr.
    public convenience init(
        _ arguments: [String] = ServiceDaemon.immediate, startService: Bool = true,
        serviceDirectories: [String] = [], leakChecking: Bool = false
    ) throws {
        try self.init(
            arguments, on: try PrivateBus(serviceDirectories: serviceDirectories), startService: startService,
            leakChecking: leakChecking)
    }

    /// Runs the service on a private bus the test configured itself (an environment for the
    /// services it activates, say); the daemon stops that bus when released.
    public convenience init(
        _ arguments: [String] = ServiceDaemon.immediate, on bus: PrivateBus, startService: Bool = true,
        leakChecking: Bool = false
    ) throws {
        try self.init(arguments, on: bus, address: bus.address, startService: startService, leakChecking: leakChecking)
    }

    /// Runs the service on a bus the test started itself (a system-like bus, a bus at a fixed
    /// path); the caller keeps that bus alive and stops it. `bus` is not available.
    public convenience init(
        _ arguments: [String] = ServiceDaemon.immediate, address: String, startService: Bool = true,
        leakChecking: Bool = false
    ) throws {
        try self.init(arguments, on: nil, address: address, startService: startService, leakChecking: leakChecking)
    }

    private init(
        _ arguments: [String], on bus: PrivateBus?, address: String, startService: Bool, leakChecking: Bool
    ) throws {
        privateBus = bus
        self.address = address
        self.arguments = arguments
        environment = leakChecking ? Sanitizer.leakCheckingEnvironment : [:]
        if startService { try start() }
    }

    deinit {
        for process in instances.withLock({ $0.earlier + $0.replaced + [$0.current].compactMap { $0 } })
        where process.isRunning {
            process.send(signal: SIGTERM)
            _ = try? process.waitForExit(timeout: .seconds(10))
        }
        privateBus?.stop()
    }

    // MARK: - The bus

    /// The private bus the service runs on. Only a daemon made with `init(_:startService:…)`
    /// has one; asking one made with `init(_:address:…)` is a mistake in the test.
    public var bus: PrivateBus {
        guard let privateBus else { preconditionFailure("a ServiceDaemon on a given address has no PrivateBus") }
        return privateBus
    }

    /// A new blocking connection to the bus, for calls to the service and the bus.
    public func probe() throws -> ServiceProbe {
        try ServiceProbe(address: address)
    }

    // MARK: - The running instance

    /// The instance started last. Asking before any `start()` is a mistake in the test.
    public var process: ChildProcess {
        guard let process = instances.withLock({ $0.current }) else { preconditionFailure("netactivityd was never started") }
        return process
    }

    /// Whether an instance was started and is still running.
    public var isRunning: Bool { instances.withLock { $0.current?.isRunning ?? false } }

    /// The unique bus name that owned the service's name when the last instance took it.
    public var owner: String? { instances.withLock { $0.lastOwner } }

    /// The instances a successor replaced with `--replace`, in order.
    public var replaced: [ChildProcess] { instances.withLock { $0.replaced } }

    /// What the last instance printed to stderr so far, for failure messages.
    public var log: String { instances.withLock { $0.current?.stderrText ?? "" } }

    /// The running instance's resident set size (VmRSS) in bytes.
    public func residentBytes() throws -> Int {
        try residentSetSize(of: process.pid)
    }

    // MARK: - Starting and stopping

    /// Starts a new instance, `netactivityd --address <address> <arguments> <extraArguments>`,
    /// and waits until it (not an earlier instance) owns the service's name. An instance still
    /// running is kept as replaced (with `--replace` it exits on its own).
    ///
    /// - Throws: `BusTestError` with the service's stderr if it exits first, or after 30 s.
    public func start(_ extraArguments: [String] = []) throws {
        let process = try ChildProcess(
            try builtProduct("netactivityd"), ["--address", address] + arguments + extraArguments,
            environment: environment)
        let previous = instances.withLock { instances -> String? in
            if let current = instances.current {
                if current.isRunning { instances.replaced.append(current) } else { instances.earlier.append(current) }
            }
            instances.current = process
            return instances.lastOwner
        }
        let probe = try Connection(.address(address))
        var owner: String?
        try waitUntil("netactivityd (pid \(process.pid)) to own \(NetActivityBus.name)", timeout: .seconds(30)) {
            guard process.isRunning else { throw BusTestError("netactivityd exited early: \(process.stderrText)") }
            owner = try probe.owner(of: NetActivityBus.name)?.rawValue
            return owner != nil && owner != previous
        }
        instances.withLock { $0.lastOwner = owner }
    }

    /// Starts a successor with `--replace`, which takes the name over; the instance it replaced
    /// exits on its own and is the last of `replaced`.
    public func replace() throws {
        try start(["--replace"])
    }

    /// Starts a new instance after `stop` or `kill`.
    public func restart() throws {
        try start()
    }

    /// Stops the running instance with `signal`, waits until it has exited and the bus has seen
    /// it go, and returns how it ended. Under AddressSanitizer with `leakChecking` this is also
    /// when LeakSanitizer reports, on stderr and in the exit status.
    ///
    /// - Throws: `BusTestError` if it does not exit within 30 s, if SIGTERM does not end it with
    ///   status 0, or if SIGKILL did not kill it.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) throws -> ProcessResult {
        let process = self.process
        process.send(signal: signal)
        let result = try process.waitForExit(timeout: .seconds(30))
        if signal == SIGTERM, result.exitStatus != 0 {
            throw BusTestError("netactivityd did not exit 0 after SIGTERM: \(result)")
        }
        if signal == SIGKILL, result.signal != SIGKILL {
            throw BusTestError("netactivityd did not die of SIGKILL: \(result)")
        }
        let probe = try Connection(.address(address))
        try waitUntil("the bus to notice that netactivityd (pid \(process.pid)) has gone") {
            try probe.owner(of: NetActivityBus.name) == nil
        }
        return result
    }

    /// SIGKILLs the running instance and waits until the bus has seen it go.
    public func kill() throws {
        try stop(signal: SIGKILL)
    }

    // MARK: - Other programs on the same bus

    /// `netactivity --address <address> <arguments>` run to completion.
    public func netactivity(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> ProcessResult {
        try run(try builtProduct("netactivity"), ["--address", address] + arguments, timeout: timeout)
    }

    /// `netactivity --address <address> <arguments>` started and left running.
    public func startNetactivity(_ arguments: [String], executable: String? = nil) throws -> ChildProcess {
        try ChildProcess(try executable ?? builtProduct("netactivity"), ["--address", address] + arguments)
    }

    /// `busctl --address=<address> <arguments>`.
    public func busctl(_ arguments: [String]) throws -> ProcessResult {
        try run("busctl", ["--address=\(address)"] + arguments)
    }

    /// `busctl call` on the service object.
    public func busctlCall(_ member: String, _ arguments: [String] = []) throws -> ProcessResult {
        try busctl(
            ["call", NetActivityBus.name.rawValue, NetActivityBus.path.rawValue, NetActivityBus.interface.rawValue, member]
                + arguments)
    }

    /// `busctl get-property` of one property of the service, e.g. "u 3".
    public func busctlProperty(_ name: String) throws -> String {
        let result = try busctl(
            ["get-property", NetActivityBus.name.rawValue, NetActivityBus.path.rawValue,
             NetActivityBus.interface.rawValue, name])
        guard result.succeeded else { throw BusTestError("get-property \(name) failed: \(result)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

// MARK: - Sanitizers and processes

/// The sanitizer this test binary, and so every product of the same build, was built with.
public enum Sanitizer {
    public static let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
    public static let thread = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
    public static var any: Bool { address || thread }

    /// Under AddressSanitizer, the inherited `ASAN_OPTIONS` with `detect_leaks=1` added.
    static var leakCheckingEnvironment: [String: String] {
        guard address else { return [:] }
        let inherited = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
        return ["ASAN_OPTIONS": inherited + "detect_leaks=1"]
    }
}
