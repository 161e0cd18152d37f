import DBus
import NetActivityContract
import PrivateBusLauncher
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
    private let files: PrivateBusFiles

    init() throws(BenchError) {
        let files: PrivateBusFiles
        do {
            files = try PrivateBusFiles(prefix: "netactivity-bench") { directory in
                privateBusConfiguration(listen: "unix:path=" + directory + "/bus")
            }
        } catch {
            throw BenchError("cannot set up the private bus: \(error)")
        }
        self.files = files
        address = "unix:path=" + files.directory + "/bus"
        daemon = try Child("dbus-daemon", files.daemonArguments)
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
        files.remove()
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
