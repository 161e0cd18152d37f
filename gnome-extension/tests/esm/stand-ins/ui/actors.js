// Plain gjs has no Clutter backend, and an actor disposed without one aborts the process:
// the real St actors the stand-ins are handed are kept here, out of reach of the last garbage
// collection when gjs exits, by a list store that holds itself (a reference cycle in C).
import GObject from 'gi://GObject';
import Gio from 'gi://Gio';

const kept = new Gio.ListStore({item_type: GObject.Object});
kept.append(kept);

/** Keeps `actor` (and so its children) alive until the process ends. */
export function keep(actor) {
    kept.append(actor);
}
