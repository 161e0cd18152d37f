import DBus
import NetActivityContract
import NetActivityModel

/// `netactivityd`'s command line.
public struct ServiceOptions: Equatable, Sendable {
    /// The bus to serve on.
    public var bus: BusAddress = .session
    /// Take the name over from a running instance.
    public var replace = false
    /// System-bus mode: the per-user limit holds, so the first `BeginActivity` of each
    /// connection waits for its credentials. Set by `--system`.
    public var perUserLimits = false
    /// Throttle window, debounce delays.
    public var settings = IndicatorSettings()

    public init() {}

    /// What parsing asked for.
    public enum Action: Equatable, Sendable {
        case run(ServiceOptions)
        case help
        case version
    }

    /// A command-line mistake, reported as one line with exit status 2.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    public static let help = """
        Usage: netactivityd [OPTIONS]

        Owns io.github.netactivity.NetActivity1: the desktop's network activity indicator.

        Options:
          --system                  system-bus mode: serve on the system bus (or the one --address
                                    names) with a limit of 1024 activities per user id as well
          --address ADDR            serve on the bus at ADDR (e.g. unix:path=/run/user/1000/bus)
          --replace                 take the name over from a running instance (which exits 0)
          --throttle-ms N           window for Count, Progress and Activities signals in ms
                                    (default 50; 0 sends every change)
          --activation-delay S      seconds Active must stay true before Visible is (default 1.0)
          --completion-delay S      seconds Active must stay false before Visible is (default 0.17)
          --version                 print the version and exit
          -h, --help                print this help and exit

        Exit status: 0 after SIGTERM/SIGINT or when replaced, 1 when the name is taken or the bus
        is lost, 2 for a usage error.
        """

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Action {
        var options = ServiceOptions()
        var explicitBus: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
                return next
            }
            func noValue() throws(UsageError) {
                if inlineValue != nil { throw UsageError(description: "\(flag) takes no value") }
            }
            switch flag {
            case "-h", "--help":
                try noValue()
                return .help
            case "--version":
                try noValue()
                return .version
            case "--system":
                try noValue()
                options.perUserLimits = true
                if explicitBus == nil { options.bus = .system }
            case "--address":
                let address = try value()
                guard !address.isEmpty else { throw UsageError(description: "--address needs a non-empty address") }
                if let explicitBus, explicitBus != address {
                    throw UsageError(description: "--address given twice ('\(explicitBus)' and '\(address)')")
                }
                explicitBus = address
                options.bus = .address(address)
            case "--replace":
                try noValue()
                options.replace = true
            case "--throttle-ms":
                let text = try value()
                guard let milliseconds = Int(text), (0...60_000).contains(milliseconds) else {
                    throw UsageError(description: "--throttle-ms takes whole milliseconds from 0 to 60000, not '\(text)'")
                }
                options.settings.throttle = .milliseconds(milliseconds)
            case "--activation-delay", "--completion-delay":
                let text = try value()
                guard let seconds = Double(text), seconds.isFinite, (0...3600).contains(seconds) else {
                    throw UsageError(description: "\(flag) takes seconds from 0 to 3600, not '\(text)'")
                }
                let delay = Duration.nanoseconds(Int64((seconds * 1e9).rounded()))
                if flag == "--activation-delay" {
                    options.settings.activationDelay = delay
                } else {
                    options.settings.completionDelay = delay
                }
            default:
                throw UsageError(description: "unknown option '\(argument)'")
            }
        }
        return .run(options)
    }
}
