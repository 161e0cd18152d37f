import BusTestSupport
import DBus
import Foundation
@testable import NetActivityBridge

/// plasmashell's job server as far as the mirror meets it, on a connection and loop of the
/// test's own: it owns `org.kde.JobViewServer` (replacing the bridge, as plasmashell does),
/// answers `requestView` with a view object of its own and records every call made on it,
/// bound to the same declaration the bridge's server is (held to plasmashell's introspection
/// by `PlasmaJobsServerTests`).
final class FakeJobViewServer: @unchecked Sendable {
    /// One call the server received: `requestView` on the server, or a member of a view.
    struct Call: Sendable {
        let path: String
        let member: String
        let arguments: [Value]

        /// The `update` dictionary's entries, unwrapped.
        var entries: [String: Value] {
            (arguments.first?.stringKeyedEntries ?? [:]).mapValues { $0.unwrapped ?? $0 }
        }
    }

    private let running: RunningLoop
    private let connection: Connection
    private let server: ObjectServer
    private let recorded = Locked<[Call]>([])
    private var next = 1

    init(address: String) throws {
        let loop = try EventLoop()
        connection = try Connection(.address(address))
        loop.attach(connection)
        server = ObjectServer(connection: connection)
        running = try RunningLoop(loop, name: "fake plasmashell")
        try running.sync { [self] in
            server.export(makeServer(), at: JobViewInterfaces.serverPath)
        }
        _ = try connection.requestName(JobViewInterfaces.serverName, options: [.replaceExisting, .doNotQueue])
    }

    deinit {
        try? running.stop()
    }

    /// Gives the server's name up, as plasmashell does when it exits.
    func leave() throws {
        _ = try connection.releaseName(JobViewInterfaces.serverName)
    }

    /// The server's unique name.
    var uniqueName: String { connection.uniqueName.rawValue }

    /// Every call so far, in order.
    var calls: [Call] { recorded.withLock { $0 } }

    /// The calls on the view that `requestView` answered for the desktop entry or display
    /// name `name`.
    func views(named name: String) -> [String] {
        calls.filter { call in
            call.member == "requestView"
                && (call.arguments.first == .string(name)
                    || call.arguments.last?.stringKeyedEntries?["application-display-name"]?.unwrapped == .string(name))
        }.map(\.path)
    }

    /// The calls made on the view at `path`.
    func calls(on path: String) -> [Call] { calls.filter { $0.path == path } }

    private func record(_ path: String, _ member: MemberName, _ arguments: [Value]) {
        recorded.withLock { $0.append(Call(path: path, member: member.rawValue, arguments: arguments)) }
    }

    private func makeServer() -> [Interface] {
        [
            JobViewInterfaces.serverV2.bind(
                methods: [
                    JobViewInterfaces.requestViewV2.bind { [unowned self] call in
                        let path = ObjectPath(unchecked: "/org/kde/notificationmanager/jobs/JobView_\(next)")
                        next += 1
                        // Recorded under the view's path: its later calls follow it.
                        record(path.rawValue, "requestView", call.arguments)
                        server.export(makeView(path), at: path)
                        return path
                    }
                ],
                properties: [])
        ]
    }

    private func makeView(_ path: ObjectPath) -> [Interface] {
        func recording<each Input>(_ method: MethodDescriptor<NoReply, repeat each Input>) -> Method {
            method.bind { [unowned self] call in
                record(path.rawValue, method.name, call.arguments)
                return NoReply()
            }
        }
        let views = JobViewInterfaces.self
        return [
            views.viewV2.bind(
                methods: [
                    recording(views.terminate), recording(views.setSuspended), recording(views.setTotalAmount),
                    recording(views.setProcessedAmount), recording(views.setPercent), recording(views.setSpeed),
                    recording(views.setInfoMessage),
                    views.setDescriptionField.bind { [unowned self] call in
                        record(path.rawValue, "setDescriptionField", call.arguments)
                        return true
                    },
                    recording(views.clearDescriptionField), recording(views.setDestUrl), recording(views.setError),
                ],
                properties: []),
            views.viewV3.bind(methods: [recording(views.terminateV3), recording(views.update)], properties: []),
        ]
    }
}
