// MARK: - The progress ring

// The tray's ring (Sources/NetActivityTray/ProgressRing.swift) drawn with cairo: a dark disc,
// a grey track filled clockwise from twelve o'clock in blue, and a light double arrow. The
// same measures and colours, so the top bar and a StatusNotifierItem host look alike.
const RING_COLOURS = {
    halo: [0, 0, 0, 0.6],
    track: [0.62, 0.62, 0.62, 0.9],
    // Breeze's highlight blue: the colour KDE's own job ring uses, as in the tray.
    fill: [0.24, 0.68, 0.91, 1],
    glyph: [0.97, 0.97, 0.97, 1],
};

/** The ring's measures for a square of `size` pixels, as ProgressRing.Geometry has them. */
function ringGeometry(size) {
    const haloWidth = Math.max(0.75, size / 28);
    const width = Math.max(2.25, size * 0.15);
    const radius = size / 2 - 0.25 - haloWidth - width / 2;
    return {
        centre: size / 2,
        haloWidth,
        width,
        radius,
        arrowReach: (radius - width / 2 - haloWidth) * 0.92,
    };
}

/**
 * Paints the ring filled to `percent` (0–100) around the glyph into a cairo context whose
 * surface is `size` pixels square. (Without a known progress the button shows the theme's
 * symbolic icon instead, which follows the panel's colours.)
 */
function paintRing(cr, size, percent) {
    const g = ringGeometry(size);
    const setColour = ([r, gr, b, a]) => cr.setSourceRGBA(r, gr, b, a);
    cr.setOperator(0); // CLEAR: a DrawingArea's surface keeps the previous picture otherwise
    cr.paint();
    cr.setOperator(2); // OVER

    setColour(RING_COLOURS.halo);
    cr.arc(g.centre, g.centre, g.radius + g.width / 2 + g.haloWidth, 0, 2 * Math.PI);
    cr.fill();

    cr.setLineWidth(g.width);
    setColour(RING_COLOURS.track);
    cr.arc(g.centre, g.centre, g.radius, 0, 2 * Math.PI);
    cr.stroke();

    const filled = Math.min(100, Math.max(0, percent)) / 100;
    if (filled > 0) {
        const top = -Math.PI / 2;
        setColour(RING_COLOURS.fill);
        cr.arc(g.centre, g.centre, g.radius, top, top + filled * 2 * Math.PI);
        cr.stroke();
    }

    // The double-headed vertical arrow: a shaft and two heads, symmetric about the centre.
    const reach = g.arrowReach;
    const shaftHalfWidth = Math.max(0.5, reach * 0.17);
    const shaftHalfHeight = reach * 0.6;
    const base = reach * 0.4;
    const halfBase = reach * 0.62;
    setColour(RING_COLOURS.glyph);
    cr.rectangle(g.centre - shaftHalfWidth, g.centre - shaftHalfHeight, 2 * shaftHalfWidth, 2 * shaftHalfHeight);
    cr.fill();
    for (const direction of [-1, 1]) {
        cr.moveTo(g.centre - halfBase, g.centre + direction * base);
        cr.lineTo(g.centre + halfBase, g.centre + direction * base);
        cr.lineTo(g.centre, g.centre + direction * reach);
        cr.closePath();
        cr.fill();
    }
}
