#if canImport(Glibc)
import Glibc
#endif

/// A program that owns io.github.netactivity.NetActivity1 for one measurement.
enum Contender: Equatable {
    /// `netactivityd` at a path, with extra flags.
    case service(path: String, arguments: [String])
    /// `dbus-test-tool echo`: an empty reply to every call.
    case echo
    /// Benchmarks/floor/c-floor.c: Count, ids for BeginActivity, one PropertiesChanged per Active flip.
    case cFloor(path: String)
    /// A `netactivityd` of interface version 2, the reference for what version 3 adds.
    case versionTwo(path: String, arguments: [String])

    var label: String {
        switch self {
        case .service: "netactivityd"
        case .echo: "dbus-test-tool echo"
        case .cFloor: "c-floor (libdbus)"
        case .versionTwo: "netactivityd, version 2"
        }
    }

    /// Starts the program on `bus` (under `wrapper`, a command such as valgrind, if not empty)
    /// and waits until it owns the name.
    func start(on bus: Bus, wrapper: [String] = []) throws(BenchError) -> Child {
        let command: [String] = switch self {
        case .service(let path, let arguments), .versionTwo(let path, let arguments):
            [path, "--address", bus.address] + arguments
        case .echo: ["dbus-test-tool", "echo", "--name=io.github.netactivity.NetActivity1"]
        case .cFloor(let path): [path, "--address", bus.address]
        }
        let line = wrapper + command
        let child = try Child(line[0], Array(line.dropFirst()), environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        try bus.waitForName(owned: true) { child.isRunning }
        return child
    }

    /// Stops `child` and waits until the bus has let go of the name, so the next contender
    /// can take it.
    static func stop(_ child: Child, on bus: Bus) throws(BenchError) {
        child.stop()
        try bus.waitForName(owned: false) { true }
    }
}
