import BusTestSupport
import DBus
import Foundation
import NetActivityBrowser
import NetActivityContract
import NetActivityTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `netactivity browser-host` as a browser meets it: the real binary reading frames on its
/// standard input (a FIFO the test writes), reporting to the real service, its problems each said
/// once on stderr, its activities gone and its status 0 at the end of its input.
@Suite(.system, .tags(.system), .timeLimit(.minutes(5))) struct HostProcessTests {
    static func frame(_ json: String) -> Data {
        Data(NativeMessageFramer.frame(Array(json.utf8)))
    }

    @Test func hostileInputIsSaidOnceAndTheDownloadsAroundItShown() throws {
        let service = try ServiceDaemon()
        let probe = try service.probe()
        let directory = NSTemporaryDirectory() + "netactivity-host-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/input"
        #expect(mkfifo(fifo, 0o600) == 0)
        // Chromium's arguments: the caller's origin, ignored.
        let host = try ChildProcess(
            "sh",
            ["-c", #"exec "$0" --address "$1" browser-host chrome-extension://kmcjhhaeafplokpkhlbondjahhchgpop/ < "$2""#,
             try builtProduct("netactivity"), service.address, fifo])
        let input = try #require(FileHandle(forWritingAtPath: fifo))

        var bytes = Self.frame(#"{"id":1,"state":"in_progress","filename":"/home/me/Downloads/a.iso","bytesReceived":10,"totalBytes":100}"#)
        bytes += Self.frame("{not json")
        bytes += Self.frame("{also not json")
        bytes += Data(NativeMessageFramer.frame([0x22, 0xFF, 0x22]))
        bytes += Self.frame(#"{"id":9,"state":"complete"}"#)
        bytes += Data(withUnsafeBytes(of: UInt32(2 << 20)) { Array($0) }) + Data(repeating: 0x20, count: 2 << 20)
        bytes += Self.frame(#"{"id":2,"state":"in_progress","filename":"b.iso","incognito":true,"url":"https://example.com/b.iso"}"#)
        input.write(bytes)

        try waitUntil("both downloads shown; host: \(host.stderrText)") {
            Set(try probe.activities().map(\.label)) == ["a.iso", "Private download"]
        }
        let a = try #require(try probe.activity("a.iso"))
        #expect(a.completed == 10 && a.total == 100)
        input.write(Self.frame(#"{"id":1,"state":"complete"}"#))
        try waitUntil("a.iso to end") { try probe.activities().map(\.label) == ["Private download"] }

        // The browser goes: its end of the pipe closes.
        try input.close()
        let result = try host.waitForExit(timeout: .seconds(10))
        #expect(result.exitStatus == 0, "\(result)")
        #expect(result.stdout.isEmpty, "standard output is the browser's channel")
        let said = nonEmptyLines(result.stderr)
        #expect(said == [
            "netactivity: browser-host: a message that is no download (not JSON); ignored",
            "netactivity: browser-host: a message that is not UTF-8; ignored",
            "netactivity: browser-host: download 9 ended without having begun; ignored",
            "netactivity: browser-host: a message of 2097152 bytes, more than 1048576; skipped",
            "netactivity: browser-host: a message with an unknown field 'url'; the field is ignored",
        ], "\(result.stderr)")
        try waitUntil("the service to end the host's activities") { try probe.count() == 0 }
    }
}

private func nonEmptyLines(_ text: String) -> [String] {
    text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
}
