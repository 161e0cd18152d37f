import BusTestSupport

/// A session side and a system side, each a private bus with its own `netactivityd`; the
/// system side's runs with `--system --address B`. Nothing touches the machine's buses.
public struct TwoServices {
    public let session: ServiceDaemon
    public let system: ServiceDaemon

    public init() throws {
        session = try ServiceDaemon()
        system = try ServiceDaemon(ServiceDaemon.immediate + ["--system"])
    }

    /// `netactivity --address A <arguments> --system-address B`, started and left running.
    public func startNetactivity(_ arguments: [String]) throws -> ChildProcess {
        try session.startNetactivity(arguments + ["--system-address", system.address])
    }

    /// `netactivity` with no bus options, the session and system bus given by the environment
    /// as a desktop session has them.
    public func netactivityAsOnADesktop(_ arguments: [String]) throws -> ProcessResult {
        try run(
            try builtProduct("netactivity"), arguments,
            environment: ["DBUS_SESSION_BUS_ADDRESS": session.address, "DBUS_SYSTEM_BUS_ADDRESS": system.address],
            timeout: .seconds(30))
    }
}
