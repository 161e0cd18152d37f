// MARK: - Entry points (GNOME 45 and later)

export default class NetActivityExtension extends Extension {
    enable() {
        this._presence = new NetActivityPresence(this.uuid);
    }

    disable() {
        this._presence.destroy();
        this._presence = null;
    }
}
