import DBus

/// A KDE program's side of the job view protocol, as KF6's `KUiServerV2JobTracker` (and KF5's
/// `KUiServerJobTracker`) call it, on a connection of the test's own: `requestView`, then the
/// version 2 setters or version 3 `update`, then `terminate`. Written from the messages, not
/// from the bridge's declaration, so it checks the bridge against the protocol.
final class KDEJobClient {
    let connection: Connection
    let server: BusName

    init(address: String, server: BusName = "org.kde.JobViewServer") throws {
        connection = try Connection(.address(address))
        self.server = server
    }

    var uniqueName: String { connection.uniqueName.rawValue }

    /// KF6: `org.kde.JobViewServerV2.requestView(desktopEntry, capabilities, hints)`.
    func requestView(_ desktopEntry: String, hints: [(String, Value)] = []) throws -> ObjectPath {
        try path(call("/JobViewServer", "org.kde.JobViewServerV2", "requestView",
                      [.string(desktopEntry), .int32(0), .properties(hints)]))
    }

    /// KF5: `org.kde.JobViewServer.requestView(appName, appIconName, capabilities)`.
    func requestViewKF5(_ appName: String, icon: String) throws -> ObjectPath {
        try path(call("/JobViewServer", "org.kde.JobViewServer", "requestView", [.string(appName), .string(icon), .int32(0)]))
    }

    /// A version 2 setter (`setInfoMessage`, ...) on the view at `path`.
    @discardableResult
    func v2(_ path: ObjectPath, _ member: MemberName, _ arguments: [Value]) throws -> [Value] {
        try call(path, "org.kde.JobViewV2", member, arguments)
    }

    /// Version 3's `update(properties)`.
    func update(_ path: ObjectPath, _ properties: [(String, Value)]) throws {
        try call(path, "org.kde.JobViewV3", "update", [.properties(properties)])
    }

    /// Version 3's `terminate(errorCode, errorMessage, hints)`.
    func terminate(_ path: ObjectPath, code: UInt32 = 0) throws {
        try call(path, "org.kde.JobViewV3", "terminate", [.uint32(code), .string(""), .properties([])])
    }

    @discardableResult
    func call(_ path: ObjectPath, _ interface: InterfaceName, _ member: MemberName, _ arguments: [Value]) throws -> [Value] {
        let message = try Message.methodCall(destination: server, path: path, interface: interface, member: member, arguments: arguments)
        return try connection.call(message, timeout: .seconds(10)).arguments()
    }

    private func path(_ values: [Value]) throws -> ObjectPath {
        guard values.count == 1, case .objectPath(let path) = values[0] else {
            throw BusError(.invalidArgs, "requestView answered \(values)")
        }
        return path
    }
}
