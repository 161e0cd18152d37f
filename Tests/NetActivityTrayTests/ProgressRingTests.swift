import NetActivityTray
import Testing

/// The drawn ring, read back from its bytes.
@Suite struct ProgressRingTests {
    @Test func everySizeIsSquareWithFourBytesAPixel() {
        let pixmaps = ProgressRing.pixmaps(percent: 40)
        #expect(pixmaps.map(\.width) == [16, 22, 24, 32, 48])
        for pixmap in pixmaps {
            #expect(pixmap.height == pixmap.width)
            #expect(pixmap.bytes.count == pixmap.width * pixmap.height * 4)
            // Corners lie outside the disc: fully transparent.
            #expect(pixmap.bytes[0] == 0 && pixmap.bytes[pixmap.bytes.count - 4] == 0)
            // The centre (the arrow's shaft over the dark disc) is nearly opaque, and alpha comes
            // first: A, R, G, B.
            let centre = (pixmap.height / 2 * pixmap.width + pixmap.width / 2) * 4
            #expect(pixmap.bytes[centre] > 200, "size \(pixmap.width)")
        }
    }

    /// The share of the ring's fill colour present, summed over its pixels, is the percent, to
    /// within one pixel of arc along the ring's middle.
    @Test(arguments: ProgressRing.sizes)
    func theFilledShareOfTheRingIsThePercent(size: Int) {
        let empty = ProgressRing.pixmap(percent: 0, size: size)
        let full = ProgressRing.pixmap(percent: 100, size: size)
        let geometry = ProgressRing.Geometry(size: size)
        let onePixelOfArc = 1 / (2 * Double.pi * geometry.radius)
        for percent in [1, 5, 12, 25, 33, 50, 67, 75, 88, 95, 99] {
            let drawn = ProgressRing.pixmap(percent: percent, size: size)
            var filled = 0.0
            var ring = 0.0
            for pixel in 0..<(size * size) {
                let none = premultipliedBlue(empty, pixel)
                filled += premultipliedBlue(drawn, pixel) - none
                ring += premultipliedBlue(full, pixel) - none
            }
            let share = filled / ring
            #expect(
                abs(share - Double(percent) / 100) <= onePixelOfArc,
                "\(size) px at \(percent)%: \(share), allowed ±\(onePixelOfArc)")
        }
    }

    @Test func theFillStartsAtTwelveOClockAndRunsClockwise() {
        let size = 48
        let geometry = ProgressRing.Geometry(size: size)
        let top = Int(geometry.centre - geometry.radius)
        let empty = ProgressRing.pixmap(percent: 0, size: size)
        let drawn = ProgressRing.pixmap(percent: 10, size: size)
        // Two pixels right of twelve o'clock is filled; two pixels left is not.
        let right = top * size + size / 2 + 2
        let left = top * size + size / 2 - 3
        #expect(premultipliedBlue(drawn, right) > premultipliedBlue(empty, right) + 0.3)
        #expect(premultipliedBlue(drawn, left) == premultipliedBlue(empty, left))
        // At three o'clock (25%), nothing yet at 10%.
        let threeOClock = size / 2 * size + Int(geometry.centre + geometry.radius)
        #expect(premultipliedBlue(drawn, threeOClock) == premultipliedBlue(empty, threeOClock))
    }

    @Test func eachPercentIsItsOwnPictureAndOutOfRangeIsClamped() {
        #expect(ProgressRing.pixmap(percent: 25, size: 22) != ProgressRing.pixmap(percent: 26, size: 22))
        #expect(ProgressRing.pixmap(percent: 25, size: 22) != ProgressRing.pixmap(percent: 75, size: 22))
        #expect(ProgressRing.pixmap(percent: -5, size: 22) == ProgressRing.pixmap(percent: 0, size: 22))
        #expect(ProgressRing.pixmap(percent: 140, size: 22) == ProgressRing.pixmap(percent: 100, size: 22))
    }

    /// Blue times alpha, 0...1: linear in how much of the fill covers the pixel.
    private func premultipliedBlue(_ pixmap: IconPixmap, _ pixel: Int) -> Double {
        Double(pixmap.bytes[pixel * 4]) * Double(pixmap.bytes[pixel * 4 + 3]) / (255 * 255)
    }
}
