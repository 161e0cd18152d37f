import NetActivity
import NetActivityBrowser
import NetActivityContract
import Testing

/// What a reporter was asked to do, in order.
final class RecordingReporter: DownloadReporter {
    final class Download: ReportedDownload {
        let label: String
        let hints: ActivityHints
        var reports: [(completed: UInt64, total: UInt64)] = []
        var ended = false
        init(label: String, hints: ActivityHints) {
            self.label = label
            self.hints = hints
        }
        func report(completed: UInt64, total: UInt64) { reports.append((completed, total)) }
        func end() { ended = true }
    }

    var begun: [Download] = []

    func beginDownload(_ label: String, hints: ActivityHints) -> any ReportedDownload {
        let download = Download(label: label, hints: hints)
        begun.append(download)
        return download
    }

    var live: [Download] { begun.filter { !$0.ended } }
}

/// A host fed bytes as a browser writes them, with a recording reporter instead of the bus.
struct HostUnderTest {
    let reporter = RecordingReporter()
    let problems: Problems
    let said: Said
    var host: BrowserHost
    let downloads: BrowserDownloads

    final class Said {
        var lines: [String] = []
    }

    static let hints = ActivityHints(application: "chromium", icon: "chromium", kind: .download)

    init() {
        let said = Said()
        self.said = said
        problems = Problems { said.lines.append($0) }
        downloads = BrowserDownloads(reporter: reporter, hints: Self.hints, problems: problems)
        host = BrowserHost(downloads: downloads, problems: problems)
    }

    mutating func send(_ json: String) {
        host.receive(NativeMessageFramer.frame(Array(json.utf8))[...])
    }

    mutating func send(id: Int, _ state: String, _ extra: String = "") {
        send(#"{"id":\#(id),"state":"\#(state)"\#(extra)}"#)
    }
}

/// The host's downloads: one activity each, begun, updated and ended as the messages say,
/// whatever order and amount the browser sends them in.
@Suite struct BrowserDownloadsTests {
    @Test func aDownloadFromStartToCompletion() {
        var host = HostUnderTest()
        host.send(id: 4, "in_progress", #","filename":"report.pdf","bytesReceived":0,"totalBytes":4096"#)
        host.send(id: 4, "in_progress", #","filename":"report.pdf","bytesReceived":2048,"totalBytes":4096"#)
        #expect(host.reporter.begun.count == 1)
        let download = host.reporter.begun[0]
        #expect(download.label == "report.pdf")
        #expect(download.hints == HostUnderTest.hints)
        #expect(download.reports.map(\.completed) == [0, 2048])
        #expect(download.reports.map(\.total) == [4096, 4096])
        host.send(id: 4, "complete")
        #expect(download.ended)
        #expect(host.downloads.count == 0)
        #expect(host.said.lines.isEmpty)
    }

    @Test(arguments: ["complete", "interrupted", "removed"])
    func everyEndEndsIt(state: String) {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"a.iso""#)
        host.send(id: 1, state)
        #expect(host.reporter.begun.map(\.ended) == [true])
    }

    @Test func aPausedDownloadStays() {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"a.iso","bytesReceived":10,"totalBytes":100"#)
        host.send(id: 1, "in_progress", #","filename":"a.iso","bytesReceived":10,"totalBytes":100,"paused":true"#)
        #expect(host.reporter.live.count == 1)
        #expect(host.reporter.begun[0].reports.last?.completed == 10)
    }

    @Test func aPrivateDownloadIsNeverNamed() {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"secret.pdf","incognito":true"#)
        #expect(host.reporter.begun.map(\.label) == ["Private download"])
    }

    @Test(arguments: [
        ("/home/me/Downloads/report.pdf", "report.pdf"), (#"C:\\Users\\me\\a.zip"#, "a.zip"), ("", "Download"),
        ("/", "Download"), ("evil\u{1B}[2J.sh", "evil [2J.sh"), ("tab\tname", "tab name"),
    ])
    func theLabelIsTheBaseNameInPrintableCharacters(filename: String, label: String) {
        var host = HostUnderTest()
        let escaped = filename.unicodeScalars.map { $0.value < 0x20 ? String(format: "\\u%04x", $0.value) : String($0) }.joined()
        host.send(id: 1, "in_progress", #","filename":"\#(escaped)""#)
        #expect(host.reporter.begun.map(\.label) == [label])
    }

    @Test func aLongNameIsCutToTheServicesLimit() {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"\#(String(repeating: "é", count: 300)).iso""#)
        #expect(host.reporter.begun[0].label.utf8.count <= NetActivityBus.Limits.labelBytes)
    }

    @Test func twoAtOnceAreTwoActivities() {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"a.iso""#)
        host.send(id: 2, "in_progress", #","filename":"b.iso""#)
        host.send(id: 1, "complete")
        #expect(host.reporter.begun.map(\.label) == ["a.iso", "b.iso"])
        #expect(host.reporter.live.map(\.label) == ["b.iso"])
    }

    // MARK: - Out of order

    @Test func anEndForAnIdNeverBegunIsIgnoredAndSaidOnce() {
        var host = HostUnderTest()
        host.send(id: 8, "complete")
        host.send(id: 9, "removed")
        #expect(host.reporter.begun.isEmpty)
        #expect(host.said.lines == ["download 8 ended without having begun; ignored"])
    }

    @Test func inProgressAfterCompleteDoesNotShowItAgain() {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"a.iso""#)
        host.send(id: 1, "complete")
        host.send(id: 1, "in_progress", #","filename":"a.iso""#)
        host.send(id: 1, "complete")
        #expect(host.reporter.begun.count == 1)
        #expect(host.reporter.live.isEmpty)
        #expect(host.said.lines.count == 2, "\(host.said.lines)")
    }

    @Test func aResumedDownloadShowsAgain() {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"a.iso""#)
        host.send(id: 1, "interrupted")
        host.send(id: 1, "in_progress", #","filename":"a.iso""#)
        #expect(host.reporter.begun.map(\.ended) == [true, false])
    }

    @Test func bytesGoingBackwardsAreReportedAsSent() {
        // A download restarted from zero: the service takes the new count.
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"a.iso","bytesReceived":500"#)
        host.send(id: 1, "in_progress", #","filename":"a.iso","bytesReceived":100"#)
        #expect(host.reporter.begun[0].reports.map(\.completed) == [500, 100])
    }

    // MARK: - Hostile input

    @Test func malformedMessagesAreSaidOnceAndChangeNothing() {
        var host = HostUnderTest()
        for text in ["{", "[]", #"{"id":"x","state":"complete"}"#, "null", ""] { host.send(text) }
        host.host.receive(NativeMessageFramer.frame([0x7B, 0xFF, 0x7D])[...])
        host.host.receive(NativeMessageFramer.frame([0xC0, 0x80])[...])
        #expect(host.reporter.begun.isEmpty)
        #expect(host.said.lines == ["a message that is no download (not JSON); ignored", "a message that is not UTF-8; ignored"])
        // The stream is still in step: the next good message works.
        host.send(id: 1, "in_progress", #","filename":"a.iso""#)
        #expect(host.reporter.live.count == 1)
    }

    @Test func unknownFieldsAreSaidOnceAndTheRestApplied() {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"a.iso","url":"https://example.com/a.iso""#)
        host.send(id: 2, "in_progress", #","filename":"b.iso","referrer":"x""#)
        #expect(host.reporter.live.count == 2)
        #expect(host.said.lines == ["a message with an unknown field 'url'; the field is ignored"])
    }

    @Test func anOversizeMessageIsSkippedAndTheNextOneApplied() {
        var host = HostUnderTest()
        let huge = #"{"id":1,"state":"in_progress","filename":""# + String(repeating: "a", count: 1 << 20) + #""}"#
        var bytes = NativeMessageFramer.frame(Array(huge.utf8))
        bytes += NativeMessageFramer.frame(Array(#"{"id":2,"state":"in_progress","filename":"b.iso"}"#.utf8))
        // In pipe-sized reads.
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + 65_536, bytes.count)
            host.host.receive(bytes[offset..<end])
            offset = end
        }
        #expect(host.reporter.begun.map(\.label) == ["b.iso"])
        #expect(host.said.lines == ["a message of \(huge.utf8.count) bytes, more than 1048576; skipped"])
    }

    @Test func tenThousandDownloadsAreBoundedByTheServicesLimit() {
        var host = HostUnderTest()
        for id in 0..<10_000 { host.send(id: id, "in_progress", #","filename":"f\#(id)""#) }
        #expect(host.reporter.begun.count == NetActivityBus.Limits.activitiesPerOwner)
        #expect(host.downloads.count == NetActivityBus.Limits.activitiesPerOwner)
        #expect(host.said.lines == [
            "more than \(NetActivityBus.Limits.activitiesPerOwner) downloads in progress at once; the others are not shown",
        ])
        // Ending some makes room again.
        for id in 0..<10 { host.send(id: id, "complete") }
        host.send(id: 20_000, "in_progress", #","filename":"late""#)
        #expect(host.reporter.live.last?.label == "late")
        // A completed one does not come back.
        host.send(id: 5, "in_progress", #","filename":"again""#)
        #expect(!host.reporter.live.contains { $0.label == "again" })
        for id in 0..<10_000 { host.send(id: id, "complete") }
        #expect(host.reporter.live.map(\.label) == ["late"])
    }

    @Test func theEndOfInputEndsEverything() {
        var host = HostUnderTest()
        host.send(id: 1, "in_progress", #","filename":"a.iso""#)
        host.send(id: 2, "in_progress", #","filename":"b.iso""#)
        host.downloads.endAll()
        #expect(host.reporter.live.isEmpty)
    }
}
