import BusTestSupport
import DBus
import Foundation
import NetActivityContract
import NetActivityTestSupport
import StackTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The extension and the host in the real browsers, headless, against the real service: what a
/// user of Debian's Chromium or Firefox ESR sees of a download.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5)), .serialized) struct RealBrowserTests {
    static let kibibyte = 1_024

    @Test(arguments: [HeadlessBrowser.Kind.chromium, .firefox])
    func twoDownloadsShowTheirNamesTheBrowserAndRisingBytesAndEndOnCompletion(kind: HeadlessBrowser.Kind) throws {
        let service = try ServiceDaemon()
        let browser = try HeadlessBrowser(kind, service: service)
        let report = SlowFileServer.File(name: "report.bin", size: 3 << 20, sendsLength: true)
        let stream = SlowFileServer.File(name: "stream.bin", size: 1 << 20, sendsLength: false)
        report.allow(64 * Self.kibibyte)
        stream.allow(64 * Self.kibibyte)
        let server = try SlowFileServer([report, stream])
        // Headless Chromium opens one URL: a page that downloads both. Firefox opens two tabs.
        try browser.start(kind == .chromium ? [server.url("all.html")] : [server.url(stream.name), server.url(report.name)])
        // Firefox counts the bytes that come once a download has begun, not those before, and
        // its count trails what has come by a read or two: the waits ask for half of what is let through.
        try browser.waitForActivity(report.name, "to begin")
        try browser.waitForActivity(stream.name, "to begin")
        report.allow(1 << 20)
        stream.allow(512 * Self.kibibyte)

        let shown = try browser.waitForActivity(report.name, "to show half a MiB of 3 MiB") {
            ($0["Completed"]?.uint64 ?? 0) >= 512 * 1024 && $0["Total"]?.uint64 == 3 << 20
        }
        #expect(shown["ClaimedApplication"]?.string == browser.desktopID)
        #expect(shown["Icon"]?.string == browser.desktopID)
        #expect(shown["Kind"]?.string == "download")
        try browser.waitForActivity(stream.name, "to show 256 KiB of an unknown size") {
            ($0["Completed"]?.uint64 ?? 0) >= 256 * 1024 && $0["Total"]?.uint64 == 0
        }
        #expect(try browser.activities().count == 2)
        let host = try #require(shown["ProcessID"]?.uint32.map { Int32(bitPattern: $0) })

        report.allow(2 << 20)
        try browser.waitForActivity(report.name, "to rise past 1 MiB") { ($0["Completed"]?.uint64 ?? 0) >= 1 << 20 }
        report.finish()
        stream.finish()
        try browser.waitForNoActivity("once both downloads completed")
        let sizes = try [report, stream].map { file in
            try FileManager.default.attributesOfItem(atPath: browser.downloads + "/" + file.name)[.size] as? Int
        }
        #expect(sizes == [3 << 20, 1 << 20])
        // Idle: the extension lets go of the host, which exits.
        try waitUntil("the host (pid \(host)) to exit once no download is in progress") { HeadlessBrowser.hasGone(host) }
        #expect(report.requests == 1 && stream.requests == 1)
    }

    @Test(arguments: [HeadlessBrowser.Kind.chromium, .firefox])
    func aHostKilledMidDownloadIsStartedAgainAndTheDownloadShowsAgain(kind: HeadlessBrowser.Kind) throws {
        let service = try ServiceDaemon()
        let browser = try HeadlessBrowser(kind, service: service)
        let file = SlowFileServer.File(name: "stalled.iso", size: 8 << 20, sendsLength: true)
        file.allow(256 * Self.kibibyte)
        let server = try SlowFileServer([file])
        try browser.start([server.url(file.name)])
        // The download stalls: from here on, nothing about it changes, so no download event
        // comes to wake the extension.
        let shown = try browser.waitForActivity(file.name, "to show 128 KiB") { ($0["Completed"]?.uint64 ?? 0) >= 128 * 1024 }
        let host = try #require(shown["ProcessID"]?.uint32.map { Int32(bitPattern: $0) })
        kill(host, SIGKILL)
        try waitUntil("the killed host (pid \(host)) to go") { HeadlessBrowser.hasGone(host) }
        // The new host begins the activity, and reports its bytes once the id has come back: a
        // round trip during which the activity shows 0 of an unknown size. The download is
        // stalled, so a host that lost the bytes never reports them and this times out.
        let again = try browser.waitForActivity(file.name, "to show again from a new host, with its bytes", timeout: .seconds(15)) {
            $0["ProcessID"]?.uint32.map { Int32(bitPattern: $0) } != host && ($0["Completed"]?.uint64 ?? 0) > 0
        }
        #expect((again["Completed"]?.uint64 ?? 0) >= 128 * 1024, "its bytes, not 0: \(again)")
        #expect(again["Total"]?.uint64 == 8 << 20)
        #expect(try browser.activities().count == 1)
        withExtendedLifetime(server) {}
    }

    @Test(arguments: [HeadlessBrowser.Kind.chromium, .firefox])
    func aBrowserKilledMidDownloadLeavesNoActivityAndNoHost(kind: HeadlessBrowser.Kind) throws {
        let service = try ServiceDaemon()
        let browser = try HeadlessBrowser(kind, service: service)
        let file = SlowFileServer.File(name: "big.iso", size: 8 << 20, sendsLength: true)
        file.allow(64 * Self.kibibyte)
        let server = try SlowFileServer([file])
        let process = try browser.start([server.url(file.name)])
        try browser.waitForActivity(file.name, "to begin")
        file.allow(256 * Self.kibibyte)

        let shown = try browser.waitForActivity(file.name, "to count its bytes") { ($0["Completed"]?.uint64 ?? 0) > 0 }
        let host = try #require(shown["ProcessID"]?.uint32.map { Int32(bitPattern: $0) })
        browser.rememberFamily()
        process.send(signal: SIGKILL)
        _ = try process.waitForExit(timeout: .seconds(10))
        try browser.waitForNoActivity("once the browser was killed")
        try waitUntil("the host (pid \(host)) to exit at the end of its input") { HeadlessBrowser.hasGone(host) }
        withExtendedLifetime(server) {}
    }
}
