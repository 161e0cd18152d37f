#if canImport(Glibc)
import Glibc
#endif
import NetActivity
import Platform

/// The native messaging host's manifests, which tell browsers where the host is and which
/// extension may start it, and the places browsers read them from.
///
/// Browsers start the host at the manifest's `path` with arguments of their own (the caller's
/// origin), so `path` is a wrapper script that runs `netactivity browser-host`. The templates
/// `make install` and the Debian package fill in are `browser-extension/host/*.json.in`; a
/// repository test checks that these and they agree.
public enum HostManifests {
    /// The host's name, which the extension connects to.
    public static let hostName = "io.github.netactivity.browser"
    /// The extension's Firefox add-on id (`browser_specific_settings.gecko.id`).
    public static let firefoxExtensionID = "netactivity@netactivity.github.io"
    /// The extension's Chromium id, fixed by the `key` in its manifest.
    public static let chromiumExtensionID = "kmcjhhaeafplokpkhlbondjahhchgpop"
    /// The wrapper's name.
    public static let wrapperName = "netactivity-browser-host"

    /// The two manifest formats: Firefox names the extensions allowed, Chromium their origins.
    public enum Flavor: Sendable, CaseIterable {
        case firefox, chromium
    }

    /// The manifest for `flavor`, with the wrapper at `path`.
    public static func manifest(_ flavor: Flavor, path: String) -> String {
        let allowed = switch flavor {
        case .firefox: "\"allowed_extensions\": [\"\(firefoxExtensionID)\"]"
        case .chromium: "\"allowed_origins\": [\"chrome-extension://\(chromiumExtensionID)/\"]"
        }
        return """
            {
              "name": "\(hostName)",
              "description": "NetActivity: browser downloads in the desktop's network activity indicator",
              "path": \(JSONText.quote(path)),
              "type": "stdio",
              \(allowed)
            }

            """
    }

    /// The wrapper script, which runs `netactivity` (an absolute path) as the host.
    public static func wrapper(running netactivity: String) -> String {
        let quoted = netactivity.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''")
        return """
            #!/bin/sh
            # The native messaging host io.github.netactivity.browser: browsers start this with
            # arguments of their own, which netactivity browser-host ignores.
            exec '\(quoted)' browser-host "$@"

            """
    }

    /// Where one user's browsers read host manifests, under `home`: Firefox's and Chromium's and
    /// Google Chrome's always; Brave's and Vivaldi's where their configuration already is.
    public static func userDirectories(home: String) -> [(path: String, flavor: Flavor)] {
        let config = home + "/.config"
        var directories: [(String, Flavor)] = [
            (home + "/.mozilla/native-messaging-hosts", .firefox),
            (config + "/chromium/NativeMessagingHosts", .chromium),
            (config + "/google-chrome/NativeMessagingHosts", .chromium),
        ]
        for browser in ["BraveSoftware/Brave-Browser", "vivaldi"] where access(config + "/" + browser, F_OK) == 0 {
            directories.append((config + "/" + browser + "/NativeMessagingHosts", .chromium))
        }
        return directories
    }

    /// A file that could not be written.
    public struct InstallError: Error, CustomStringConvertible, Sendable {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Installs the wrapper in `home`'s `.local/lib/netactivity` (where `make install` puts it
    /// for that user), running `netactivity`, and a manifest naming it in each of
    /// `userDirectories(home:)`. Returns the files written.
    ///
    /// - Throws: `InstallError` for the first file that could not be written.
    public static func installForUser(home: String, netactivity: String) throws(InstallError) -> [String] {
        let wrapperPath = home + "/.local/lib/netactivity/" + wrapperName
        try write(wrapper(running: netactivity), to: wrapperPath, mode: 0o755)
        var written = [wrapperPath]
        for (directory, flavor) in userDirectories(home: home) {
            let path = directory + "/" + hostName + ".json"
            try write(manifest(flavor, path: wrapperPath), to: path, mode: 0o644)
            written.append(path)
        }
        return written
    }

    /// Writes `text` to `path` whole (a temporary file renamed over it), making its directories.
    private static func write(_ text: String, to path: String, mode: mode_t) throws(InstallError) {
        func failure(_ path: String) -> InstallError { InstallError(path: path, reason: String(cString: strerror(errno))) }
        var directory = ""
        for component in path.split(separator: "/").dropLast() {
            directory += "/" + component
            if mkdir(directory, 0o755) != 0, errno != EEXIST { throw failure(directory) }
        }
        let temporary = path + ".new"
        guard let descriptor = try? FileDescriptor.open(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: mode) else {
            throw failure(temporary)
        }
        var failed: Errno?
        do {
            try descriptor.write(Array(text.utf8))
        } catch {
            failed = error
        }
        if let failed {
            descriptor.close()
            unlink(temporary)
            throw InstallError(path: temporary, reason: failed.description)
        }
        // The mode as asked, whatever the umask.
        fchmod(descriptor.rawValue, mode)
        descriptor.close()
        guard rename(temporary, path) == 0 else {
            let error = failure(path)
            unlink(temporary)
            throw error
        }
    }
}
