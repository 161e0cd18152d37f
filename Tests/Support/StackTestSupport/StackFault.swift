import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A fault the stack must recover from on its own (a part killed, the bus restarted, the
/// service frozen) with no help but what a desktop gives: D-Bus activation, systemd's restart
/// rule for the bridge and the tray, a user starting the browser again.
public enum StackFault: String, CaseIterable, Sendable {
    case killService = "SIGKILL the service"
    case restartBus = "restart the bus"
    case killBridge = "SIGKILL the bridge"
    case killTray = "SIGKILL the tray"
    case killHost = "SIGKILL the browser host"
    case killBrowser = "SIGKILL the browser (and start it again)"
    case stopService = "SIGSTOP the service 10 s while 200 reports queue"
}

extension Stack {
    /// The label of the raw client's activity while the service is stopped.
    static let queuedLabel = "queued reports"

    /// Brings `fault` about; returns once it is over (the service continued, the browser
    /// started again), with what was done, for the log.
    public func inject(_ fault: StackFault, stopping: Duration = .seconds(10)) throws -> String {
        switch fault {
        case .killService:
            let pid = try serviceProcess()
            kill(pid, SIGKILL)
            try waitUntil("the killed service (pid \(pid)) to go") { hasGone(pid) }
            return "pid \(pid)"
        case .restartBus:
            let old = bus.pid ?? 0
            try bus.restart()
            return "pid \(old) → \(bus.pid ?? 0)"
        case .killBridge:
            return "pid \(try bridge.kill())"
        case .killTray:
            return "pid \(try tray.kill())"
        case .killHost:
            let probe = try ServiceProbe(address: bus.address)
            guard let host = try serviceActivities(probe).first(where: { $0.label == stalled.name })?.processID else {
                throw BusTestError("no download to find the host by")
            }
            let pid = Int32(bitPattern: host)
            kill(pid, SIGKILL)
            try waitUntil("the killed host (pid \(pid)) to go") { hasGone(pid) }
            return "pid \(pid)"
        case .killBrowser:
            let family = try killBrowser()
            return "\(family.count) processes of its own"
        case .stopService:
            return try stopService(for: stopping)
        }
    }

    /// The running service's pid.
    func serviceProcess() throws -> Int32 {
        let probe = try ServiceProbe(address: bus.address)
        _ = try probe.count()
        guard let pid = owner(of: NetActivityBus.name, on: probe) else { throw BusTestError("no service runs") }
        return pid
    }

    /// SIGSTOPs the service for `duration` while 200 reports queue for it: 200 `UpdateActivity`
    /// calls sent at once by a raw client (they wait in the bus), and 200 reports made through
    /// the library on `held`, spread over the stop (the library keeps the last). Then SIGCONT:
    /// every raw call must be answered, and `held` must show the last report.
    private func stopService(for duration: Duration) throws -> String {
        let pid = try serviceProcess()
        let raw = try ServiceProbe(address: bus.address)
        let id = try raw.begin(Self.queuedLabel)
        let clock = ContinuousClock()
        let until = clock.now + duration
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        var serials: [UInt32] = []
        for step in 1...200 {
            serials.append(try raw.send("UpdateActivity", [.uint32(id), .uint64(UInt64(step)), .uint64(200)]))
        }
        raw.connection.flush()
        let base = heldProgress.completed
        for step in 1...200 {
            reportHeld(completed: base + UInt64(step) * 1_000)
            Thread.sleep(forTimeInterval: (duration / 250).seconds)
        }
        let left = until - clock.now
        if left > .zero { Thread.sleep(forTimeInterval: left.seconds) }
        kill(pid, SIGCONT)
        let replies = try raw.replies(to: serials, timeout: .seconds(30))
        let failed = replies.filter { $0.errorName != nil }
        guard failed.isEmpty else { throw BusTestError("\(failed.count) of the queued reports failed: \(failed.first!)") }
        _ = try raw.call("EndActivity", [.uint32(id)])
        return "pid \(pid), 200 queued calls answered"
    }
}
