import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import NetActivityTray

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Bus, service and tray

/// The service on a private bus (a `ServiceDaemon`) and, once started, the built
/// `netactivity --address <bus> tray`. Everything is stopped when released.
final class TrayOnBus: @unchecked Sendable {
    /// Every change announced at once; the debounce short enough for quick tests.
    static let quick = ["--throttle-ms", "0", "--activation-delay", "0.2", "--completion-delay", "0.1"]

    let service: ServiceDaemon
    private(set) var tray: ChildProcess?
    /// A plain connection for calls to the service and the bus.
    let probe: ServiceProbe

    /// Starts `netactivityd` with `serviceArguments` on `bus` (a fresh private bus by default).
    init(serviceArguments: [String] = TrayOnBus.quick, startService: Bool = true, bus: PrivateBus? = nil) throws {
        service = try ServiceDaemon(serviceArguments, on: try bus ?? PrivateBus(), startService: startService)
        probe = try service.probe()
    }

    deinit {
        if let tray, tray.isRunning {
            tray.send(signal: SIGTERM)
            _ = try? tray.waitForExit(timeout: .seconds(10))
        }
    }

    var address: String { service.address }

    /// The private bus everything runs on.
    var bus: PrivateBus { service.bus }

    // MARK: The service

    func startService() throws {
        try service.start()
    }

    func stopService() throws {
        try service.stop()
    }

    /// Calls a method of the service from `probe`.
    @discardableResult
    func callService(_ member: MemberName, _ arguments: [Value] = []) throws -> [Value] {
        try probe.call(member, arguments, timeout: .seconds(10))
    }

    // MARK: The tray

    /// Starts `netactivity --address <bus> tray <arguments>` and waits until it owns its item name.
    /// `executable` replaces the built `netactivity` (a release build, for measurements). With
    /// `environment`, the bus is not named with `--address` but as the session bus
    /// (`DBUS_SESSION_BUS_ADDRESS`), so the tray follows the system bus too, as a user's does.
    @discardableResult
    func startTray(
        _ arguments: [String] = [], executable: String? = nil, environment: [String: String]? = nil
    ) throws -> ChildProcess {
        let process = try environment.map { environment in
            try ChildProcess(
                try executable ?? builtProduct("netactivity"), ["tray"] + arguments,
                environment: environment.merging(["DBUS_SESSION_BUS_ADDRESS": address]) { _, session in session })
        } ?? service.startNetactivity(["tray"] + arguments, executable: executable)
        tray = process
        let name = Self.itemName(of: process)
        try waitUntil("netactivity tray (pid \(process.pid)) to own \(name)") {
            guard process.isRunning else { throw BusTestError("netactivity tray exited early: \(process.stderrText)") }
            return try probe.connection.owner(of: name) != nil
        }
        return process
    }

    /// The bus name the tray started as `process` owns.
    static func itemName(of process: ChildProcess) -> BusName {
        StatusNotifierNames.itemName(processID: process.pid)
    }

    /// The running tray's item name.
    var itemName: BusName {
        get throws {
            guard let tray else { throw BusTestError("no tray started") }
            return Self.itemName(of: tray)
        }
    }

    /// A fresh view of the running tray's item.
    func observeItem() throws -> ItemObserver {
        try ItemObserver(address: address, item: try itemName)
    }

    /// A test watcher on this bus.
    func startWatcher(replacing: Bool = false, refusing: Int = 0) throws -> TestWatcher {
        try TestWatcher(address: address, replacing: replacing, refusing: refusing)
    }
}

// MARK: - Looking at the item

/// A connection subscribed to the item's signals that also reads its properties. Signals and
/// replies share the connection, so every signal the item sent before answering a `Get` is
/// queued here by the time the answer arrives.
final class ItemObserver: @unchecked Sendable {
    let connection: Connection
    let item: BusName
    private var signals: [String] = []

    init(address: String, item: BusName) throws {
        connection = try Connection(.address(address))
        self.item = item
        try connection.addMatch(
            "type='signal',sender='\(item)',path='\(StatusNotifierNames.itemPath)',"
                + "interface='\(StatusNotifierNames.itemInterface)'")
    }

    /// One property of `org.kde.StatusNotifierItem`, variant unwrapped.
    func property(_ name: String) throws -> Value {
        let message = try Message.methodCall(
            destination: item, path: StatusNotifierNames.itemPath, interface: .properties, member: "Get",
            arguments: [.string(StatusNotifierNames.itemInterface.rawValue), .string(name)])
        let reply = try connection.call(message, timeout: .seconds(10)).arguments()
        guard let value = reply.first?.unwrapped else { throw BusTestError("Get \(name) gave \(reply)") }
        return value
    }

    func string(_ name: String) throws -> String {
        guard case .string(let text) = try property(name) else { throw BusTestError("\(name) is not a string") }
        return text
    }

    /// The tooltip's title and description.
    func toolTip() throws -> (title: String, description: String) {
        let value = try property("ToolTip")
        guard let toolTip = StatusNotifierInterface.toolTip.decode(value) else {
            throw BusTestError("ToolTip is not a (sa(iiay)ss): \(value)")
        }
        return (toolTip.title, toolTip.description)
    }

    /// Polls until `condition` holds for the item's properties.
    func wait(for what: String, timeout: Duration = .seconds(10), _ condition: (ItemObserver) throws -> Bool) throws {
        var last = ""
        do {
            try waitUntil(what, timeout: timeout) {
                last = "Status \((try? string("Status")) ?? "?"), IconName \((try? string("IconName")) ?? "?"), "
                    + "ToolTip \((try? toolTip().description) ?? "?")"
                return try condition(self)
            }
        } catch {
            throw BusTestError("\(error); last seen: \(last)")
        }
    }

    /// The item's signals received so far, as `NewIcon` or `NewStatus(Active)`, after waiting
    /// `settle` for stragglers. Each call returns only what arrived since the last.
    func takeSignals(settle: Duration = .milliseconds(300)) -> [String] {
        var timeout = settle
        let clock = ContinuousClock()
        let deadline = clock.now + settle
        while let message = connection.readMessage(timeout: timeout) {
            if message.kind == .signal, message.interface == StatusNotifierNames.itemInterface,
                let member = message.member?.rawValue
            {
                let argument = (try? message.arguments())?.first?.string
                signals.append(argument.map { "\(member)(\($0))" } ?? member)
            }
            timeout = max(.zero, deadline - clock.now)
        }
        defer { signals.removeAll() }
        return signals
    }
}

/// How many times `name` occurs in `signals`.
func occurrences(of name: String, in signals: [String]) -> Int {
    signals.filter { $0 == name || $0.hasPrefix(name + "(") }.count
}
