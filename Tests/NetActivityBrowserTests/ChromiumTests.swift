import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The extension and the host in the real Chromium, headless, against the real service: what
/// a user of Debian's Chromium sees of a download.
@Suite(.serialized) struct ChromiumTests {
    static let kibibyte = 1_024

    @Test func twoDownloadsShowTheirNamesTheBrowserAndRisingBytesAndEndOnCompletion() throws {
        let service = try ServiceDaemon()
        let chromium = try HeadlessChromium(service: service)
        let report = SlowFileServer.File(name: "report.bin", size: 3 << 20, sendsLength: true)
        let stream = SlowFileServer.File(name: "stream.bin", size: 1 << 20, sendsLength: false)
        report.allow(256 * Self.kibibyte)
        stream.allow(128 * Self.kibibyte)
        let server = try SlowFileServer([report, stream])
        try chromium.start(server.url("all.html"))

        let shown = try chromium.waitForActivity(report.name, "to show 256 KiB of 3 MiB") {
            ($0["Completed"]?.uint64 ?? 0) >= 256 * 1024 && $0["Total"]?.uint64 == 3 << 20
        }
        #expect(shown["ClaimedApplication"]?.string == "chromium")
        #expect(shown["Icon"]?.string == "chromium")
        #expect(shown["Kind"]?.string == "download")
        try chromium.waitForActivity(stream.name, "to show 128 KiB of an unknown size") {
            ($0["Completed"]?.uint64 ?? 0) >= 128 * 1024 && $0["Total"]?.uint64 == 0
        }
        #expect(try chromium.activities().count == 2)
        let host = try #require(shown["ProcessID"]?.uint32.map { Int32(bitPattern: $0) })

        report.allow(2 << 20)
        try chromium.waitForActivity(report.name, "to rise to 2 MiB") { ($0["Completed"]?.uint64 ?? 0) >= 2 << 20 }
        report.finish()
        stream.finish()
        try chromium.waitForNoActivity("once both downloads completed")
        let sizes = try [report, stream].map { file in
            try FileManager.default.attributesOfItem(atPath: chromium.downloads + "/" + file.name)[.size] as? Int
        }
        #expect(sizes == [3 << 20, 1 << 20])
        // Idle: the extension lets go of the host, which exits.
        try waitUntil("the host (pid \(host)) to exit once no download is in progress") { HeadlessChromium.hasGone(host) }
        #expect(report.requests == 1 && stream.requests == 1)
    }

    @Test func aBrowserKilledMidDownloadLeavesNoActivityAndNoHost() throws {
        let service = try ServiceDaemon()
        let chromium = try HeadlessChromium(service: service)
        let file = SlowFileServer.File(name: "big.iso", size: 8 << 20, sendsLength: true)
        file.allow(64 * Self.kibibyte)
        let server = try SlowFileServer([file])
        let browser = try chromium.start(server.url(file.name))

        let shown = try chromium.waitForActivity(file.name, "to begin") { ($0["Completed"]?.uint64 ?? 0) > 0 }
        let host = try #require(shown["ProcessID"]?.uint32.map { Int32(bitPattern: $0) })
        chromium.rememberFamily()
        browser.send(signal: SIGKILL)
        _ = try browser.waitForExit(timeout: .seconds(10))
        try chromium.waitForNoActivity("once the browser was killed")
        try waitUntil("the host (pid \(host)) to exit at the end of its input") { HeadlessChromium.hasGone(host) }
        withExtendedLifetime(server) {}
    }
}
