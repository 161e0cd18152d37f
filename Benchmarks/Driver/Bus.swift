import DBus
import NetActivityContract
import PrivateBusConfiguration
#if canImport(Glibc)
import Glibc
#endif

/// The private dbus-daemon every measurement runs on: a session-type bus in a fresh directory
/// under /tmp, allowing everything, with the stock session bus's (absent) limits and no
/// service directories, so nothing is ever activated behind the benchmark's back.
final class Bus {
    let address: String
    let daemon: Child
    /// A connection for the driver's own questions to the bus (who owns the name).
    let control: Connection
    private let directory: String

    init() throws(BenchError) {
        var template = Array("/tmp/netactivity-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed") }
        directory = String(cString: made)
        let socket = directory + "/bus"
        address = "unix:path=" + socket
        let configuration = directory + "/bus.conf"
        guard writeText(configuration, privateBusConfiguration(listen: address)) else {
            throw BenchError("cannot write \(configuration)")
        }
        daemon = try Child("dbus-daemon", ["--nofork", "--config-file=\(configuration)"])
        let deadline = Clock.now + 10_000_000_000
        while true {
            if let connection = try? Connection(.address(address)) {
                control = connection
                break
            }
            guard daemon.isRunning, Clock.now < deadline else { throw BenchError("dbus-daemon did not start") }
            Clock.sleep(milliseconds: 5)
        }
    }

    deinit {
        daemon.stop()
        unlink(directory + "/bus.conf")
        unlink(directory + "/bus")
        rmdir(directory)
    }

    /// A new client connection.
    func connect() throws(BenchError) -> Connection {
        do {
            return try Connection(.address(address))
        } catch {
            throw BenchError("cannot connect to the private bus: \(error)")
        }
    }

    /// Waits until the contract's name is owned (`true`) or not (`false`).
    func waitForName(owned: Bool, while alive: () -> Bool) throws(BenchError) {
        let deadline = Clock.now + 10_000_000_000
        while ((try? control.owner(of: NetActivityBus.name)) != nil) != owned {
            guard alive() else { throw BenchError("the contender exited before owning \(NetActivityBus.name)") }
            guard Clock.now < deadline else {
                throw BenchError("\(NetActivityBus.name) still \(owned ? "unowned" : "owned") after 10 s")
            }
            Clock.sleep(milliseconds: 2)
        }
    }
}

/// Writes `text` to a new file at `path`.
func writeText(_ path: String, _ text: String) -> Bool {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count
}
