import NetActivity
import NetActivityContract

/// Where the host's downloads are reported: the client library, or a test's recorder.
public protocol DownloadReporter: AnyObject {
    /// Begins an activity labelled `label` with `hints`.
    func beginDownload(_ label: String, hints: ActivityHints) -> any ReportedDownload
}

/// One download's activity.
public protocol ReportedDownload: AnyObject {
    func report(completed: UInt64, total: UInt64)
    func end()
}

extension NetActivityClient: DownloadReporter {
    public func beginDownload(_ label: String, hints: ActivityHints) -> any ReportedDownload {
        begin(label, hints: hints)
    }
}

extension Activity: ReportedDownload {}

/// The browser's downloads in progress, each one activity: begun at the first message that
/// says it is in progress, given its bytes at each later one, ended when it completes, fails,
/// is cancelled or erased. A paused download stays, its bytes unchanged.
///
/// What the extension sends is untrusted, and each kind of trouble is said once to `problems`:
/// a download that ends without having begun, one past `downloadLimit` at once, a message that
/// says a completed download is in progress again. Memory stays bounded: at most
/// `downloadLimit` downloads followed, and the last `finishedMemory` finished ids remembered.
///
/// Not thread-safe: one reader applies the messages, in order.
public final class BrowserDownloads {
    /// Downloads shown at once: the service's limit on one connection's activities.
    public static let downloadLimit = NetActivityBus.Limits.activitiesPerOwner
    /// How many completed or erased ids are remembered, so a stale "in progress" after one
    /// cannot show it again.
    public static let finishedMemory = 4_096
    /// The label of a private window's download, whose file's name is never shown.
    public static let privateLabel = "Private download"
    /// The label of a download the browser has not named.
    public static let unnamedLabel = "Download"

    private let reporter: any DownloadReporter
    private let hints: ActivityHints
    private let problems: Problems

    private var live: [Int64: any ReportedDownload] = [:]
    private var finished: Set<Int64> = []
    private var finishedOrder: [Int64] = []

    /// - Parameters:
    ///   - hints: every download's hints: the browser's application and icon, kind `download`.
    ///   - problems: each kind of problem is handed to it once, as one line.
    public init(reporter: any DownloadReporter, hints: ActivityHints, problems: Problems) {
        self.reporter = reporter
        self.hints = hints
        self.problems = problems
    }

    /// The downloads shown now.
    public var count: Int { live.count }

    /// Applies one message.
    public func apply(_ message: DownloadMessage) {
        switch message.state {
        case .inProgress:
            if let download = live[message.id] {
                download.report(completed: message.bytesReceived, total: message.totalBytes)
                return
            }
            guard !finished.contains(message.id) else {
                problems.say(.staleDownload, "download \(message.id) is in progress again after it completed; ignored")
                return
            }
            guard live.count < Self.downloadLimit else {
                problems.say(
                    .tooManyDownloads,
                    "more than \(Self.downloadLimit) downloads in progress at once; the others are not shown")
                return
            }
            let download = reporter.beginDownload(Self.label(of: message), hints: hints)
            download.report(completed: message.bytesReceived, total: message.totalBytes)
            live[message.id] = download
        case .complete, .interrupted, .removed:
            guard let download = live.removeValue(forKey: message.id) else {
                problems.say(.unknownDownload, "download \(message.id) ended without having begun; ignored")
                return
            }
            download.end()
            // An interrupted download may be resumed, in progress again under the same id.
            if message.state != .interrupted { remember(message.id) }
        }
    }

    /// Ends every download: the browser has gone.
    public func endAll() {
        for download in live.values { download.end() }
        live.removeAll()
    }

    /// What the indicator calls a download: its file's name, or "Private download".
    static func label(of message: DownloadMessage) -> String {
        guard !message.incognito else { return privateLabel }
        let name = message.filename.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        // Printable (`PrintableText`), a control character as a space.
        let printable = PrintableText.printable(name, replacement: " ")
        return printable.allSatisfy(\.isWhitespace) ? unnamedLabel : NetActivityClient.fitted(printable)
    }

    private func remember(_ id: Int64) {
        guard finished.insert(id).inserted else { return }
        finishedOrder.append(id)
        if finishedOrder.count > Self.finishedMemory {
            let forgotten = finishedOrder.prefix(Self.finishedMemory / 2)
            finished.subtract(forgotten)
            finishedOrder.removeFirst(forgotten.count)
        }
    }
}

/// The host's problems, each kind said once: a browser that sends a thousand bad messages
/// writes one line.
public final class Problems {
    /// The kinds of trouble.
    public enum Kind: Hashable, Sendable {
        case oversize, notUTF8, malformed, unknownFields, unknownDownload, staleDownload, tooManyDownloads, truncated
    }

    private let handler: (String) -> Void
    private var said: Set<Kind> = []

    /// - Parameter handler: gets each kind's first line.
    public init(_ handler: @escaping (String) -> Void) {
        self.handler = handler
    }

    /// Hands `message` on, unless a problem of `kind` was said before. Printable
    /// (`PrintableText`): it may quote what the browser sent.
    public func say(_ kind: Kind, _ message: @autoclosure () -> String) {
        guard said.insert(kind).inserted else { return }
        handler(PrintableText.printable(message()))
    }
}
