// Stand-in for resource:///org/gnome/shell/ui/panelMenu.js: a Button with the shell's
// life cycle (a menu, `destroy` calling `_onDestroy`), not an actor, so it can be destroyed
// without a Clutter stage.
import GObject from 'gi://GObject';

import {keep} from './actors.js';
import {PopupMenu} from './popupMenu.js';

export const Button = GObject.registerClass({
    Signals: {destroy: {}},
}, class Button extends GObject.Object {
    _init(_alignment, name, _dontCreateMenu) {
        super._init();
        this.accessibleName = name;
        this.visible = true;
        this.children = [];
        this.styleClasses = [];
        this.menu = new PopupMenu();
        this.connect('destroy', () => this._onDestroy());
    }

    add_child(child) {
        keep(child);
        this.children.push(child);
    }

    add_style_class_name(name) {
        this.styleClasses.push(name);
    }

    destroy() {
        this.emit('destroy');
    }

    _onDestroy() {
        this.menu.destroy();
        this.menu = null;
    }
});
