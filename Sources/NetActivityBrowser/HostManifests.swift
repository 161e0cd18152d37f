import Foundation

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
              "path": "\(jsonEscaped(path))",
              "type": "stdio",
              \(allowed)
            }

            """
    }

    /// The wrapper script, which runs `netactivity` (an absolute path) as the host.
    public static func wrapper(running netactivity: String) -> String {
        """
        #!/bin/sh
        # The native messaging host io.github.netactivity.browser: browsers start this with
        # arguments of their own, which netactivity browser-host ignores.
        exec '\(netactivity.replacingOccurrences(of: "'", with: "'\\''"))' browser-host "$@"

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
        for browser in ["BraveSoftware/Brave-Browser", "vivaldi"]
        where FileManager.default.fileExists(atPath: config + "/" + browser) {
            directories.append((config + "/" + browser + "/NativeMessagingHosts", .chromium))
        }
        return directories
    }

    /// Installs the wrapper in `home`'s `.local/lib/netactivity` (where `make install` puts it
    /// for that user), running `netactivity`, and a manifest naming it in each of
    /// `userDirectories(home:)`. Returns the files written.
    ///
    /// - Throws: the first file that could not be written, as a `CocoaError`.
    public static func installForUser(home: String, netactivity: String) throws -> [String] {
        let files = FileManager.default
        let libexec = home + "/.local/lib/netactivity"
        try files.createDirectory(atPath: libexec, withIntermediateDirectories: true)
        let wrapperPath = libexec + "/" + wrapperName
        try wrapper(running: netactivity).write(toFile: wrapperPath, atomically: true, encoding: .utf8)
        try files.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wrapperPath)
        var written = [wrapperPath]
        for (directory, flavor) in userDirectories(home: home) {
            try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/" + hostName + ".json"
            try manifest(flavor, path: wrapperPath).write(toFile: path, atomically: true, encoding: .utf8)
            written.append(path)
        }
        return written
    }

    private static func jsonEscaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
