import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import PrivateBusLauncher

#if canImport(Glibc)
import Glibc
#endif

/// The stack's session bus: a private `dbus-daemon` at a fixed socket path, so that it can be
/// restarted under its clients' feet and they find the new one at the same address, and with
/// an activation file for `netactivityd`, so that the service comes back on the next call after
/// it was killed, as on a desktop.
///
/// The address has no `guid`: a client that kept the old daemon's would refuse the new one.
public final class StackBus: @unchecked Sendable {
    /// `unix:path=DIRECTORY/bus`.
    public let address: String
    private let socket: String
    private let services: String
    private let current: Locked<PrivateBus?>

    /// Starts the bus in `directory`, activating `netactivityd SERVICEARGUMENTS` on demand.
    public init(directory: String, serviceArguments: [String]) throws {
        socket = directory + "/bus"
        address = "unix:path=" + socket
        services = directory + "/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        let exec = ([try builtProduct("netactivityd"), "--address", address] + serviceArguments).joined(separator: " ")
        try "[D-BUS Service]\nName=\(NetActivityBus.name)\nExec=\(exec)\n".write(
            toFile: services + "/\(NetActivityBus.name).service", atomically: true, encoding: .utf8)
        current = Locked(nil)
        try start()
    }

    deinit {
        stop()
    }

    /// The daemon's process id, nil while stopped.
    public var pid: Int32? { current.withLock { $0?.pid } }

    /// What the daemon and the services it activated printed, for failure messages.
    public var log: String { current.withLock { $0?.log ?? "" } }

    /// Starts a daemon at the socket path (removing a dead one's socket first).
    public func start() throws {
        unlink(socket)
        let bus = try PrivateBus { [socket, services] _ in
            privateBusConfiguration(listen: "unix:path=\(socket)", serviceDirectories: [services])
        }
        current.withLock { $0 = bus }
    }

    /// Stops the daemon with SIGTERM; every client loses its connection.
    public func stop() {
        let bus = current.withLock { bus in
            defer { bus = nil }
            return bus
        }
        bus?.stop()
    }

    /// Stops the bus and starts a new daemon at the same address.
    public func restart() throws {
        stop()
        try start()
    }

    /// The process that owns `name` now, nil when nobody does (or the bus is down).
    public func owner(of name: BusName) -> Int32? {
        guard let connection = try? Connection(.address(address)),
            let owner = try? connection.owner(of: name),
            let pid = try? connection.processID(of: owner)
        else { return nil }
        return Int32(bitPattern: pid)
    }
}
