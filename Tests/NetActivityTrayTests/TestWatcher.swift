import BusTestSupport
import DBus
import Foundation
import NetActivity
import NetActivityTray

/// A StatusNotifierWatcher owned by the test: a real object at `/StatusNotifierWatcher` under
/// `org.kde.StatusNotifierWatcher`, answered by an `EventLoop` on a thread of its own, that
/// records every `RegisterStatusNotifierItem` call.
final class TestWatcher: @unchecked Sendable {
    /// One `RegisterStatusNotifierItem` call.
    struct Registration: Equatable, Sendable, CustomStringConvertible {
        /// The caller's unique name.
        var sender: String
        /// The argument: the item's bus name.
        var service: String
        var description: String { "\(service) from \(sender)" }
    }

    /// This watcher's unique name.
    let uniqueName: String
    private var connection: Connection?
    private var server: ObjectServer?
    private let loop: EventLoop
    private var thread: RunningLoop?
    private let recorded = Locked<[Registration]>([])
    /// How many `RegisterStatusNotifierItem` calls are still to be refused, as a panel that is
    /// still starting up might.
    private let toRefuse: Locked<Int>
    private let refusedCount = Locked(0)

    /// Connects to the bus at `address`, exports the watcher and takes the name: as the only
    /// owner, or with `replacing` from a current owner that allows replacement (the name then
    /// changes owner with no gap). The first `refusing` registrations get an error.
    ///
    /// - Throws: `BusTestError` if the name cannot be taken.
    init(address: String, replacing: Bool = false, refusing: Int = 0) throws {
        toRefuse = Locked(refusing)
        let connection = try Connection(.address(address))
        let server = ObjectServer(connection: connection)
        let loop = try EventLoop()
        self.connection = connection
        self.server = server
        self.loop = loop
        uniqueName = connection.uniqueName.rawValue
        server.export([watcherInterface], at: StatusNotifierNames.watcherPath)
        loop.attach(connection)
        let options: NameRequestOptions = replacing ? [.allowReplacement, .replaceExisting, .doNotQueue] : [.allowReplacement, .doNotQueue]
        let reply = try connection.requestName(StatusNotifierNames.watcher, options: options)
        guard reply == .primaryOwner else {
            throw BusTestError("the test watcher could not own \(StatusNotifierNames.watcher): \(reply)")
        }
        thread = try RunningLoop(loop, name: "test watcher")
    }

    deinit {
        stop()
    }

    /// How many registrations were refused so far.
    var refused: Int { refusedCount.withLock { $0 } }

    /// Every registration so far, in order.
    var registrations: [Registration] { recorded.withLock { $0 } }

    /// Waits until at least `count` registrations have arrived and returns them all.
    @discardableResult
    func waitForRegistrations(_ count: Int, timeout: Duration = .seconds(10)) throws -> [Registration] {
        try waitUntil("\(count) RegisterStatusNotifierItem call(s) at watcher \(uniqueName); got \(registrations)", timeout: timeout) {
            registrations.count >= count
        }
        return registrations
    }

    /// Stops answering and leaves the bus: the connection is closed, so the name loses its owner.
    func stop() {
        guard connection != nil else { return }
        try? thread?.stop()
        thread = nil
        if let connection { loop.detach(connection) }
        server = nil
        connection = nil
    }

    // MARK: - The watcher's interface

    private var watcherInterface: Interface {
        Interface(
            StatusNotifierNames.watcherInterface,
            methods: [
                Method("RegisterStatusNotifierItem", inputs: [Argument("service", "s")]) { [unowned self] call in
                    let service = call.arguments[0].string ?? ""
                    let refuse = toRefuse.withLock { count in
                        defer { count = max(0, count - 1) }
                        return count > 0
                    }
                    if refuse {
                        refusedCount.withLock { $0 += 1 }
                        throw BusError(.failed, "the test watcher refuses this registration")
                    }
                    recorded.withLock { $0.append(Registration(sender: call.sender, service: service)) }
                    _ = try? connection?.send(
                        .signal(
                            path: StatusNotifierNames.watcherPath, interface: StatusNotifierNames.watcherInterface,
                            member: "StatusNotifierItemRegistered", arguments: [.string(service)]))
                    return []
                },
                Method("RegisterStatusNotifierHost", inputs: [Argument("service", "s")]) { _ in [] },
            ],
            properties: [
                Property("RegisteredStatusNotifierItems", "as") { [unowned self] in
                    .array(element: "s", registrations.map { .string($0.service) })
                },
                Property("IsStatusNotifierHostRegistered", "b") { .boolean(true) },
                Property("ProtocolVersion", "i", changeSignal: .constant) { .int32(0) },
            ],
            signals: [
                SignalDescription("StatusNotifierItemRegistered", arguments: [Argument("service", "s")]),
                SignalDescription("StatusNotifierItemUnregistered", arguments: [Argument("service", "s")]),
                SignalDescription("StatusNotifierHostRegistered"),
                SignalDescription("StatusNotifierHostUnregistered"),
            ])
    }
}

/// "App — ": how a tooltip names this test process, the owner of the activities it begins.
func testProcessApplicationPrefix() throws -> String {
    let comm = try String(contentsOfFile: "/proc/self/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
    let name = ActivityInfo(id: 1, owner: "", label: "", completed: 0, total: 0, started: 0, application: comm).applicationName()
    return name.map { $0 + " — " } ?? ""
}
