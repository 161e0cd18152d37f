import NetActivityBrowser
import Testing

/// The host's framing: a 32-bit native-endian length, then the message, in whatever pieces
/// `read` returns them.
@Suite struct NativeMessageFramerTests {
    static let one = Array(#"{"id":1,"state":"complete"}"#.utf8)
    static let two = Array(#"{"id":2,"state":"removed"}"#.utf8)

    @Test func oneMessageInOneRead() {
        var framer = NativeMessageFramer()
        #expect(framer.append(NativeMessageFramer.frame(Self.one)) == [.message(Self.one)])
        #expect(!framer.isInsideMessage)
    }

    @Test func joinedMessagesInOneRead() {
        var framer = NativeMessageFramer()
        let bytes = NativeMessageFramer.frame(Self.one) + NativeMessageFramer.frame([]) + NativeMessageFramer.frame(Self.two)
        #expect(framer.append(bytes) == [.message(Self.one), .message([]), .message(Self.two)])
    }

    @Test func splitAtEveryByte() {
        var framer = NativeMessageFramer()
        var frames: [NativeMessageFramer.Frame] = []
        for byte in NativeMessageFramer.frame(Self.one) + NativeMessageFramer.frame(Self.two) {
            frames += framer.append([byte])
        }
        #expect(frames == [.message(Self.one), .message(Self.two)])
        #expect(!framer.isInsideMessage)
    }

    @Test func aMessageSplitInsideItsLengthWaits() {
        var framer = NativeMessageFramer()
        let bytes = NativeMessageFramer.frame(Self.one)
        #expect(framer.append(bytes[..<2]).isEmpty)
        #expect(framer.isInsideMessage)
        #expect(framer.append(bytes[2..<9]).isEmpty)
        #expect(framer.append(bytes[9...]) == [.message(Self.one)])
    }

    @Test func theLengthIsInTheMachinesByteOrder() {
        var framer = NativeMessageFramer()
        let length = UInt32(Self.one.count)
        let header = withUnsafeBytes(of: length) { Array($0) }
        #expect(header == withUnsafeBytes(of: length.littleEndian) { Array($0) }, "this test assumes a little-endian machine")
        #expect(framer.append(header + Self.one) == [.message(Self.one)])
    }

    @Test func anOversizeMessageIsSkippedUnbufferedAndTheNextOneRead() {
        var framer = NativeMessageFramer()
        let length = NativeMessageFramer.maximumMessageBytes + 1
        let header = withUnsafeBytes(of: UInt32(length)) { Array($0) }
        #expect(framer.append(header) == [.oversize(UInt32(length))])
        // Sent in 64 KiB pieces, as a pipe delivers them: nothing comes out, nothing is kept.
        let piece = [UInt8](repeating: UInt8(ascii: "["), count: 65_536)
        var sent = 0
        while sent + piece.count <= length {
            #expect(framer.append(piece).isEmpty)
            sent += piece.count
        }
        let frames = framer.append([UInt8](repeating: 0, count: length - sent) + NativeMessageFramer.frame(Self.one))
        #expect(frames == [.message(Self.one)])
    }

    @Test func theLargestLengthIsSkippedToo() {
        var framer = NativeMessageFramer()
        #expect(framer.append([0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3]) == [.oversize(UInt32.max)])
        #expect(framer.isInsideMessage)
    }

    @Test func exactlyTheLimitIsKept() {
        var framer = NativeMessageFramer()
        let message = [UInt8](repeating: UInt8(ascii: " "), count: NativeMessageFramer.maximumMessageBytes)
        #expect(framer.append(NativeMessageFramer.frame(message)) == [.message(message)])
    }
}
