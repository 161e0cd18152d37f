import Platform
import Testing

/// One decoder for the two escaped names: mountinfo's octal, kept as written where malformed,
/// and systemd's hex, refused where malformed.
@Suite struct ByteEscapesTests {
    @Test func octalEscapesAreUndoneAndMalformedOnesKept() {
        #expect(ByteEscapes.undone("/mnt/my\\040disk", .octal, strict: false) == Array("/mnt/my disk".utf8))
        #expect(ByteEscapes.undone("a\\9zz\\", .octal, strict: false) == Array("a\\9zz\\".utf8))
        #expect(ByteEscapes.undone("\\777", .octal, strict: false) == Array("\\777".utf8), "past a byte")
        #expect(ByteEscapes.undone("\\04", .octal, strict: false) == Array("\\04".utf8), "too short")
    }

    @Test func hexEscapesAreUndoneAndMalformedOnesRefused() {
        #expect(ByteEscapes.undone("firefox\\x2desr", .hex, strict: true) == Array("firefox-esr".utf8))
        #expect(ByteEscapes.undone("\\xc3\\xa9", .hex, strict: true) == [0xC3, 0xA9])
        #expect(ByteEscapes.undone("a\\x2", .hex, strict: true) == nil)
        #expect(ByteEscapes.undone("a\\y2d", .hex, strict: true) == nil)
        #expect(ByteEscapes.undone("plain", .hex, strict: true) == Array("plain".utf8))
    }
}
