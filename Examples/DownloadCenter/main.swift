// DownloadCenter: the seed's NetworkActivityCenter sample, made real.
//
//     swift run DownloadCenter                  # three downloads from a built-in local server
//     swift run DownloadCenter URL [URL ...]    # your own
//
// Several downloads run at once, each row printing its own percent, while the desktop's
// network activity indicator stays on for as long as any of them runs (it shows after the
// service's 1 s activation delay, so the built-in downloads take a few seconds).
import Foundation
import NetActivity
import NetActivityURLSession
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let client = NetActivityClient.shared
var urls = CommandLine.arguments.dropFirst().compactMap(URL.init(string:))
var server: SlowServer?
if urls.isEmpty {
    let local = try SlowServer()
    server = local
    urls = [2, 5, 3].map { local.url(megabytes: $0) }
}

/// Prints one line per change; rows are numbered as given.
actor Screen {
    private var percents: [Int: Int] = [:]
    func show(_ row: Int, _ text: String) {
        print("[\(row)] \(text)")
    }
    func progress(_ row: Int, _ label: String, _ percent: Double?) {
        let whole = Int(percent ?? 0)
        guard percents[row] != whole else { return }
        percents[row] = whole
        show(row, "\(label) \(percent == nil ? "…" : "\(whole)%")")
    }
}
let screen = Screen()

// The indicator as a panel would show it: `visible`, not `count`.
let watcher = Task {
    var shown: Bool?
    for await state in client.states() where state.visible != shown {
        shown = state.visible
        print(state.serviceAvailable ? "indicator: \(state.visible ? "on" : "off")" : "indicator: service not running")
    }
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("DownloadCenter-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
await withTaskGroup(of: Void.self) { group in
    for (index, url) in urls.enumerated() {
        let row = index + 1
        let label = NetActivityClient.label(for: url)
        group.addTask {
            let file = directory.appendingPathComponent("download-\(row)")
            do {
                let response = try await client.download(for: URLRequest(url: url), to: file, progressThreshold: 0.05) {
                    progress in Task { await screen.progress(row, label, progress.percentComplete) }
                }
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                await screen.show(row, "\(label) done (HTTP \(status))")
            } catch {
                await screen.show(row, "\(label) failed: \(error)")
            }
        }
    }
}
try? FileManager.default.removeItem(at: directory)
await client.flush()
// Let the indicator's completion delay pass, so "off" is printed too.
try? await Task.sleep(for: .milliseconds(500))
watcher.cancel()
server?.stop()
