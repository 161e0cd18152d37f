// MARK: - Entry points (GNOME 43)

class NetActivityExtension {
    constructor(metadata) {
        this._uuid = metadata.uuid;
        this._presence = null;
    }

    enable() {
        this._presence = new NetActivityPresence(this._uuid);
    }

    disable() {
        this._presence.destroy();
        this._presence = null;
    }
}

/** Called once when the shell loads the extension; enable() and disable() do the rest. */
// eslint-disable-next-line no-unused-vars
function init(metadata) {
    return new NetActivityExtension(metadata);
}
