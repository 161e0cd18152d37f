import BusTestSupport
import DBus
import Foundation
import NetActivityTray
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the ring costs the tray process: nothing at all while nothing changes, and the CPU
/// time of following a download that reports progress continuously.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct TrayCostTests {
    /// An idle tray (registered with a watcher, the service idle, nothing changing) makes no
    /// context switch at all: no thread of its own and no libdispatch pool, whose monitor
    /// would wake every second, since the tray runs on event loops and callbacks only.
    @Test func anIdleTrayWakesNothing() throws {
        let bus = try TrayOnBus()
        let watcher = try bus.startWatcher()
        let tray = try bus.startTray()
        try watcher.waitForRegistrations(1)
        let item = try bus.observeItem()
        try item.wait(for: "Status Passive") { try $0.string("Status") == "Passive" }
        // Let stragglers (the grace for the first state, the clients' first reads) settle first.
        _ = item.takeSignals(settle: .milliseconds(700))
        let woken = try wakeUps(of: tray.pid, over: 3)
        #expect(woken.isEmpty, "an idle tray woke in 3 s: \(woken)")
    }

    /// A drawn ring whose percent stays put: none of the tray's threads is woken.
    @Test func aSteadyRingWakesNothing() throws {
        let bus = try TrayOnBus()
        let tray = try bus.startTray()
        let item = try bus.observeItem()
        let download = try bus.begin("Download")
        try bus.callService("UpdateActivity", [.uint32(download), .uint64(40), .uint64(100)])
        try item.wait(for: "the ring at 40%") { try $0.pixmaps() == ProgressRing.pixmaps(percent: 40) }
        // Let stragglers (a held drawing, the client's follow-up reads) settle first.
        _ = item.takeSignals(settle: .milliseconds(500))
        let woken = try wakeUps(of: tray.pid, over: 2)
        #expect(woken.isEmpty, "woken in 2 s of steady progress: \(woken)")
    }

    /// Opt-in benchmark (`NETACTIVITY_TRAY_BENCH=1`): for `NETACTIVITY_TRAY_BENCH_SECONDS`
    /// (default 10) a download reports progress about 190 times a second, with the service's
    /// default 50 ms throttle, while the test reads `IconPixmap` after every `NewIcon` as a host
    /// does. Three runs: the percent growing 10 a second (faster than the four drawings a second
    /// allowed: the worst case), 1 a second (a 100-second download), and 10 a second with
    /// `--no-progress-ring`. `NETACTIVITY_TRAY_BENCH_BINARY` names the `netactivity` to measure
    /// (a release build: `swift build -c release --product netactivity`). Prints the tray's CPU
    /// time as a share of one core; asserts nothing about it, so a busy machine cannot fail it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["NETACTIVITY_TRAY_BENCH"] == "1"))
    func cpuWhileADownloadReportsProgress() throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = Double(environment["NETACTIVITY_TRAY_BENCH_SECONDS"] ?? "") ?? 10
        let executable = environment["NETACTIVITY_TRAY_BENCH_BINARY"]
        for (percentPerSecond, arguments) in [(10.0, []), (1.0, []), (10.0, ["--no-progress-ring"])] {
            let bus = try TrayOnBus(serviceArguments: ["--activation-delay", "0.2", "--completion-delay", "0.1"])
            let tray = try bus.startTray(arguments, executable: executable)
            let item = try bus.observeItem()
            let download = try bus.begin("Download")
            let total: UInt64 = 1 << 30
            try bus.callService("UpdateActivity", [.uint32(download), .uint64(0), .uint64(total)])
            try item.wait(for: "Status Active") { try $0.string("Status") == "Active" }
            _ = item.takeSignals(settle: .milliseconds(300))

            let clock = ContinuousClock()
            let startCPU = try cpuSeconds(of: tray.pid)
            let started = clock.now
            var updates = 0
            var drawings = 0
            while true {
                let elapsed = (clock.now - started) / .seconds(1)
                guard elapsed < seconds else { break }
                // Past 100 % it starts over, so the percent keeps changing for the whole window.
                let share = (elapsed * percentPerSecond / 100).truncatingRemainder(dividingBy: 1)
                let completed = UInt64(Double(total) * share)
                try bus.callService("UpdateActivity", [.uint32(download), .uint64(completed), .uint64(total)])
                updates += 1
                // As a host does: read the pixmaps again after each NewIcon. Listening for it is
                // also the pause between updates.
                let newIcons = occurrences(of: "NewIcon", in: item.takeSignals(settle: .milliseconds(5)))
                if newIcons > 0 {
                    drawings += newIcons
                    _ = try item.pixmaps()
                }
            }
            let wall = (clock.now - started) / .seconds(1)
            let cpu = try cpuSeconds(of: tray.pid) - startCPU
            print(
                "tray \(arguments.first ?? "with the ring") (\(executable ?? "debug build")), "
                    + "\(Int(percentPerSecond)) percent a second: "
                    + "\(String(format: "%.2f", cpu / wall * 100))% of a core "
                    + "(\(String(format: "%.2f", cpu)) s CPU in \(String(format: "%.1f", wall)) s; \(updates) updates, "
                    + "\(String(format: "%.0f", Double(updates) / wall))/s; \(drawings) NewIcon)")
        }
    }

    /// CPU time of every thread of `pid`, in seconds.
    private func cpuSeconds(of pid: Int32) throws -> Double {
        Double(ProcessStatistics.sample(pid).cpuNanoseconds) / 1e9
    }
}
