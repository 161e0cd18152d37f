import BusTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What keeps the stack busy during a soak, driven by `tick()` from the soak's loop, its
/// choices drawn from a seeded generator:
///
/// - a short-lived client every 2 s (`netactivity run --label "client N" -- sleep 0.5–3 s`), a
///   fifth of them SIGKILLed halfway through;
/// - a paced transfer through the traffic source every minute (curl, 3 MB at 600 kB/s, in the
///   client namespace, outside any app scope: shown as `curl`);
/// - a launcher update every 10 s (the libunity app's next step);
/// - a short KDE job every 10 s (`KDEJobApp.move`): a few mebibytes moved in seconds, a fifth
///   of them failing halfway, beside the long copy;
/// - a PackageKit transaction every 30 s (`pkcon refresh force`, dummy backend);
/// - the GNOME Shell indicator's menu opened, read and closed every 10 s, where the shell runs;
/// - the browser's downloads, which its page (`/paced.html`) starts on its own.
///
/// `stop()` lets the running clients finish and waits for them.
public final class StackChurn {
    private let stack: Stack
    private var generator: SeededGenerator
    private let clock = ContinuousClock()
    private var due: [Chore: ContinuousClock.Instant] = [:]
    private var clients: [(process: ChildProcess, killAt: ContinuousClock.Instant?)] = []
    private var transfers: [ChildProcess] = []
    private var transactions: [ChildProcess] = []
    /// The KDE program the short jobs were begun in, and how many: once the last has ended, or
    /// the program was started again, none is left.
    private var moves: (program: ChildProcess?, count: Int) = (nil, 0)
    /// What was done, by kind, for the report.
    public private(set) var counts: [String: Int] = [:]

    private enum Chore: CaseIterable {
        case client, transfer, launcher, kdeJob, transaction, menu

        var every: Duration {
            switch self {
            case .client: .seconds(2)
            case .transfer: .seconds(60)
            case .launcher: .seconds(10)
            case .kdeJob: .seconds(10)
            case .transaction: .seconds(30)
            case .menu: .seconds(10)
            }
        }
    }

    /// The labels the churn's transfers show, for `Stack.transientPrefixes`.
    public static let labelPrefixes = ["client ", "churn-", "curl", KDEJobApp.movePrefix]

    public init(_ stack: Stack, seed: UInt64) {
        self.stack = stack
        generator = SeededGenerator(seed: seed)
        let now = clock.now
        for chore in Chore.allCases { due[chore] = now + chore.every }
    }

    deinit {
        for process in clients.map(\.process) + transfers + transactions { process.send(signal: SIGKILL) }
    }

    /// Does what is due now, and reaps what ended.
    public func tick() throws {
        let now = clock.now
        for chore in Chore.allCases where due[chore, default: now] <= now {
            due[chore] = now + chore.every
            try perform(chore, now: now)
        }
        for client in clients where client.killAt.map({ $0 <= now }) == true && client.process.isRunning {
            // The command too: it is the client's child, and would outlive it.
            let children = descendantsOf(client.process.pid)
            client.process.send(signal: SIGKILL)
            for child in children { kill(child, SIGKILL) }
            counts["clients killed mid-transfer", default: 0] += 1
        }
        clients.removeAll { !$0.process.isRunning }
        transfers.removeAll { !$0.isRunning }
        transactions.removeAll { !$0.isRunning }
    }

    private func perform(_ chore: Chore, now: ContinuousClock.Instant) throws {
        switch chore {
        case .client:
            let number = counts["clients", default: 0] + 1
            let seconds = Double(500 + generator.next() % 2_500) / 1_000
            let process = try ChildProcess(
                try builtProduct("netactivity"),
                ["--address", stack.bus.address, "run", "--label", "client \(number)", "--", "sleep", String(seconds)])
            let killAt = generator.chance(20) ? now + .milliseconds(Int64(seconds * 500)) : nil
            clients.append((process, killAt))
            counts["clients"] = number
        case .transfer:
            let url = PacingServer.url(bytes: 3_000_000, rate: 600_000)
            transfers.append(try ChildProcess(
                "nsenter", stack.network.enter(stack.network.client, ["curl", "-sS", "-o", "/dev/null", url])))
            counts["paced transfers", default: 0] += 1
        case .launcher:
            stack.launcherApp.process.send(signal: SIGUSR1)
            counts["launcher updates", default: 0] += 1
        case .kdeJob:
            let program = stack.kdeJobs.process
            if moves.program !== program { moves = (program, 0) }
            let failing = generator.chance(20)
            KDEJobApp.move(in: program, failing: failing)
            moves.count += 1
            counts["KDE jobs", default: 0] += 1
            if failing { counts["KDE jobs failed halfway", default: 0] += 1 }
        case .menu:
            guard let gnome = stack.gnome else { return }
            _ = try gnome.menuLines()
            counts["GNOME Shell menu opened and closed", default: 0] += 1
        case .transaction:
            guard transactions.isEmpty else { return }
            transactions.append(try stack.packageKit.pkcon(["refresh", "force"]))
            counts["PackageKit transactions", default: 0] += 1
        }
    }

    /// Stops starting anything and waits (up to `timeout`) for what runs to end, the KDE
    /// program's short jobs included.
    public func stop(timeout: Duration = .seconds(30)) throws {
        try waitUntil("the churn's clients, transfers and transactions to end", timeout: timeout) {
            try tick(stopping: true)
            return clients.isEmpty && transfers.isEmpty && transactions.isEmpty && movesEnded
        }
    }

    private var movesEnded: Bool {
        guard let program = moves.program, program === stack.kdeJobs.process, moves.count > 0 else { return true }
        return KDEJobApp.hasEnded(moves.count, in: program)
    }

    private func tick(stopping: Bool) throws {
        due = due.mapValues { _ in clock.now + .seconds(3_600) }
        try tick()
    }
}
