// MARK: - What enable() made

/**
 * Every signal connection and main-loop source the indicator makes goes through one ledger,
 * so disable() can undo all of them in one place and a test can check that it did.
 */
class Ledger {
    constructor() {
        /** [object, handler id] pairs still connected. */
        this.signals = [];
        /** Ids of main-loop sources still attached. */
        this.sources = new Set();
    }

    /** Connects `handler` to `object`'s `signal` until `release()`. */
    connect(object, signal, handler) {
        const id = object.connect(signal, handler);
        this.signals.push([object, id]);
        return id;
    }

    /** Runs `callback` once after `milliseconds`, unless released first. */
    timeout(milliseconds, callback) {
        const id = GLib.timeout_add(GLib.PRIORITY_DEFAULT, milliseconds, () => {
            this.sources.delete(id);
            callback();
            return GLib.SOURCE_REMOVE;
        });
        this.sources.add(id);
        return id;
    }

    /** Removes one source made by `timeout()`, if it is still pending. */
    cancelTimeout(id) {
        if (this.sources.delete(id))
            GLib.source_remove(id);
    }

    /** Disconnects every signal and removes every source made through this ledger. */
    release() {
        for (const [object, id] of this.signals)
            object.disconnect(id);
        this.signals = [];
        for (const id of this.sources)
            GLib.source_remove(id);
        this.sources.clear();
    }
}
