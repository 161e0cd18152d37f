import BusTestSupport
import DBus
import NetActivityTestSupport
import Foundation
import NetActivityService
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// D-Bus activation: a call to the name with no service running starts `netactivityd` through
/// the activation file, and the activated service finds the bus on its own (the daemon gives
/// it `DBUS_SESSION_BUS_ADDRESS`; the file's `Exec=` has no `--address`).
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct ActivationTests {
    /// The package root, where `dbus/` and the Makefile live.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let activationFile = "io.github.netactivity.NetActivity1.service"

    @Test func checkedInActivationFileStartsTheServiceOnTheFirstCall() throws {
        let binary = try builtProduct("netactivityd")
        let services = try TemporaryDirectory()
        let template = try String(
            contentsOfFile: Self.repository + "/dbus/\(Self.activationFile).in", encoding: .utf8)
        let file = template.replacingOccurrences(
            of: "@bindir@", with: URL(fileURLWithPath: binary).deletingLastPathComponent().path)
        #expect(!file.contains("@"), "unsubstituted placeholder left in \(file)")
        try file.write(toFile: services.path + "/" + Self.activationFile, atomically: true, encoding: .utf8)

        try expectActivation(serviceDirectory: services.path, binary: binary)
    }

    @Test func installedServiceIsActivatedFromATemporaryPrefix() throws {
        try requireTool("make")
        let binary = try builtProduct("netactivityd")
        let prefix = try TemporaryDirectory()

        let install = try run(
            "make", ["-C", Self.repository, "install", "PREFIX=\(prefix.path)", "NETACTIVITYD=\(binary)"],
            timeout: .seconds(300))
        try #require(install.succeeded, "make install failed: \(install)")

        let installed = prefix.path + "/share/dbus-1/services/" + Self.activationFile
        let file = try String(contentsOfFile: installed, encoding: .utf8)
        let exec = try #require(value(of: "Exec", in: file), "no Exec= in \(installed):\n\(file)")
        let executable = String(exec.split(separator: " ").first ?? "")
        #expect(executable.hasPrefix(prefix.path + "/"), "Exec= points outside PREFIX: \(exec)")
        #expect(FileManager.default.isExecutableFile(atPath: executable), "Exec= names no executable: \(exec)")
        #expect(value(of: "Name", in: file) == NetActivityBus.name.rawValue)
        #expect(value(of: "SystemdService", in: file)?.isEmpty == false, "no SystemdService= in:\n\(file)")
        #expect(
            FileManager.default.fileExists(
                atPath: prefix.path + "/share/dbus-1/interfaces/io.github.netactivity.NetActivity1.xml"),
            "interface XML not installed to share/dbus-1/interfaces")
        let units = try installedFiles(named: "netactivityd.service", under: prefix.path)
        #expect(units.count == 1, "systemd user units installed: \(units)")
        if let unit = units.first {
            let text = try String(contentsOfFile: unit, encoding: .utf8)
            #expect(value(of: "Type", in: text) == "dbus", "\(unit):\n\(text)")
            #expect(value(of: "BusName", in: text) == NetActivityBus.name.rawValue, "\(unit):\n\(text)")
            #expect(value(of: "ExecStart", in: text)?.hasPrefix(prefix.path + "/") == true, "\(unit):\n\(text)")
        }

        try expectActivation(serviceDirectory: prefix.path + "/share/dbus-1/services", binary: executable)
    }
}

// MARK: - Activating

/// Starts a private bus that reads `serviceDirectory`, makes the first call to the name with
/// `busctl` (which asks for auto-start) and checks the bus started `binary` for it.
private func expectActivation(
    serviceDirectory: String, binary: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let bus = try PrivateBus(serviceDirectories: [serviceDirectory])
    let client = try ServiceProbe(address: bus.address)
    try #require(try client.connection.owner(of: NetActivityBus.name) == nil, "the name is owned before activation")

    let push = try run(
        "busctl",
        ["--address=\(bus.address)", "call", NetActivityBus.name.rawValue, NetActivityBus.path.rawValue,
         NetActivityBus.interface.rawValue, "Push"],
        timeout: .seconds(60))
    #expect(push.succeeded, "activating Push failed: \(push)\n--- bus log ---\n\(bus.log)", sourceLocation: sourceLocation)

    let owner = try #require(
        try client.connection.owner(of: NetActivityBus.name), "nobody owns the name after the call", sourceLocation: sourceLocation)
    let pid = Int32(bitPattern: try client.connection.processID(of: owner))
    defer { stopActivated(pid: pid, bus: bus) }
    #expect(try client.count() == 1, sourceLocation: sourceLocation)
    // The daemon gives what it activates the starter variables, and the session bus address
    // of a session-type bus: the service found the bus through libdbus's session lookup.
    let environment = try startEnvironment(of: pid)
    #expect(environment["DBUS_STARTER_BUS_TYPE"] == "session", "not started by the bus: \(environment)", sourceLocation: sourceLocation)
    #expect(environment["DBUS_SESSION_BUS_ADDRESS"] != nil, sourceLocation: sourceLocation)
    let commandLine = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
    #expect(!commandLine.contains("--address"), "started with an explicit address: \(commandLine)", sourceLocation: sourceLocation)
    let running = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
    #expect(
        URL(fileURLWithPath: running).resolvingSymlinksInPath().path
            == URL(fileURLWithPath: binary).resolvingSymlinksInPath().path,
        "the bus started \(running), not \(binary)", sourceLocation: sourceLocation)
}

/// Stops the bus; the activated service, a child of the daemon, must then exit by itself
/// (it lost its bus). SIGKILLs it if it does not, so no test leaves it behind.
private func stopActivated(pid: Int32, bus: PrivateBus) {
    bus.stop()
    do {
        try waitUntil("activated netactivityd (pid \(pid)) to exit after its bus stopped") { hasExited(pid) }
    } catch {
        Issue.record(error)
        _ = kill(pid, SIGKILL)
    }
}

// MARK: - Files and processes

/// A fresh directory under /tmp, removed when released.
private final class TemporaryDirectory {
    let path: String

    init() throws {
        path = "/tmp/netactivity-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The value of the first `key=` line of a desktop-entry style file.
private func value(of key: String, in file: String) -> String? {
    for line in file.split(separator: "\n") where line.hasPrefix(key + "=") {
        return String(line.dropFirst(key.count + 1)).trimmingCharacters(in: .whitespaces)
    }
    return nil
}

private func installedFiles(named name: String, under root: String) throws -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
    return walker.compactMap { $0 as? String }
        .filter { URL(fileURLWithPath: $0).lastPathComponent == name }
        .map { root + "/" + $0 }
}

/// The environment a process was started with, from /proc/<pid>/environ.
private func startEnvironment(of pid: Int32) throws -> [String: String] {
    let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
    var environment: [String: String] = [:]
    for entry in data.split(separator: 0) {
        let text = String(decoding: entry, as: UTF8.self)
        guard let equals = text.firstIndex(of: "=") else { continue }
        environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
    }
    return environment
}

/// Gone, or a zombie nobody has reaped yet (its parent, the daemon, is gone too).
private func hasExited(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return true }
    return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
}
