#if canImport(Glibc)
import Glibc
#endif

/// Who owns a connection: its process and user ids from the bus, and its application.
struct Attribution: Equatable, Sendable {
    var processID: UInt32
    var userID: UInt32
    var application: String

    /// Best effort, in this order: the Flatpak app id, the desktop app id of the systemd
    /// `app-…` scope or service the process runs in, the executable's name (`comm`).
    static func application(cgroup: String?, flatpakInfo: String?, comm: String?) -> String {
        if let flatpakInfo, let id = flatpakApplication(flatpakInfo) { return id }
        if let cgroup, let id = systemdApplication(cgroup: cgroup) { return id }
        return comm.map { $0.trimmingSuffix(while: { $0 == "\n" }) } ?? ""
    }

    /// `name=` in the `[Application]` group of a sandbox's `/.flatpak-info`.
    static func flatpakApplication(_ info: String) -> String? {
        var inApplication = false
        for line in info.split(separator: "\n") {
            if line.hasPrefix("[") {
                inApplication = line == "[Application]"
            } else if inApplication, line.hasPrefix("name=") {
                let name = line.dropFirst(5)
                return name.isEmpty ? nil : String(name)
            }
        }
        return nil
    }

    /// The app id of the innermost systemd unit in `/proc/PID/cgroup` named as the desktop
    /// integration convention says: `app[-LAUNCHER]-APPID[@RANDOM].service` or
    /// `app[-LAUNCHER]-APPID-RANDOM.scope`, with `-` inside APPID escaped as `\x2d`.
    static func systemdApplication(cgroup: String) -> String? {
        for line in cgroup.split(separator: "\n") {
            // cgroup v2: "0::/user.slice/…/app.slice/app-gnome-org.gnome.Terminal-1234.scope"
            guard let path = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).last else {
                continue
            }
            for unit in path.split(separator: "/").reversed() where unit.hasPrefix("app-") {
                if let id = appID(unit: unit) { return id }
            }
        }
        return nil
    }

    private static func appID(unit: Substring) -> String? {
        var name = unit.dropFirst(4)
        if name.hasSuffix(".service") {
            name = name.dropLast(8)
            if let at = name.firstIndex(of: "@") { name = name[..<at] }
        } else if name.hasSuffix(".scope") {
            name = name.dropLast(6)
            guard let dash = name.lastIndex(of: "-") else { return nil }
            name = name[..<dash]
        } else {
            return nil
        }
        // What is left is APPID or LAUNCHER-APPID; the app id itself holds no bare "-".
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard let last = parts.last, parts.count <= 2, !last.isEmpty else { return nil }
        let id = String(last).replacingEscapedDashes()
        return id.isEmpty ? nil : id
    }

    /// Reads what `application(cgroup:flatpakInfo:comm:)` needs from `/proc/PID`.
    static func application(ofProcess processID: UInt32) -> String {
        let base = "/proc/\(processID)"
        return application(
            cgroup: readSmallFile(base + "/cgroup"), flatpakInfo: readSmallFile(base + "/root/.flatpak-info"),
            comm: readSmallFile(base + "/comm"))
    }

    /// A small file's text, or nil when it cannot be read (no such process, no permission).
    static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        // Bounded: these files are a few hundred bytes; anything longer is not what we want.
        while bytes.count < 65_536 {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var text = self
        while let last = text.last, predicate(last) { text.removeLast() }
        return text
    }

    /// systemd escapes "-" inside a unit name's app id as `\x2d`. Done by hand: the string
    /// algorithms that take a string separator would link _StringProcessing into the service.
    fileprivate func replacingEscapedDashes() -> String {
        let escape = Array("\\x2d".utf8)
        var bytes: [UInt8] = []
        var rest = Array(utf8)[...]
        while !rest.isEmpty {
            if rest.starts(with: escape) {
                bytes.append(UInt8(ascii: "-"))
                rest = rest.dropFirst(escape.count)
            } else {
                bytes.append(rest.removeFirst())
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
