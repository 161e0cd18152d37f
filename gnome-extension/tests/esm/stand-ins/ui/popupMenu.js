// Stand-in for resource:///org/gnome/shell/ui/popupMenu.js. Its box is a real St widget (gi://St
// from the shell's typelibs); nothing is destroyed, as Clutter has no stage under plain gjs.
import GObject from 'gi://GObject';
import St from 'gi://St';

import {keep} from './actors.js';

// Items record what they hold: a real St.Label needs a Clutter backend, which plain gjs lacks.
export class PopupBaseMenuItem {
    constructor(params = {}) {
        this.params = params;
        this.children = [];
    }

    add_child(child) {
        this.children.push(child);
    }
}

export class PopupMenuItem extends PopupBaseMenuItem {
    constructor(text, params) {
        super(params);
        this.text = text;
    }
}

export class PopupMenuSection {
    constructor() {
        this.items = [];
    }

    addMenuItem(item) {
        this.items.push(item);
    }

    removeAll() {
        this.items = [];
    }
}

export const PopupMenu = GObject.registerClass({
    Signals: {'open-state-changed': {param_types: [GObject.TYPE_BOOLEAN]}},
}, class PopupMenu extends GObject.Object {
    _init() {
        super._init();
        this.isOpen = false;
        this.sections = [];
        this.box = new St.BoxLayout({vertical: true});
        keep(this.box);
    }

    addMenuItem(section) {
        this.sections.push(section);
    }

    open() {
        this.isOpen = true;
        this.emit('open-state-changed', true);
    }

    close() {
        this.isOpen = false;
        this.emit('open-state-changed', false);
    }

    destroy() {
        this.destroyed = true;
    }
});
