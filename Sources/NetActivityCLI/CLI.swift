import DBus
import NetActivity
import NetActivityBridge
import NetActivityContract
import Platform
import NetActivityTray
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity`: the command line for people, scripts and panels.
public enum CLI {
    /// Runs the command line and returns the exit status.
    ///
    /// Synchronous: only `run` starts Swift concurrency (and with it libdispatch's pool, whose
    /// monitor wakes every second), so `tray` and `watch` sleep while nothing changes.
    public static func main(_ arguments: [String]) -> Int32 {
        let invocation: Invocation
        do {
            invocation = try Invocation.parse(arguments)
        } catch {
            let hint = error.subcommand.map { "netactivity \($0) --help" } ?? "netactivity --help"
            Output.error("\(error.description) (see \(hint))")
            return 2
        }
        switch invocation.command {
        case .help(let topic):
            Output.line(Help.text(for: topic))
            return 0
        case .version:
            Output.line("netactivity \(NetActivityBus.version)")
            return 0
        case .status(let json):
            return status(of: invocation.services, json: json)
        case .push:
            return counter(NetActivityBus.Member.push, on: invocation.bus)
        case .pop:
            return counter(NetActivityBus.Member.pop, on: invocation.bus)
        case .run(let label, let hints, let command):
            let command = RunCommand(bus: invocation.bus, label: label, hints: hints, command: command)
            return waiting { await command.run() }
        case .watch(let format):
            return WatchCommand(services: invocation.services, format: format).run()
        case .top(let once):
            return TopCommand(services: invocation.services, once: once).run()
        case .bridge(let sources, let trafficThreshold, let trafficIgnored):
            return bridge(sources, services: invocation.services, trafficThreshold: trafficThreshold, trafficIgnored: trafficIgnored)
        case .shellInit(let shell):
            return shellInit(shell, bus: invocation.bus)
        case .shellHelper(let shellPID, let fifo):
            return ShellHelper(bus: invocation.bus, shellPID: shellPID, fifo: fifo).run()
        case .browserHost(let installManifests):
            return installManifests ? BrowserHostCommand.installManifests() : BrowserHostCommand(bus: invocation.bus).run()
        case .tray(let icon, let idleIcon, let progressRing):
            return tray(
                TrayOptions(
                    bus: invocation.services.session ?? .session, services: invocation.services, activeIcon: icon,
                    idleIcon: idleIcon, iconThemePath: TrayIcons.themePathOfThisProcess(), progressRing: progressRing))
        }
    }

    static func bridge(
        _ sources: Set<BridgeSourceName>, services: FollowedServices, trafficThreshold: UInt64, trafficIgnored: Set<String>
    ) -> Int32 {
        // `--system` follows the system service alone: this is the system-side bridge.
        let systemSide = services.session == nil
        let options = BridgeOptions(
            sources: sources, session: services.session?.busAddress ?? .session,
            system: services.system?.busAddress ?? .system,
            report: (systemSide ? services.system : services.session) ?? .session,
            trafficThreshold: trafficThreshold, trafficIgnored: trafficIgnored, systemSide: systemSide,
            systemService: services.system)
        do {
            return try Bridge(options: options).run()
        } catch {
            Output.error("bridge: \(error.message)")
            return 1
        }
    }

    /// Prints the hook for `shell`, whose helper is this very program on the same bus.
    static func shellInit(_ shell: String, bus: Bus) -> Int32 {
        guard let shell = ShellScripts.Shell(rawValue: shell) else { return 2 }
        let (commands, problems) = ShellCommands.parse(getenv(ShellCommands.variable).map { String(cString: $0) })
        for problem in problems { Output.error(problem) }
        var helper = [executablePath()]
        switch bus {
        case .session: break
        case .system: helper.append("--system")
        case .address(let address): helper += ["--address", address]
        }
        helper.append("shell-helper")
        Output.line(ShellScripts.text(for: shell, commands: commands, helper: helper))
        return 0
    }

    /// This program's absolute path, so the hook finds the same build whatever PATH holds.
    static func executablePath() -> String {
        ProcFS().executable(of: nil) ?? "netactivity"
    }

    static func tray(_ options: TrayOptions) -> Int32 {
        do {
            let problems: @Sendable (String) -> Void = { message in
                if message.contains(BusAddress.noSessionBusMessage) {
                    Output.error("tray: " + noSessionBus)
                } else {
                    Tray.report(message)
                }
            }
            return try Tray(options: options, problems: problems).run()
        } catch {
            Output.error("tray: \(error.message)")
            return 1
        }
    }

    // MARK: - Problems

    /// No session bus at all, in the command line's words: the variable to set, or the option
    /// that names a bus instead.
    static let noSessionBus =
        "there is no session bus: DBUS_SESSION_BUS_ADDRESS is not set (nor is there $XDG_RUNTIME_DIR/bus); "
        + "set it, or name a bus with --address ADDR"

    /// The problems handler of the clients `run` and `watch` start: the library's default, with
    /// no session bus said as `noSessionBus`.
    static let problems: @Sendable (String) -> Void = { message in
        if message.contains(BusAddress.noSessionBusMessage) {
            Output.error(noSessionBus)
        } else {
            NetActivityClient.logToStandardError(message)
        }
    }

    // MARK: - status, push, pop: one call each

    /// One snapshot of each followed service, merged. A side that cannot be read is one line
    /// on stderr, except a system side that is simply not there (no system bus, as in most
    /// containers, or no service on it), which only means no system entries. Fails when no
    /// side could be read.
    static func status(of services: FollowedServices, json: Bool) -> Int32 {
        guard let state = readOnce(services) else { return 1 }
        Output.line(json ? SnapshotFormat.json(state) : SnapshotFormat.status(state))
        return 0
    }

    /// One snapshot of each followed service, merged (`status`, `top --once`); nil, with the
    /// reasons on stderr, when no side could be read.
    static func readOnce(_ services: FollowedServices) -> IndicatorSnapshot? {
        var session: IndicatorSnapshot?
        var system: IndicatorSnapshot?
        if let bus = services.session {
            do { session = try snapshot(on: bus) } catch { Output.error(describe(error, on: bus)) }
        }
        if let bus = services.system {
            do {
                system = try snapshot(on: bus)
            } catch {
                if services.session == nil {
                    Output.error(describe(error, on: bus))
                } else if !meansAbsent(error) {
                    Output.error("system side: " + describe(error, on: bus))
                }
            }
        }
        guard session != nil || system != nil else { return nil }
        return IndicatorSnapshot.merging(session: session, system: system)
    }

    /// The activity objects (with their attribution), then the main object, in the order the
    /// client library reads them; a service without activity objects lists its `Activities`.
    private static func snapshot(on bus: Bus) throws(BusError) -> IndicatorSnapshot {
        let connection = try Connection(bus.busAddress)
        let objects: Value?
        do {
            objects = try call(connection, "GetManagedObjects", [], interface: .objectManager).first
        } catch where meansAbsent(error) || [.noReply, .timeout, .disconnected].contains(error.name) {
            throw error
        } catch {
            objects = nil
        }
        let main = try call(connection, "GetAll", [.string(NetActivityBus.interface.rawValue)], interface: .properties)
        return IndicatorSnapshot(managedObjects: objects, main: main.first?.stringKeyedEntries ?? [:])
    }

    /// Errors that say the bus or the service is not there at all, rather than that it failed.
    private static func meansAbsent(_ error: BusError) -> Bool {
        [.serviceUnknown, .nameHasNoOwner, .noServer, .fileNotFound].contains(error.name)
    }

    static func counter(_ member: MemberName, on bus: Bus) -> Int32 {
        do {
            _ = try callService(on: bus, member, [], interface: NetActivityBus.interface)
            return 0
        } catch {
            Output.error(describe(error, on: bus))
            return 1
        }
    }

    private static func callService(
        on bus: Bus, _ member: MemberName, _ arguments: [Value], interface: InterfaceName
    ) throws(BusError) -> [Value] {
        try call(try Connection(bus.busAddress), member, arguments, interface: interface)
    }

    private static func call(
        _ connection: Connection, _ member: MemberName, _ arguments: [Value], interface: InterfaceName
    ) throws(BusError) -> [Value] {
        let message = try Message.methodCall(
            destination: NetActivityBus.name, path: NetActivityBus.path, interface: interface, member: member,
            arguments: arguments)
        return try connection.call(message, timeout: .seconds(10)).arguments()
    }

    /// One clear line for a failed call: what the service said, or why it could not be asked.
    static func describe(_ error: BusError, on bus: Bus) -> String {
        if error.message == BusAddress.noSessionBusMessage { return noSessionBus }
        return switch error.name {
        case .serviceUnknown, .nameHasNoOwner:
            "the network activity service (\(NetActivityBus.name)) is not running on \(bus.busAddress) and cannot be started"
        case .noServer, .badAddress, .fileNotFound, .disconnected:
            "cannot connect to \(bus.busAddress): \(error.message)"
        case .noReply, .timeout:
            "the network activity service did not answer: \(error.message)"
        default:
            error.message.isEmpty ? error.name.rawValue : "\(error.message) (\(error.name))"
        }
    }
}
