#if canImport(Glibc)
import Glibc
#endif

/// One picture of an item's `IconPixmap`: its size and its ARGB32 pixels, row by row, each
/// pixel as the bytes A, R, G, B (network byte order), not premultiplied.
public struct IconPixmap: Equatable, Sendable {
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int
    /// `width` × `height` × 4 bytes.
    public var bytes: [UInt8]

    /// A picture of `width` × `height` pixels from its ARGB32 bytes.
    public init(width: Int, height: Int, bytes: [UInt8]) {
        self.width = width
        self.height = height
        self.bytes = bytes
    }
}

/// The tray icon drawn for a known progress: a ring around a neutral double arrow, filled
/// clockwise from twelve o'clock to the percent.
///
/// Every shape is a signed distance field sampled once per pixel centre, so edges are
/// anti-aliased without supersampling. A dark disc behind the ring and the arrow keeps the
/// light parts readable on a light panel; the light parts keep it readable on a dark one.
public enum ProgressRing {
    /// The square sizes drawn, in pixels: what hosts ask for at common panel heights and scales.
    public static let sizes = [16, 22, 24, 32, 48]

    /// The ring at `percent` (clamped to 0...100) in every size of `sizes`, smallest first.
    public static func pixmaps(percent: Int) -> [IconPixmap] {
        sizes.map { pixmap(percent: percent, size: $0) }
    }

    /// The ring at `percent` (clamped to 0...100), `size` pixels square.
    public static func pixmap(percent: Int, size: Int) -> IconPixmap {
        let geometry = Geometry(size: size)
        let sector = Sector(filled: Double(min(100, max(0, percent))) / 100)
        var bytes = [UInt8](repeating: 0, count: size * size * 4)
        var index = 0
        for y in 0..<size {
            for x in 0..<size {
                let pixel = geometry.shade(x: Double(x) + 0.5, y: Double(y) + 0.5, filled: sector)
                pixel.store(into: &bytes, at: index)
                index += 4
            }
        }
        return IconPixmap(width: size, height: size, bytes: bytes)
    }

    // MARK: - Colours

    /// Straight (not premultiplied) colours, components in 0...1.
    static let halo = Colour(red: 0, green: 0, blue: 0, alpha: 0.6)
    static let track = Colour(red: 0.62, green: 0.62, blue: 0.62, alpha: 0.9)
    /// Breeze's highlight blue: the colour KDE's own job ring uses.
    static let fill = Colour(red: 0.24, green: 0.68, blue: 0.91, alpha: 1)
    static let glyph = Colour(red: 0.97, green: 0.97, blue: 0.97, alpha: 1)

    /// The ring's measures at one size, in pixels from the top-left corner.
    public struct Geometry: Sendable {
        /// The side of the square, in pixels.
        public let size: Int
        /// The centre of the square, both coordinates.
        public let centre: Double
        /// The radius of the ring's middle line.
        public let radius: Double
        /// The ring's width across.
        public let width: Double
        /// How far the dark disc behind reaches beyond the ring.
        public let haloWidth: Double
        /// Half the arrow's height, tip to tip.
        let arrowReach: Double

        /// The measures for a `size`-pixel square.
        public init(size: Int) {
            self.size = size
            let side = Double(size)
            centre = side / 2
            haloWidth = max(0.75, side / 28)
            width = max(2.25, side * 0.15)
            radius = side / 2 - 0.25 - haloWidth - width / 2
            arrowReach = (radius - width / 2 - haloWidth) * 0.92
        }

        /// The colour at point (`x`, `y`) for a ring filled through `filled`.
        func shade(x: Double, y: Double, filled: Sector) -> Colour {
            let dx = x - centre
            let dy = y - centre
            let distance = (dx * dx + dy * dy).squareRoot()
            let ring = abs(distance - radius) - width / 2
            let arrow = arrowDistance(dx: dx, dy: dy)
            var colour = Colour.clear
            // A dark disc behind the whole ring: the white arrow stands out on a light panel too.
            colour.cover(with: halo, coverage: coverage(distance - radius - width / 2 - haloWidth))
            let inRing = coverage(ring)
            if inRing > 0 {
                colour.cover(with: track, coverage: inRing)
                let arc = coverage(filled.distance(dx: dx, dy: dy, radius: distance))
                colour.cover(with: fill, coverage: inRing * arc)
            }
            colour.cover(with: glyph, coverage: coverage(arrow))
            return colour
        }

        /// How much of a pixel an edge at signed distance `distance` from its centre covers.
        private func coverage(_ distance: Double) -> Double {
            min(1, max(0, 0.5 - distance))
        }

        /// Signed distance to the double-headed vertical arrow: a shaft and two heads.
        private func arrowDistance(dx: Double, dy: Double) -> Double {
            let reach = arrowReach
            let shaftHalfWidth = max(0.5, reach * 0.17)
            let shaft = Self.boxDistance(dx: dx, dy: dy, halfWidth: shaftHalfWidth, halfHeight: reach * 0.6)
            // Both heads at once: the arrow is symmetric about the horizontal axis.
            let head = Self.headDistance(dx: abs(dx), dy: abs(dy), tip: reach, base: reach * 0.4, halfBase: reach * 0.62)
            return min(shaft, head)
        }

        static func boxDistance(dx: Double, dy: Double, halfWidth: Double, halfHeight: Double) -> Double {
            let qx = abs(dx) - halfWidth
            let qy = abs(dy) - halfHeight
            let outside = (max(qx, 0) * max(qx, 0) + max(qy, 0) * max(qy, 0)).squareRoot()
            return outside + min(max(qx, qy), 0)
        }

        /// The lower head: a triangle with its tip at (0, `tip`) and its base from
        /// (-`halfBase`, `base`) to (`halfBase`, `base`).
        static func headDistance(dx: Double, dy: Double, tip: Double, base: Double, halfBase: Double) -> Double {
            triangleDistance(x: dx, y: dy, (-halfBase, base), (halfBase, base), (0, tip))
        }

        /// Exact signed distance to a triangle: to the nearest side outside, and minus it inside.
        static func triangleDistance(
            x: Double, y: Double, _ a: (Double, Double), _ b: (Double, Double), _ c: (Double, Double)
        ) -> Double {
            // Distance to one side, and which side of its line the point lies on.
            func side(_ from: (Double, Double), _ to: (Double, Double)) -> (distance: Double, left: Bool) {
                let ex = to.0 - from.0
                let ey = to.1 - from.1
                let px = x - from.0
                let py = y - from.1
                let along = min(1, max(0, (px * ex + py * ey) / (ex * ex + ey * ey)))
                let gx = px - ex * along
                let gy = py - ey * along
                return ((gx * gx + gy * gy).squareRoot(), ex * py - ey * px >= 0)
            }
            let first = side(a, b)
            let second = side(b, c)
            let third = side(c, a)
            let nearest = min(first.distance, second.distance, third.distance)
            // Inside means on the same side of all three.
            let inside = first.left == second.left && second.left == third.left
            return inside ? -nearest : nearest
        }
    }

    /// The filled part of the ring: the sector from twelve o'clock clockwise through a share
    /// of a turn, its bounding rays worked out once per picture rather than per pixel.
    struct Sector {
        /// The share of a turn, 0...1.
        let filled: Double
        /// The angle of its end, clockwise from twelve o'clock.
        private let end: Double
        /// Unit vectors along its start and end rays, with y pointing down.
        private let startRay = (x: 0.0, y: -1.0)
        private let endRay: (x: Double, y: Double)

        init(filled: Double) {
            self.filled = filled
            end = filled * 2 * .pi
            endRay = (sin(end), -cos(end))
        }

        /// Signed distance from the point (`dx`, `dy`) off the centre, `radius` away from it, to
        /// the sector: negative inside, measured to the nearer of its two rays.
        func distance(dx: Double, dy: Double, radius: Double) -> Double {
            if filled <= 0 { return .infinity }
            if filled >= 1 { return -.infinity }
            func distanceToRay(_ ray: (x: Double, y: Double)) -> Double {
                let along = dx * ray.x + dy * ray.y
                return along > 0 ? abs(dx * ray.y - dy * ray.x) : radius
            }
            let nearer = min(distanceToRay(startRay), distanceToRay(endRay))
            // Clockwise from twelve o'clock with y pointing down: atan2(x, -y), in 0..<2π.
            var angle = atan2(dx, -dy)
            if angle < 0 { angle += 2 * .pi }
            return angle <= end ? -nearer : nearer
        }
    }

    // MARK: - Compositing

    /// A premultiplied colour being composited.
    struct Colour: Equatable {
        var red: Double
        var green: Double
        var blue: Double
        var alpha: Double

        static let clear = Colour(red: 0, green: 0, blue: 0, alpha: 0)

        /// Paints the straight colour `top` over this one where it covers `coverage` of the pixel.
        mutating func cover(with top: Colour, coverage: Double) {
            guard coverage > 0 else { return }
            let opacity = top.alpha * coverage
            red = top.red * opacity + red * (1 - opacity)
            green = top.green * opacity + green * (1 - opacity)
            blue = top.blue * opacity + blue * (1 - opacity)
            alpha = opacity + alpha * (1 - opacity)
        }

        /// Writes A, R, G, B, straight, at `index`.
        func store(into bytes: inout [UInt8], at index: Int) {
            guard alpha > 0 else { return }
            func byte(_ component: Double) -> UInt8 { UInt8(min(255, max(0, (component * 255).rounded()))) }
            bytes[index] = byte(alpha)
            bytes[index + 1] = byte(red / alpha)
            bytes[index + 2] = byte(green / alpha)
            bytes[index + 3] = byte(blue / alpha)
        }
    }
}
