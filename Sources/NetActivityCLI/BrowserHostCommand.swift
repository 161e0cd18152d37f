import NetActivity
import NetActivityBrowser
#if canImport(Glibc)
import Glibc
#endif

/// `netactivity browser-host`: the native messaging host the browser extension starts; or,
/// with `--install-manifests`, the manifests that tell this user's browsers where it is.
struct BrowserHostCommand {
    var bus: Bus

    /// Reports the downloads the extension sends until the browser closes standard input.
    /// Standard output is the browser's channel and stays unwritten.
    func run() -> Int32 {
        let problems = Problems { Output.error("browser-host: " + $0) }
        let client = NetActivityClient(bus: bus, problems: CLI.problems)
        let downloads = BrowserDownloads(reporter: client, hints: BrowserHost.hints(), problems: problems)
        var host = BrowserHost(downloads: downloads, problems: problems)
        host.run()
        // Exiting closes the bus connection, and the service ends whatever it still held.
        return 0
    }

    /// Writes the wrapper and this user's manifests, and prints their paths.
    static func installManifests() -> Int32 {
        guard let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") else {
            Output.error("browser-host: HOME is not set to a directory; cannot install the manifests")
            return 1
        }
        do {
            for path in try HostManifests.installForUser(home: home, netactivity: CLI.executablePath()) {
                Output.line(path)
            }
            return 0
        } catch {
            Output.error("browser-host: cannot install the manifests: \(error)")
            return 1
        }
    }
}
