import DBus
import NetActivityBridge

/// plasmashell's job server for the benchmark: owns `org.kde.JobViewServer`, so the bridge's
/// plasma-jobs source mirrors every activity it follows, answers `requestView` with a view
/// that takes every call, and counts the calls. Answered on an event loop of its own thread.
final class StandInJobServer: @unchecked Sendable {
    private let connection: Connection
    private let server: ObjectServer
    private let loop: EventLoop
    private var running: LoopOnThread?
    private let received = Locked(0)
    // Touched on the loop's thread only.
    private var views = 0

    init(bus: Bus) throws(BenchError) {
        do {
            connection = try bus.connect()
            server = ObjectServer(connection: connection)
            loop = try EventLoop()
        } catch {
            throw BenchError("the job server stand-in: \(error)")
        }
        let views = JobViewInterfaces.self
        server.export(
            [
                views.serverV2.bind(
                    methods: [
                        views.requestViewV2.bind { [unowned self] _ in
                            self.views += 1
                            let path = ObjectPath(unchecked: "/org/kde/notificationmanager/jobs/JobView_\(self.views)")
                            server.export(makeView(), at: path)
                            received.withLock { $0 += 1 }
                            return path
                        }
                    ],
                    properties: [])
            ], at: views.serverPath)
        loop.attach(connection)
        running = try LoopOnThread(loop, owning: views.serverName, on: connection, for: "job server")
    }

    /// How many calls it received: views asked for, updates, terminates.
    var calls: Int { received.withLock { $0 } }

    private func makeView() -> [Interface] {
        let views = JobViewInterfaces.self
        func taking<each Input>(_ method: MethodDescriptor<NoReply, repeat each Input>) -> Method {
            method.bind { [received] _ in
                received.withLock { $0 += 1 }
                return NoReply()
            }
        }
        return [
            views.viewV2.bind(
                methods: [
                    taking(views.terminate), taking(views.setSuspended), taking(views.setTotalAmount),
                    taking(views.setProcessedAmount), taking(views.setPercent), taking(views.setSpeed),
                    taking(views.setInfoMessage), views.setDescriptionField.bind { _ in true },
                    taking(views.clearDescriptionField), taking(views.setDestUrl), taking(views.setError),
                ],
                properties: []),
            views.viewV3.bind(methods: [taking(views.terminateV3), taking(views.update)], properties: []),
        ]
    }

    func stop() {
        running?.stop()
        loop.detach(connection)
    }
}
