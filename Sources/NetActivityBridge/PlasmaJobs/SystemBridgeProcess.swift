import DBus

/// Which process the system-side bridge (`netactivity --system bridge`) is: every activity it
/// reports to the system service is traffic it observed, so the mirror leaves out the system
/// side's activities of that process, as it leaves out what this bridge's own traffic source
/// observed.
///
/// Follows the owner of `io.github.netactivity.Bridge` on the system bus (the system-side
/// bridge's name, taken by the process that reports) and asks the bus for its process, on a
/// connection of its own attached to the bridge's loop while the mirror runs. Where the system
/// bus cannot be reached, no process is known and nothing is left out on its account.
final class SystemBridgeProcess {
    /// The system-side bridge's process; nil while none runs, or before the bus answered.
    private(set) var processID: UInt32?
    private let loop: EventLoop
    private var connection: Connection?
    private var follower: NameOwnerFollower?
    private var filter: Int?

    init(bus: BusAddress, loop: EventLoop) {
        self.loop = loop
        guard let connection = try? Connection(bus) else { return }
        var follower: NameOwnerFollower?
        let filter = connection.addFilter(for: .signal) { message in follower?.handle(message) == true }
        loop.attach(connection)
        do {
            follower = try NameOwnerFollower(Bridge.busName, on: connection) { [weak self] owner in self?.ownerChanged(owner) }
        } catch {
            connection.removeFilter(filter)
            loop.detach(connection)
            return
        }
        self.connection = connection
        self.follower = follower
        self.filter = filter
    }

    func stop() {
        if let connection {
            if let filter { connection.removeFilter(filter) }
            loop.detach(connection)
        }
        connection = nil
        follower = nil
        filter = nil
    }

    private func ownerChanged(_ owner: BusName?) {
        processID = nil
        guard let owner, let connection else { return }
        connection.callBus(BusDriver.getConnectionUnixProcessID, owner.rawValue) { [weak self] result in
            // An answer for an owner that has left since is dropped.
            guard let self, self.follower?.owner == owner, case .success(let pid) = result else { return }
            self.processID = pid
        }
    }
}
