import NetActivity
import NetActivityTray

/// The bus options, accepted before or after the subcommand, and what they select:
///
/// | options | reports to (push, pop, run; the tray's item) | watchers follow (status, watch, tray) |
/// |---|---|---|
/// | none | the session bus | the session bus and the system bus |
/// | `--session-only` | the session bus | the session bus |
/// | `--system` | the system bus | the system bus |
/// | `--address A` | A | A |
/// | `--address A --system-address B` | A | A and B (as the system side) |
/// | `--system-address B` | the session bus | the session bus and B |
/// | `--system --system-address B` | B | B |
///
/// An explicit `--address` is a bus of its own (a container's, a test's): the system bus that
/// goes with it is not guessed but named with `--system-address`. The tray's item is always
/// exported on the session side's bus, where the panel is.
struct BusOptions {
    private var system = false
    private var address: String?
    private var systemAddress: String?
    private var sessionOnly = false

    /// The flags that take a value as the next argument.
    static let flagsWithValues: Set<String> = ["--address", "--system-address"]

    /// Takes `flag` (with its value, inline or from `arguments`) if it is a bus option; returns
    /// false for any other argument.
    mutating func take(
        _ flag: String, inline: String?, from arguments: inout ArraySlice<String>
    ) throws(Invocation.UsageError) -> Bool {
        switch flag {
        case "--system":
            try noValue(flag, inline)
            system = true
        case "--session-only":
            try noValue(flag, inline)
            sessionOnly = true
        case "--address", "--system-address":
            guard let value = inline ?? arguments.popFirst() else {
                throw Invocation.UsageError(description: "\(flag) needs a value")
            }
            guard !value.isEmpty else { throw Invocation.UsageError(description: "\(flag) needs a non-empty address") }
            if flag == "--address" { address = value } else { systemAddress = value }
        default:
            return false
        }
        try checkCombination()
        return true
    }

    private func noValue(_ flag: String, _ inline: String?) throws(Invocation.UsageError) {
        if inline != nil { throw Invocation.UsageError(description: "\(flag) takes no value") }
    }

    private func checkCombination() throws(Invocation.UsageError) {
        func conflict(_ first: String, _ second: String) -> Invocation.UsageError {
            Invocation.UsageError(description: "\(first) and \(second) cannot be combined")
        }
        if system, address != nil { throw conflict("--system", "--address") }
        if system, sessionOnly { throw conflict("--system", "--session-only") }
        if sessionOnly, systemAddress != nil { throw conflict("--session-only", "--system-address") }
    }

    /// Where push, pop and run report, and where the tray exports its item.
    var bus: Bus {
        if system { return systemSide }
        return address.map(Bus.address) ?? .session
    }

    /// What status, watch and tray follow.
    var services: FollowedServices {
        if system { return FollowedServices(session: nil, system: systemSide) }
        let session = address.map(Bus.address) ?? .session
        guard !sessionOnly, address == nil || systemAddress != nil else {
            return FollowedServices(session: session, system: nil)
        }
        return FollowedServices(session: session, system: systemSide)
    }

    /// The tray's item lives with the panel: on the session side's bus, even with `--system`.
    var itemBus: Bus {
        address.map(Bus.address) ?? .session
    }

    private var systemSide: Bus {
        systemAddress.map(Bus.address) ?? .system
    }
}
