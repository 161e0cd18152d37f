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
    private(set) var processID: UInt32? {
        didSet { if processID != oldValue { changed() } }
    }
    /// Called on the loop when `processID` changes: the bus answers after the mirror has
    /// judged what it already saw, so it judges again.
    private let changed: () -> Void
    private var attached: AttachedConnection?
    private var follower: NameOwnerFollower?

    init(bus: BusAddress, loop: EventLoop, changed: @escaping () -> Void) {
        self.changed = changed
        guard let connection = try? Connection(bus) else { return }
        var follower: NameOwnerFollower?
        let attached = AttachedConnection(connection, on: loop) { message in follower?.handle(message) == true }
        do {
            follower = try NameOwnerFollower(Bridge.busName, on: connection) { [weak self] owner in self?.ownerChanged(owner) }
        } catch {
            attached.close()
            return
        }
        self.attached = attached
        self.follower = follower
    }

    func stop() {
        attached?.close()
        attached = nil
        follower = nil
    }

    private func ownerChanged(_ owner: BusName?) {
        processID = nil
        guard let owner, let connection = attached?.connection else { return }
        connection.callBus(BusDriver.getConnectionUnixProcessID, owner.rawValue) { [weak self] result in
            // An answer for an owner that has left since is dropped.
            guard let self, self.follower?.owner == owner, case .success(let pid) = result else { return }
            self.processID = pid
        }
    }
}
