import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// What "every part is back" means, checked as a whole: each part runs and holds its bus name,
/// every live transfer is shown exactly once by the service, both watchers and the tray, with
/// its label, application and bytes, and no activity belongs to a process that is gone.
extension Stack {
    /// Everything not (yet) as it should be; empty once the stack has recovered. Starts again
    /// the parts that ended, as their rules say, and reads on the watchers' output, whose
    /// states that never existed are kept in `watcherProblems` (a recovery does not clear them).
    public func check() -> [String] {
        var problems: [String] = []
        do { try supervise() } catch { problems.append("restarting a part: \(error)") }
        for watcher in watchers { readStates(of: watcher) }
        guard let probe = try? ServiceProbe(address: bus.address) else { return problems + ["the bus is unreachable"] }
        // A call activates the service, as any client's would.
        guard (try? probe.count()) != nil, let service = owner(of: NetActivityBus.name, on: probe) else {
            return problems + ["the service does not answer"]
        }
        noteService(service)
        for part in parts where !part.process.isRunning {
            problems.append("\(part.name) is not running (\(part.endings))")
        }
        for (name, part) in [("io.github.netactivity.Bridge", bridge), ("com.canonical.Unity", bridge),
                             ("org.kde.JobViewServer", bridge), ("org.kde.kuiserver", bridge),
                             ("org.kde.StatusNotifierItem-\(tray.pid)-1", tray)] {
            let pid = owner(of: BusName(unchecked: name), on: probe)
            if pid != part?.pid { problems.append("\(name) is owned by \(pid.map(String.init) ?? "nobody"), not the \(part?.name ?? "") (\(part?.pid ?? 0))") }
        }
        guard let live = try? serviceActivities(probe) else { return problems + ["GetManagedObjects failed"] }
        problems += checkShown(live, by: "the service")
        for activity in live where activity.processID != UInt32.max && hasGone(Int32(bitPattern: activity.processID)) {
            problems.append("\(activity) belongs to a process that is gone")
        }
        if let host = live.first(where: { $0.label == stalled.name })?.processID,
            let browserPID = browser.browser?.pid, !descendantsOf(browserPID).contains(Int32(bitPattern: host))
        {
            problems.append("the download's host (pid \(host)) is not the running browser's (pid \(browserPID))")
        }
        // A served job is the bridge's: one a killed bridge left would be a second copy.
        if let server = live.first(where: { $0.label == KDEJobApp.copyLabel })?.processID, server != UInt32(bitPattern: bridge.pid) {
            problems.append("the KDE job's activity is reported by pid \(server), not the running bridge (pid \(bridge.pid))")
        }
        for watcher in watchers {
            if !watcher.process.isRunning { problems.append("the \(watcher.kind) watcher exited: \(watcher.process.stderrText.suffix(500))") }
            let seen = watcher.last.map(\.label).sorted()
            if seen != live.map(\.label).sorted() { problems.append("the \(watcher.kind) watcher shows \(seen), the service \(live.map(\.label).sorted())") }
            problems += checkShown(watcher.last, by: "the \(watcher.kind) watcher")
        }
        problems += checkTray(probe, expecting: live.map(\.label))
        if let gnome {
            problems += checkGnomeShell(gnome, expecting: live.map(\.label))
        }
        return problems
    }

    /// Polls `check()` until it finds nothing wrong; returns how long that took.
    ///
    /// - Throws: `BusTestError` with what was still wrong after `timeout`, and the parts' logs.
    @discardableResult
    public func waitUntilRecovered(timeout: Duration) throws -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        var problems: [String] = []
        do {
            try waitUntil("the stack to recover; still: \(problems.joined(separator: "; "))", timeout: timeout) {
                problems = check()
                return problems.isEmpty
            }
        } catch {
            throw BusTestError("\(error)\n\(diagnostics)")
        }
        return clock.now - start
    }

    // MARK: - What each view must show

    /// The transfers that are live now, each exactly once with its application and bytes.
    private func checkShown(_ activities: [ShownActivity], by viewer: String) -> [String] {
        var problems: [String] = []
        func one(_ label: String, _ what: String, _ condition: (ShownActivity) -> Bool) {
            let matching = activities.filter { $0.label == label }
            if matching.count != 1 {
                problems.append("\(viewer) shows '\(label)' \(matching.count) times")
            } else if !condition(matching[0]) {
                problems.append("\(viewer) shows \(matching[0]), not \(what)")
            }
        }
        one("held", "\(heldProgress.completed)/\(heldProgress.total)") {
            $0.completed == heldProgress.completed && $0.total == heldProgress.total
        }
        one(Self.fetcher.name, "claimed by \(Self.fetcher.id), bytes moving") {
            $0.claimedApplication == Self.fetcher.id && $0.completed > 0
        }
        one(Self.downloader.name, "claimed by \(Self.downloader.id) at 0.25") {
            $0.claimedApplication == Self.downloader.id && abs($0.fraction - 0.25) < 0.001
        }
        one(Self.shellCommand, "a command of the shell") { _ in true }
        one(stalled.name, "claimed by chromium at 256 KiB of 8 MiB") {
            $0.claimedApplication == "chromium" && $0.completed == 256 << 10 && $0.total == 8 << 20
        }
        // Its title and total are sent once, at the start: after the bridge came back they are
        // there only if the job asked for a new view and sent its whole state again.
        one(KDEJobApp.copyLabel, "claimed by \(Self.copier.id), bytes moving of \(KDEJobApp.copyTotal)") {
            $0.claimedApplication == Self.copier.id && $0.completed > 0 && $0.total == KDEJobApp.copyTotal
        }
        for activity in activities where !steadyLabels.contains(activity.label) && !isTransient(activity.label) {
            problems.append("\(viewer) shows \(activity), which is no live transfer")
        }
        return problems
    }

    /// Labels of the transfers that last as long as the stack.
    private var steadyLabels: Set<String> {
        ["held", Self.fetcher.name, Self.downloader.name, Self.shellCommand, stalled.name, KDEJobApp.copyLabel]
    }

    /// Labels of the transfers that come and go while the stack runs: PackageKit's, the raw
    /// client's of the stop fault, and the soak's short-lived ones.
    private func isTransient(_ label: String) -> Bool {
        Self.packageKitLabels.contains(label) || label == Self.queuedLabel || transientPrefixes.contains { label.hasPrefix($0) }
    }

    /// Reads on `watcher`'s output, keeping what it showed that never existed in
    /// `watcherProblems` and the short KDE jobs it showed in `shownMoves`.
    private func readStates(of watcher: StackWatcher) {
        watcherProblems += watcher.read(checking: { state in
            for activity in state where activity.label.hasPrefix(KDEJobApp.movePrefix) {
                self.shownMoves[watcher.kind, default: []].insert(activity.label)
            }
            return self.neverExisted(state)
        }).prefix(5)
    }

    /// What is wrong with a state a watcher showed, if it could never have existed: a label no
    /// one began, a transfer shown twice, bytes no one reported.
    func neverExisted(_ state: [ShownActivity]) -> String? {
        let labels = state.map(\.label)
        if Set(labels).count != labels.count { return "a transfer shown twice" }
        if let stranger = labels.first(where: { !steadyLabels.contains($0) && !isTransient($0) }) { return "'\(stranger)', which no one began" }
        // Between a (re-)begin and its first report, an activity is at 0/0: that state exists.
        if let held = state.first(where: { $0.label == "held" }), held.total != 0 || held.completed != 0,
            held.total != heldProgress.total || !heldReports.contains(held.completed)
        {
            return "held at \(held.completed)/\(held.total), never reported"
        }
        if let download = state.first(where: { $0.label == stalled.name }), download.completed > 256 << 10 {
            return "the download past the 256 KiB the server sent"
        }
        if let copy = state.first(where: { $0.label == KDEJobApp.copyLabel }),
            (copy.total != 0 && copy.total != KDEJobApp.copyTotal) || !copy.completed.isMultiple(of: KDEJobApp.step)
        {
            return "the KDE job at \(copy.completed)/\(copy.total), never reported"
        }
        if let bad = state.first(where: { $0.total > 0 && $0.completed > $0.total }) { return "\(bad) past its total" }
        return nil
    }

    /// The tray's tooltip lists each live transfer once.
    private func checkTray(_ probe: ServiceProbe, expecting labels: [String]) -> [String] {
        let message = try? Message.methodCall(
            destination: BusName(unchecked: "org.kde.StatusNotifierItem-\(tray.pid)-1"), path: "/StatusNotifierItem",
            interface: .properties, member: "Get", arguments: [.string("org.kde.StatusNotifierItem"), .string("ToolTip")])
        guard let message, let reply = try? probe.connection.call(message, timeout: .seconds(5)).arguments(),
            case .variant(.structure(let fields))? = reply.first, fields.count == 4, case .string(let text) = fields[3]
        else { return ["the tray's ToolTip cannot be read"] }
        var problems: [String] = []
        for label in labels {
            // A line is "APPLICATION — LABEL — PROGRESS"; the application may be the label too.
            let times = text.split(separator: "\n").filter { $0.components(separatedBy: " — ").contains(label) }.count
            if times != 1 { problems.append("the tray's tooltip names '\(label)' \(times) times: \(text)") }
        }
        return problems
    }

    /// The GNOME Shell indicator's menu lists each live transfer once.
    private func checkGnomeShell(_ gnome: GnomeShell, expecting labels: [String]) -> [String] {
        guard let lines = try? gnome.menuLines() else { return ["GNOME Shell's menu cannot be read"] }
        return labels.compactMap { label in
            let times = lines.filter { $0.contains(label) }.count
            return times == 1 ? nil : "GNOME Shell's menu names '\(label)' \(times) times: \(lines)"
        }
    }

    // MARK: - Reading the bus

    func owner(of name: BusName, on probe: ServiceProbe) -> Int32? {
        guard let owner = try? probe.connection.owner(of: name), let pid = try? probe.connection.processID(of: owner) else {
            return nil
        }
        return Int32(bitPattern: pid)
    }

    /// Every live activity object, from `GetManagedObjects`.
    public func serviceActivities(_ probe: ServiceProbe) throws -> [ShownActivity] {
        let reply = try probe.call("GetManagedObjects", interface: .objectManager)
        return (reply.first?.elements ?? []).compactMap { object in
            guard case .dictEntry(_, let interfaces) = object,
                let properties = interfaces.stringKeyedEntries?[NetActivityBus.activityInterface.rawValue]?
                    .stringKeyedEntries?.compactMapValues(\.unwrapped)
            else { return nil }
            return ShownActivity(
                label: properties["Label"]?.string ?? "", processID: properties["ProcessID"]?.uint32 ?? UInt32.max,
                application: properties["Application"]?.string ?? "",
                claimedApplication: properties["ClaimedApplication"]?.string ?? "",
                completed: properties["Completed"]?.uint64 ?? 0, total: properties["Total"]?.uint64 ?? 0,
                fraction: properties["Fraction"]?.double ?? -1)
        }
    }
}

extension Stack {
    /// Reads on the watchers' output, keeping what they showed that never existed in
    /// `watcherProblems`, and starts again the parts that ended: the part of `check()` a soak
    /// runs every second, without its calls to the bus.
    public func readWatchers() throws {
        try supervise()
        for watcher in watchers { readStates(of: watcher) }
    }

    /// The bus's descriptors less one for each connection, whether it has said Hello or is
    /// still authenticating (the bus's own statistics count both). The churn's clients come and
    /// go while this counts, so the descriptors are counted before and after the statistics and
    /// the count is taken once the two agree.
    private func busDescriptors(_ pid: Int32, _ probe: ServiceProbe) throws -> Int {
        var descriptors = 0
        for _ in 0..<50 {
            let before = StackSampler.descriptors(of: pid)
            let statistics = try probe.connection.call(
                Message.methodCall(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus.Debug.Stats", member: "GetStats")
            ).arguments().first?.stringKeyedEntries ?? [:]
            let connections = ["ActiveConnections", "IncompleteConnections"].reduce(0) { sum, key in
                sum + Int(statistics[key]?.unwrapped?.uint32 ?? 0)
            }
            let after = StackSampler.descriptors(of: pid)
            descriptors = after - connections
            if before == after { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return descriptors
    }

    /// The long-lived parts' processes now, for sampling: the service, the bus (less one
    /// descriptor for each connection it has), the bridge, the tray, the browser host, the
    /// shell's helper, the JSON watcher and GNOME Shell.
    public func longLivedProcesses() throws -> [StackSampler.Part] {
        let probe = try ServiceProbe(address: bus.address)
        var processes = [StackSampler.Part("netactivityd", try serviceProcess())]
        if let pid = bus.pid {
            processes.append(StackSampler.Part("dbus-daemon", pid, descriptors: try busDescriptors(pid, probe)))
        }
        processes += [StackSampler.Part("bridge", bridge.pid), StackSampler.Part("tray", tray.pid)]
        if let host = try serviceActivities(probe).first(where: { $0.label == stalled.name })?.processID {
            processes.append(StackSampler.Part("browser host", Int32(bitPattern: host)))
        }
        // The shell starts its helper in the background, and the helper leaves its process tree.
        let helperCommand = "shell-helper\0--shell-pid\0\(shell.pid)\0"
        if let helper = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).first(where: { pid in
            ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains(helperCommand)
        }) {
            processes.append(StackSampler.Part("shell helper", helper))
        }
        if let watch = watchers.first(where: { $0.kind == .json }) {
            processes.append(StackSampler.Part("watch --format json", watch.process.pid))
        }
        if let gnomeShell { processes.append(StackSampler.Part("gnome-shell", gnomeShell.pid)) }
        return processes
    }
}
