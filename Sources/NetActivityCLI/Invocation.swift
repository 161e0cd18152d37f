import NetActivity
import NetActivityContract
import NetActivityBridge
import NetActivityTray

/// A parsed `netactivity` command line.
public struct Invocation: Equatable, Sendable {
    /// Where push, pop and run report: the session bus, or the one `--system` / `--address` names.
    public var bus: Bus = .session
    /// What status, watch and tray follow: by default the session and the system service.
    public var services: FollowedServices = .sessionAndSystem
    public var command: Command

    /// The subcommands.
    public enum Command: Equatable, Sendable {
        case help(topic: String?)
        case version
        case status(json: Bool)
        case push
        case pop
        case run(label: String?, hints: ActivityHints = ActivityHints(), command: [String])
        case watch(format: WatchFormat)
        /// `top [--once]`: the activities on the whole terminal, the busiest first.
        case top(once: Bool)
        case tray(icon: String, idleIcon: String, progressRing: Bool)
        case bridge(
            sources: Set<BridgeSourceName>, trafficThreshold: UInt64 = BridgeOptions.defaultTrafficThreshold,
            trafficIgnored: Set<String> = [])
        /// `shell-init SHELL`: the hook's code for bash, zsh or fish.
        case shellInit(shell: String)
        /// `shell-helper`: the process behind a shell's hook.
        case shellHelper(shellPID: Int32?, fifo: String?)
        /// `browser-host`: the browser extension's native messaging host; or, with
        /// `--install-manifests`, its manifests for this user.
        case browserHost(installManifests: Bool)
    }

    /// How `watch` prints each state.
    public enum WatchFormat: String, Sendable, CaseIterable {
        case plain, json, waybar
    }

    /// A command-line mistake: one line on stderr, exit status 2.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public var description: String
        public var subcommand: String?
    }

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        var busOptions = BusOptions()
        var rest = arguments[...]

        func take(_ flag: String, from arguments: inout ArraySlice<String>, inline: String?) throws(UsageError) -> String {
            if let inline { return inline }
            guard let value = arguments.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return value
        }
        func invocation(_ command: Command) -> Invocation {
            Invocation(bus: busOptions.bus, services: busOptions.services, command: command)
        }

        // Bus options before the subcommand.
        while let first = rest.first, first.hasPrefix("-") {
            rest.removeFirst()
            let (flag, inline) = splitInline(first)
            switch flag {
            case "-h", "--help": return invocation(.help(topic: nil))
            case "--version": return invocation(.version)
            default:
                guard try busOptions.take(flag, inline: inline, from: &rest) else {
                    throw UsageError(description: "unknown option '\(first)'")
                }
            }
        }
        guard let name = rest.popFirst() else {
            throw UsageError(description: "missing command (status, push, pop, run, watch, top, tray)")
        }
        let subcommand = name
        func usage(_ text: String) -> UsageError { UsageError(description: text, subcommand: subcommand) }

        // The bus options are accepted after the subcommand too (`netactivity status --address X`),
        // up to `--` or, for `run`, the command to run, which keeps its own arguments.
        var remaining: [String] = []
        while let argument = rest.popFirst() {
            if argument == "--" || (name == "run" && !argument.hasPrefix("-")) {
                remaining.append(argument)
                remaining += rest
                rest = []
                break
            }
            let (flag, inline) = splitInline(argument)
            let isBusOption: Bool
            do { isBusOption = try busOptions.take(flag, inline: inline, from: &rest) } catch {
                throw usage(error.description)
            }
            guard !isBusOption else { continue }
            remaining.append(argument)
            // A subcommand option's value stays with it, even one that looks like a bus option.
            if inline == nil, Self.optionsWithValues.contains(flag), let value = rest.popFirst() {
                remaining.append(value)
            }
        }
        rest = remaining[...]

        // Subcommand options; `--help` anywhere before `--` asks for that command's help.
        if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }),
            Self.commands.contains(name)
        {
            return invocation(.help(topic: name))
        }
        let command: Command
        switch name {
        case "help":
            let topic = rest.popFirst()
            if let topic, !Self.commands.contains(topic) { throw usage("no help for unknown command '\(topic)'") }
            command = .help(topic: topic)
        case "status":
            var json = false
            while let argument = rest.popFirst() {
                guard argument == "--json" else { throw usage("status: unknown argument '\(argument)'") }
                json = true
            }
            command = .status(json: json)
        case "version":
            if let extra = rest.first { throw usage("version: unexpected argument '\(extra)'") }
            command = .version
        case "push", "pop":
            if let extra = rest.first { throw usage("\(name): unexpected argument '\(extra)'") }
            command = name == "push" ? .push : .pop
        case "run":
            var label: String?
            var hints = ActivityHints()
            while let argument = rest.first, argument.hasPrefix("-") {
                rest.removeFirst()
                if argument == "--" { break }
                let (flag, inline) = splitInline(argument)
                guard Self.runOptions.contains(flag) else { throw usage("run: unknown option '\(argument)'") }
                let value: String
                do { value = try take(flag, from: &rest, inline: inline) } catch { throw usage("run: \(error.description)") }
                switch flag {
                case "--kind":
                    guard let kind = ActivityHints.Kind(rawValue: value) else {
                        let kinds = ActivityHints.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                        throw usage("run: --kind takes \(kinds), not '\(value)'")
                    }
                    hints.kind = kind
                case "--icon": hints.icon = value
                case "--application": hints.application = value
                default: label = value
                }
            }
            guard !rest.isEmpty else { throw usage("run: missing command to run (netactivity run [--label TEXT] -- CMD [ARGS...])") }
            command = .run(label: label, hints: hints, command: Array(rest))
        case "watch":
            var format = WatchFormat.plain
            while let argument = rest.popFirst() {
                let (flag, inline) = splitInline(argument)
                guard flag == "--format" || flag == "-f" else { throw usage("watch: unknown argument '\(argument)'") }
                let value: String
                do { value = try take(flag, from: &rest, inline: inline) } catch { throw usage("watch: \(error.description)") }
                guard let chosen = WatchFormat(rawValue: value) else {
                    throw usage("watch: --format takes plain, json or waybar, not '\(value)'")
                }
                format = chosen
            }
            command = .watch(format: format)
        case "top":
            var once = false
            while let argument = rest.popFirst() {
                guard argument == "--once" else { throw usage("top: unknown argument '\(argument)'") }
                once = true
            }
            command = .top(once: once)
        case "bridge":
            var sources = Set(BridgeSourceName.allCases)
            var chosen: Set<String> = []
            var threshold = BridgeOptions.defaultTrafficThreshold
            var ignored: Set<String> = []
            while let argument = rest.popFirst() {
                let (flag, inline) = splitInline(argument)
                let value: String
                switch flag {
                case "--traffic-threshold", "--traffic-ignore":
                    do { value = try take(flag, from: &rest, inline: inline) } catch { throw usage("bridge: \(error.description)") }
                    if flag == "--traffic-ignore" {
                        ignored.formUnion(value.split(separator: ",").map(String.init))
                    } else {
                        guard let bytes = UInt64(value), bytes > 0 else {
                            throw usage("bridge: --traffic-threshold takes a number of bytes above 0, not '\(value)'")
                        }
                        threshold = bytes
                    }
                    continue
                case "--only", "--without":
                    guard !chosen.contains("--only") || flag != "--without", !chosen.contains("--without") || flag != "--only"
                    else { throw usage("bridge: --only and --without exclude each other") }
                default:
                    throw usage(
                        "bridge: unknown argument '\(argument)' (--only SOURCES, --without SOURCES, "
                            + "--traffic-threshold BYTES, --traffic-ignore IDS)")
                }
                chosen.insert(flag)
                do { value = try take(flag, from: &rest, inline: inline) } catch { throw usage("bridge: \(error.description)") }
                var named: Set<BridgeSourceName> = []
                for name in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let source = BridgeSourceName(rawValue: String(name)) else {
                        let all = BridgeSourceName.allCases.map(\.rawValue).joined(separator: ", ")
                        throw usage("bridge: \(flag) takes a comma-separated list of \(all), not '\(value)'")
                    }
                    named.insert(source)
                }
                sources = flag == "--only" ? named : Set(BridgeSourceName.allCases).subtracting(named)
            }
            // `--system` (a bus option, before or after the subcommand) makes it the system-side bridge.
            if busOptions.services.session == nil, sources.isDisjoint(with: BridgeOptions.systemSources) {
                throw usage("bridge: --system runs the traffic source only")
            }
            command = .bridge(sources: sources, trafficThreshold: threshold, trafficIgnored: ignored)
        case "shell-init":
            guard let shell = rest.popFirst(), ShellScripts.Shell(rawValue: shell) != nil, rest.isEmpty else {
                throw usage("shell-init: name one shell: bash, zsh or fish")
            }
            command = .shellInit(shell: shell)
        case "shell-helper":
            var shellPID: Int32?
            var fifo: String?
            while let argument = rest.popFirst() {
                let (flag, inline) = splitInline(argument)
                guard flag == "--shell-pid" || flag == "--fifo" else {
                    throw usage("shell-helper: unknown argument '\(argument)' (--shell-pid PID, --fifo PATH)")
                }
                let value: String
                do { value = try take(flag, from: &rest, inline: inline) } catch { throw usage("shell-helper: \(error.description)") }
                if flag == "--fifo" {
                    guard !value.isEmpty else { throw usage("shell-helper: --fifo needs a path") }
                    fifo = value
                } else {
                    guard let pid = Int32(value), pid > 0 else { throw usage("shell-helper: --shell-pid takes a process id, not '\(value)'") }
                    shellPID = pid
                }
            }
            command = .shellHelper(shellPID: shellPID, fifo: fifo)
        case "browser-host":
            // Browsers pass arguments of their own (Chromium the caller's origin, Firefox the
            // manifest's path and the add-on's id): words that are not options are theirs.
            var installManifests = false
            while let argument = rest.popFirst() {
                if argument == "--install-manifests" {
                    installManifests = true
                } else if argument.hasPrefix("-") {
                    throw usage("browser-host: unknown option '\(argument)'")
                }
            }
            command = .browserHost(installManifests: installManifests)
        case "tray":
            var icon = TrayOptions.defaultActiveIcon
            var idleIcon = TrayOptions.defaultIdleIcon
            var progressRing = true
            while let argument = rest.popFirst() {
                if argument == "--no-progress-ring" {
                    progressRing = false
                    continue
                }
                let (flag, inline) = splitInline(argument)
                guard flag == "--icon" || flag == "--idle-icon" else { throw usage("tray: unknown argument '\(argument)'") }
                let value: String
                do { value = try take(flag, from: &rest, inline: inline) } catch { throw usage("tray: \(error.description)") }
                guard !value.isEmpty else { throw usage("tray: \(flag) needs a non-empty icon name") }
                if flag == "--icon" { icon = value } else { idleIcon = value }
            }
            command = .tray(icon: icon, idleIcon: idleIcon, progressRing: progressRing)
        default:
            throw UsageError(description: "unknown command '\(name)' (status, push, pop, run, watch, top, tray, bridge)")
        }
        return invocation(command)
    }

    /// The service's limit on labels, in UTF-8 bytes.
    static let maximumLabelBytes = NetActivityBus.Limits.labelBytes

    /// Subcommand options that take a value as the next argument.
    static let optionsWithValues: Set<String> = [
        "--label", "-l", "--format", "-f", "--icon", "--idle-icon", "--kind", "--application", "--only", "--without",
        "--shell-pid", "--fifo", "--traffic-threshold", "--traffic-ignore",
    ]

    /// `run`'s options, each with a value.
    static let runOptions: Set<String> = ["--label", "-l", "--kind", "--icon", "--application"]

    static let commands: Set<String> = [
        "status", "push", "pop", "run", "watch", "top", "tray", "bridge", "version", "help", "shell-init",
        "shell-helper", "browser-host",
    ]

    private static func splitInline(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
