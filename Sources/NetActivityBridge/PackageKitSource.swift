import DBus
import DesktopApplications
import NetActivity

/// PackageKit's transactions on the system bus (GNOME Software, KDE Discover, `pkcon`): each
/// one is an activity while it refreshes package lists or downloads (see docs/bridges.md).
///
/// Read-only and unprivileged: it calls only `GetTransactionList`, `Properties.GetAll` and the
/// bus's `GetConnectionUnixProcessID`, which PackageKit's bus policy and the bus let every user
/// call and which never ask polkit, and listens to the signals PackageKit broadcasts to every
/// session. Runs on the bridge's loop, woken only by those signals and their replies.
///
/// Everything PackageKit sends is checked: signals count only from the connection that owns
/// `org.freedesktop.PackageKit` now, properties only with their documented types and sane
/// values, and at most `transactionLimit` transactions are followed at once.
final class PackageKitSource: BridgeSource {
    private let context: BridgeContext
    private var attached: AttachedConnection?
    private var connection: Connection? { attached?.connection }
    /// packagekitd's unique name while it is on the bus.
    private var daemon: BusName?
    /// Who owns PackageKit's name, as the bus says it.
    private var daemonFollower: NameOwnerFollower?
    /// Bumped whenever `daemon` changes, so replies meant for an earlier daemon are dropped.
    private var generation = 0
    private var transactions: [ObjectPath: Followed] = [:]
    private var saidTooMany = false

    typealias PackageKit = PackageKitInterface
    /// PackageKit runs one transaction at a time and queues a few: more than this at once is
    /// no package manager but a flood.
    static let transactionLimit = 64
    static let callTimeout: Duration = .seconds(10)

    /// One transaction followed: what its properties say, and the activity shown for it.
    private struct Followed {
        var state = PackageKitTransaction()
        /// `GetAll` answered (or failed): until then its state is partial.
        var loaded = false
        /// Seen in the transaction list: leaving it again means it finished.
        var listed = false
        var finished = false
        var program: Program = .notAsked
        var activity: Activity?
        var reported: PackageKitTransaction.Progress = .unknown
    }

    /// The program behind the transaction's `Sender`, looked up once.
    private enum Program {
        case notAsked, asking
        case known(String?)
    }

    init(_ context: BridgeContext) {
        self.context = context
    }

    // MARK: - Starting and stopping

    func start() throws(BusError) {
        let connection = try Connection(context.systemBus)
        attached = AttachedConnection(connection, on: context.loop) { [weak self] message in
            self?.handle(message)
            return false
        }
        do {
            try connection.addMatch(PackageKit.transactionListChanged.matchRule(sender: PackageKit.name, path: PackageKit.path))
            try connection.addMatch(
                PropertiesInterface.propertiesChanged.matchRule(
                    sender: PackageKit.name, arguments: [0: PackageKit.transactionInterface.rawValue]))
            try connection.addMatch(PackageKit.finished.matchRule(sender: PackageKit.name))
            try connection.addMatch(PackageKit.destroy.matchRule(sender: PackageKit.name))
        } catch {
            stop()
            throw error
        }
        // Absent is no error: the follower says when it comes (D-Bus activation starts it for
        // the first client that calls, never for a watcher).
        do {
            daemonFollower = try NameOwnerFollower(PackageKit.name, on: connection) { [weak self] in self?.daemonIs($0) }
        } catch {
            stop()
            throw error
        }
    }

    func stop() {
        endAll()
        transactions.removeAll()
        attached?.close()
        attached = nil
        daemonFollower = nil
        daemon = nil
    }

    // MARK: - Signals

    private func handle(_ message: Message) {
        if message.isSignal(.local, "Disconnected") {
            context.problems("lost the system bus; PackageKit is no longer followed")
            endAll()
            transactions.removeAll()
            daemon = nil
            // Not while libdbus dispatches this very connection's message.
            _ = context.loop.schedule(after: .zero) { [weak self] in self?.stop() }
            return
        }
        if daemonFollower?.handle(message) == true { return }
        guard let daemon, message.sender == daemon, let path = message.path else { return }
        switch PackageKitSignal(message) {
        case .transactionList(let list):
            guard path == PackageKit.path else { return }
            transactionList(list)
        case .propertiesChanged(let changed):
            guard follow(path) else { return }
            transactions[path]?.state.apply(changed)
            update(path)
        case .finished:
            guard transactions[path] != nil else { return }
            transactions[path]?.finished = true
            end(path)
        case .destroy:
            end(path)
            transactions[path] = nil
        case nil:
            return
        }
    }

    // MARK: - The daemon

    /// packagekitd is now `owner` (nil: gone). A new one starts with none of the old one's
    /// transactions: their activities end.
    private func daemonIs(_ owner: BusName?) {
        guard owner != daemon else { return }
        endAll()
        transactions.removeAll()
        daemon = owner
        generation += 1
        guard let owner else { return }
        let generation = generation
        connection?.call(PackageKit.getTransactionList, destination: owner, path: PackageKit.path, timeout: Self.callTimeout) {
            [weak self] result in
            guard let self, generation == self.generation, case .success(let list) = result else { return }
            transactionList(list)
        }
    }

    /// The transactions PackageKit runs or queues now. One listed before and missing now has
    /// finished (its `Destroy` comes seconds later). One not listed yet is left alone: a new
    /// transaction's first `PropertiesChanged` comes before the list that names it.
    private func transactionList(_ paths: [ObjectPath]) {
        let listed = Set(paths.prefix(Self.transactionLimit))
        for (path, followed) in transactions where followed.listed && !listed.contains(path) {
            transactions[path]?.finished = true
            end(path)
        }
        for path in listed where follow(path) {
            transactions[path]?.listed = true
        }
    }

    // MARK: - Transactions

    /// Makes sure `path` is followed, asking for all its properties the first time. False when
    /// it cannot be (too many at once).
    private func follow(_ path: ObjectPath) -> Bool {
        guard transactions[path] == nil else { return true }
        guard let daemon else { return false }
        if transactions.count >= Self.transactionLimit {
            // Finished ones only wait for their Destroy: the first to make room.
            guard let done = transactions.first(where: { $0.value.finished })?.key else {
                if !saidTooMany {
                    saidTooMany = true
                    context.problems(
                        "more than \(Self.transactionLimit) PackageKit transactions at once; following the first ones")
                }
                return false
            }
            transactions[done] = nil
        }
        transactions[path] = Followed()
        let generation = generation
        connection?.call(
            PropertiesInterface.getAll, PackageKit.transactionInterface.rawValue, destination: daemon, path: path,
            timeout: Self.callTimeout
        ) { [weak self] result in
            guard let self, generation == self.generation, transactions[path] != nil else { return }
            // Newer than every signal before it, older than every one after: applied as it comes.
            if case .success(let reply) = result, let properties = reply.value.stringKeyedEntries {
                transactions[path]?.state.apply(properties)
            }
            transactions[path]?.loaded = true
            update(path)
        }
        return true
    }

    /// Brings the activity of `path` in line with what its transaction does now: begun when it
    /// enters a network state, its progress reported, ended when it leaves.
    private func update(_ path: ObjectPath) {
        if case .notAsked = transactions[path]?.program, let sender = transactions[path]?.state.sender {
            transactions[path]?.program = .asking
            askProgram(of: sender, for: path)
        }
        guard var followed = transactions[path] else { return }
        if followed.finished || !followed.state.isDownloading {
            followed.activity?.end()
            followed.activity = nil
            followed.reported = .unknown
            transactions[path] = followed
            return
        }
        defer { transactions[path] = followed }
        if followed.activity == nil {
            // The label and the application go in with the begin: wait for both.
            guard followed.loaded else { return }
            if case .asking = followed.program { return }
            let work = followed.state.work
            var application: String?
            if case .known(let program?) = followed.program {
                application = context.processes.entries.application(forProgram: program)
            }
            followed.activity = context.client.begin(
                work.label, hints: ActivityHints(application: application, kind: work.kind))
        }
        let progress = followed.state.progress
        if progress != followed.reported, let activity = followed.activity {
            switch progress {
            case .bytes(let completed, let total): activity.report(completed: completed, total: total)
            case .fraction(let fraction): activity.report(fraction: fraction)
            case .unknown: break
            }
            followed.reported = progress
        }
    }

    /// Learns which program asked for the transaction, while it is still on the bus.
    private func askProgram(of sender: BusName, for path: ObjectPath) {
        let generation = generation
        connection?.callBus(BusDriver.getConnectionUnixProcessID, sender.rawValue) { [weak self] result in
            guard let self, generation == self.generation, transactions[path] != nil else { return }
            var program: String?
            if case .success(let pid) = result { program = context.processes.programName(ofProcess: pid) }
            transactions[path]?.program = .known(program)
            update(path)
        }
    }

    private func end(_ path: ObjectPath) {
        transactions[path]?.activity?.end()
        transactions[path]?.activity = nil
        transactions[path]?.reported = .unknown
    }

    private func endAll() {
        for path in transactions.keys { end(path) }
    }

}
