// Stand-in for GNOME Shell 45's resource:///org/gnome/shell/extensions/extension.js: what
// an extension's default export inherits.
export class Extension {
    constructor(metadata) {
        this.metadata = metadata;
        this.uuid = metadata.uuid;
    }
}
