import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivity
import NetActivityContract
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `states()` follows the activity objects (contract version 2): one signal per change, never
/// the whole list again; a restarted service is read afresh with GetManagedObjects and GetAll.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ClientObjectsTests {
    @Test func statesFollowTheObjectsWithoutReReadingTheList() async throws {
        try requireTool("dbus-monitor")
        let service = try ServiceDaemon()
        let watcher = service.client(ProblemLog())
        let recorder = StateRecorder(watcher)
        try await recorder.wait(for: "the first state") { $0.contains { $0.serviceAvailable } }
        let monitor = try ChildProcess(
            "dbus-monitor",
            ["--address", service.address, "type='method_call',interface='\(InterfaceName.properties)'",
             "type='method_call',interface='\(InterfaceName.objectManager)'", "type='signal',member='NameAcquired'"])
        defer { monitor.send(signal: SIGTERM) }
        try await waitUntil("dbus-monitor to connect") { monitor.stdoutText.contains("NameAcquired") }

        let probe = try service.probe()
        let first = try probe.begin("first")
        let second = try probe.begin("second")
        try probe.call(NetActivityBus.Member.updateActivity, [.uint32(second), .uint64(30), .uint64(60)])
        try await recorder.wait(for: "both activities with the second's progress and its owner's pid") { states in
            guard let last = states.last, last.activities.map(\.id) == [first, second] else { return false }
            return last.activities[1].completed == 30 && last.activities[1].total == 60
                && last.activities[1].processID == UInt32(getpid()) && last.count == 2 && last.active
        }
        try probe.call(NetActivityBus.Member.endActivity, [.uint32(first)])
        try await recorder.wait(for: "the first one gone") { $0.last?.activities.map(\.id) == [second] }
        #expect(recorder.states.allSatisfy { $0.active == ($0.count > 0) }, "active and count agree: \(describe(recorder.states))")

        let calls = monitor.stdoutText.split(separator: "\n").filter { $0.hasPrefix("method call") }
        let fromWatcher = calls.filter { !$0.contains("sender=\(probe.uniqueName) ") }
        #expect(fromWatcher.isEmpty, "the watcher asked nothing while following changes: \(fromWatcher)")
    }

    @Test func aRestartedServiceIsReadAfresh() async throws {
        let service = try ServiceDaemon()
        let watcher = service.client(ProblemLog())
        let recorder = StateRecorder(watcher)
        let probe = try service.probe()
        _ = try probe.begin("before the restart")
        try await recorder.wait(for: "the activity") { $0.last?.activities.map(\.label) == ["before the restart"] }

        try await onThread { try service.stop(signal: SIGKILL) }
        try await recorder.wait(for: "the service gone") { $0.last?.serviceAvailable == false }
        try await onThread { try service.start() }
        let again = try service.probe()
        _ = try again.begin("after the restart")
        try await recorder.wait(for: "the new service's activity only") {
            $0.last?.serviceAvailable == true && $0.last?.activities.map(\.label) == ["after the restart"]
        }
    }
}
