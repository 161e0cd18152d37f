import NetActivityBrowser
import Testing

/// The extension's messages as the host decodes them: what browsers send, and what they must
/// not be able to send.
@Suite struct DownloadMessageTests {
    func decode(_ text: String) -> Result<DownloadMessage, DownloadMessage.Refusal> {
        DownloadMessage.decode(Array(text.utf8))
    }

    @Test func chromiumsInProgress() throws {
        let message = try decode(
            #"{"id":3,"state":"in_progress","filename":"report.pdf","bytesReceived":1024,"totalBytes":4096,"paused":false,"incognito":false}"#
        ).get()
        #expect(message == DownloadMessage(id: 3, state: .inProgress, filename: "report.pdf", bytesReceived: 1024, totalBytes: 4096))
        #expect(message.unknownFields.isEmpty)
    }

    @Test func anUnknownSizeIsZero() throws {
        // Chromium says 0, Firefox -1.
        #expect(try decode(#"{"id":1,"state":"in_progress","totalBytes":-1}"#).get().totalBytes == 0)
        #expect(try decode(#"{"id":1,"state":"in_progress","totalBytes":0}"#).get().totalBytes == 0)
        #expect(try decode(#"{"id":1,"state":"in_progress","totalBytes":1e300}"#).get().totalBytes == UInt64.max)
        #expect(try decode(#"{"id":1,"state":"in_progress","bytesReceived":2.5}"#).get().bytesReceived == 2)
    }

    @Test func onlyIdAndStateAreNeeded() throws {
        #expect(try decode(#"{"id":9,"state":"removed"}"#).get() == DownloadMessage(id: 9, state: .removed))
        for state in DownloadMessage.State.allCases {
            #expect(try decode(#"{"id":9,"state":"\#(state.rawValue)"}"#).get().state == state)
        }
    }

    @Test func unknownFieldsAreNamedAndIgnored() throws {
        let message = try decode(#"{"id":1,"state":"complete","url":"https://example.com/","mime":{"a":[1,2]}}"#).get()
        #expect(message.unknownFields == ["mime", "url"])
        #expect(message.state == .complete)
    }

    @Test(arguments: [
        ("", "not JSON"), ("{", "not JSON"), ("[]", "not a JSON object"), ("7", "not a JSON object"),
        (#""in_progress""#, "not a JSON object"), ("null", "not a JSON object"),
        (#"{"state":"complete"}"#, "no id"), (#"{"id":1}"#, "no state"),
        (#"{"id":"1","state":"complete"}"#, "id has the wrong type"),
        (#"{"id":1.5,"state":"complete"}"#, "id is not a whole number"),
        (#"{"id":1e20,"state":"complete"}"#, "id is not a whole number"),
        (#"{"id":-1,"state":"complete"}"#, "id is negative"),
        (#"{"id":1,"state":"downloading"}"#, "unknown state"),
        (#"{"id":1,"state":"in_progress","filename":7}"#, "filename has the wrong type"),
        (#"{"id":1,"state":"in_progress","paused":"no"}"#, "paused has the wrong type"),
        (#"{"id":1,"state":"in_progress","bytesReceived":"12"}"#, "bytesReceived has the wrong type"),
    ])
    func malformedMessagesAreRefused(text: String, why: String) {
        #expect(decode(text) == .failure(.malformed(why)))
    }

    @Test func badUTF8IsRefused() {
        var bytes = Array(#"{"id":1,"state":"in_progress","filename":"x"}"#.utf8)
        bytes[bytes.count - 3] = 0xC3
        #expect(DownloadMessage.decode(bytes) == .failure(.notUTF8))
        #expect(DownloadMessage.decode([0xFF, 0xFE]) == .failure(.notUTF8))
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(decode(deep) == .failure(.malformed("not JSON")) || decode(deep) == .failure(.malformed("not a JSON object")))
        let inside = #"{"id":1,"state":"complete","x":"# + deep + "}"
        if case .success(let message) = decode(inside) { #expect(message.unknownFields == ["x"]) }
    }
}
