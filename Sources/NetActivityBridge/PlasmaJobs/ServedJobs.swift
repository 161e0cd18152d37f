import DBus
import DesktopApplications
import NetActivity
import NetActivityContract

/// The jobs KDE programs registered with the bridge's job server, each an object with both
/// view interfaces and an activity. See docs/bridges.md, "Plasma's job list".
///
/// A job's activity begins once it has a name (its title or info message) and its caller's
/// process has been asked for: the label never changes after that. It ends on `terminate`,
/// when the caller leaves the bus, and when the server's names go to another owner
/// (`removeAll()`). Bounded whatever callers do: `jobsPerCaller` and `jobLimit` live jobs
/// (`LimitsExceeded` past them), texts as `JobChange` bounds them. Confined to the bridge's
/// loop thread.
final class ServedJobs {
    /// Live jobs one connection may hold: a file manager copying many files at once holds a
    /// handful; a flood holds no more than this.
    static let jobsPerCaller = 64
    /// Live jobs in all: the service takes `activitiesPerOwner` from the client reporting them.
    static let jobLimit = NetActivityBus.Limits.activitiesPerOwner - 24
    /// Where job objects live: `/io/github/netactivity/Bridge/jobs/N`.
    static let jobsPath: ObjectPath = "/io/github/netactivity/Bridge/jobs"

    private final class Job {
        let path: ObjectPath
        let caller: BusName
        let claimed: String
        let icon: String?
        let displayName: String?
        var state = ServedJobState()
        var activity: Activity?
        var reported: ServedJobState.Progress?

        init(path: ObjectPath, caller: BusName, claimed: String, icon: String?, displayName: String?) {
            self.path = path
            self.caller = caller
            self.claimed = claimed
            self.icon = icon
            self.displayName = displayName
        }
    }

    /// What is known of a caller's process: asked once per connection.
    private enum Process {
        case asking
        case known(UInt32?)
    }

    private let server: ObjectServer
    private let client: NetActivityClient
    private let processes: Processes
    private var jobs: [ObjectPath: Job] = [:]
    private var byCaller: [BusName: Set<ObjectPath>] = [:]
    private var callers: [BusName: Process] = [:]
    private var nextNumber: UInt64 = 1

    init(server: ObjectServer, client: NetActivityClient, processes: Processes) {
        self.server = server
        self.processes = processes
        self.client = client
    }

    var count: Int { jobs.count }

    // MARK: - The server's methods

    /// A new job for `caller`: its object's path.
    ///
    /// - Throws: `LimitsExceeded` past `jobsPerCaller` or `jobLimit`; `InvalidArgs` for hints
    ///   `JobChange` refuses.
    func request(
        from sender: String, desktopEntry: String, icon: String?, hints: VariantDictionary?
    ) throws(BusError) -> ObjectPath {
        guard let caller = BusName(validating: sender), caller.isUnique else {
            throw BusError(.accessDenied, "a job view is only for a connection to the bus")
        }
        guard (byCaller[caller]?.count ?? 0) < Self.jobsPerCaller else {
            throw BusError(.limitsExceeded, "at most \(Self.jobsPerCaller) jobs per connection")
        }
        guard jobs.count < Self.jobLimit else {
            throw BusError(.limitsExceeded, "at most \(Self.jobLimit) jobs at once")
        }
        var changes: [JobChange] = []
        var displayName: String?
        var hintedIcon = icon
        if let hints {
            changes = try Self.taken { () throws(JobChange.Refused) in try JobChange.version3(hints) }
            let entries = hints.value.stringKeyedEntries ?? [:]
            displayName = Self.shortText(entries["application-display-name"])
            hintedIcon = Self.shortText(entries["application-icon-name"]) ?? hintedIcon
        }
        guard desktopEntry.utf8.count <= JobChange.maximumTextBytes else {
            throw BusError(.invalidArgs, "a desktop entry of \(desktopEntry.utf8.count) bytes")
        }
        let path = ObjectPath(unchecked: "\(Self.jobsPath.rawValue)/\(nextNumber)")
        nextNumber += 1
        let job = Job(path: path, caller: caller, claimed: desktopEntry, icon: hintedIcon, displayName: displayName)
        job.state.apply(changes)
        jobs[path] = job
        byCaller[caller, default: []].insert(path)
        server.export(makeInterfaces(path), at: path)
        if callers[caller] == nil { ask(caller) }
        settle(job)
        return path
    }

    /// Applies what a call on the job at `path` changes.
    ///
    /// - Throws: `AccessDenied` for a caller other than the job's; `InvalidArgs` for what
    ///   `JobChange` refuses.
    func change(_ path: ObjectPath, from sender: String, _ read: () throws(JobChange.Refused) -> [JobChange]) throws(BusError) {
        guard let job = jobs[path] else { throw BusError(.unknownObject, "no job at \(path)") }
        guard job.caller.rawValue == sender else {
            throw BusError(.accessDenied, "only the connection that asked for this job changes it")
        }
        job.state.apply(try Self.taken(read))
        settle(job)
    }

    /// The caller left the bus: its jobs end.
    func callerLeft(_ name: BusName) {
        callers[name] = nil
        guard let paths = byCaller.removeValue(forKey: name) else { return }
        for path in paths { remove(path) }
    }

    /// Ends every job: the bridge stops, or another took the server's names.
    func removeAll() {
        for path in Array(jobs.keys) { remove(path) }
        byCaller.removeAll()
        callers.removeAll()
    }

    // MARK: - Activities

    private func settle(_ job: Job) {
        if job.state.terminated {
            remove(job.path)
            return
        }
        if job.activity == nil {
            guard case .known(let pid) = callers[job.caller], job.state.isNamed || job.state.progress != nil else { return }
            let application = JobCaller.application(claimed: job.claimed, pid: pid, processes: processes)
            let label = job.state.isNamed ? job.state.label : (job.displayName ?? application.flatMap(processes.entries.name(of:)) ?? "Job")
            let hints = ActivityHints(application: application, icon: job.icon.flatMap(Self.fittingHint), kind: .other)
            job.activity = client.begin(NetActivityClient.fitted(label), hints: hints)
        }
        guard let activity = job.activity, let progress = job.state.progress, progress != job.reported else { return }
        job.reported = progress
        switch progress {
        case .bytes(let completed, let total): activity.report(completed: completed, total: total)
        case .fraction(let fraction): activity.report(fraction: fraction)
        }
    }

    private func remove(_ path: ObjectPath) {
        guard let job = jobs.removeValue(forKey: path) else { return }
        job.activity?.end()
        server.unexport(path)
        if var paths = byCaller[job.caller] {
            paths.remove(path)
            byCaller[job.caller] = paths.isEmpty ? nil : paths
        }
    }

    /// Asks the bus for `caller`'s process, without waiting; its jobs begin with the answer.
    private func ask(_ caller: BusName) {
        callers[caller] = .asking
        server.connection.callBus(BusDriver.getConnectionUnixProcessID, caller.rawValue) { [weak self] result in
            guard let self, case .asking = self.callers[caller] else { return }
            self.callers[caller] = .known(try? result.get())
            for path in self.byCaller[caller] ?? [] {
                if let job = self.jobs[path] { self.settle(job) }
            }
        }
    }

    // MARK: - The job's object

    private func makeInterfaces(_ path: ObjectPath) -> [Interface] {
        typealias Views = JobViewInterfaces
        func setter<each Input>(_ method: MethodDescriptor<NoReply, repeat each Input>) -> Method {
            method.bind { [unowned self] call throws(BusError) in
                let arguments = call.arguments
                try change(path, from: call.sender) { () throws(JobChange.Refused) in
                    try JobChange.version2(method.name.rawValue, arguments)
                }
                return NoReply()
            }
        }
        let v2 = Views.viewV2.bind(
            methods: [
                setter(Views.terminate), setter(Views.setSuspended), setter(Views.setTotalAmount),
                setter(Views.setProcessedAmount), setter(Views.setPercent), setter(Views.setSpeed),
                setter(Views.setInfoMessage),
                Views.setDescriptionField.bind { [unowned self] call throws(BusError) in
                    let arguments = call.arguments
                    var taken = false
                    try change(path, from: call.sender) { () throws(JobChange.Refused) in
                        let changes = try JobChange.version2("setDescriptionField", arguments)
                        taken = !changes.isEmpty
                        return changes
                    }
                    return taken
                },
                setter(Views.clearDescriptionField), setter(Views.setDestUrl), setter(Views.setError),
            ],
            properties: [])
        let v3 = Views.viewV3.bind(
            methods: [
                Views.terminateV3.bind { [unowned self] call throws(BusError) in
                    guard let (code, message, _) = try? Views.terminateV3.decode(call.arguments) else { return NoReply() }
                    try change(path, from: call.sender) { () throws(JobChange.Refused) in
                        try JobChange.version3Terminate(code, message)
                    }
                    return NoReply()
                },
                Views.update.bind { [unowned self] call throws(BusError) in
                    guard let properties = try? Views.update.decode(call.arguments) else { return NoReply() }
                    try change(path, from: call.sender) { () throws(JobChange.Refused) in try JobChange.version3(properties) }
                    return NoReply()
                },
            ],
            properties: [])
        return [v2, v3]
    }

    // MARK: - Bounds

    private static func taken(_ read: () throws(JobChange.Refused) -> [JobChange]) throws(BusError) -> [JobChange] {
        do {
            return try read()
        } catch {
            throw BusError(.invalidArgs, error.message)
        }
    }

    /// A hint's text when it is a string of a sensible length; a longer one is left out.
    private static func shortText(_ value: Value?) -> String? {
        guard case .variant(.string(let text)) = value, !text.isEmpty, text.utf8.count <= NetActivityBus.Hint.maximumBytes else {
            return nil
        }
        return text
    }

    private static func fittingHint(_ text: String) -> String? {
        text.isEmpty || text.utf8.count > NetActivityBus.Hint.maximumBytes ? nil : text
    }
}
