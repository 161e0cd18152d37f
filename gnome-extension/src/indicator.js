// MARK: - The top bar button

/** How many activities the menu lists before "… and N more", as the tray's tooltip does. */
const MENU_ACTIVITY_LIMIT = 10;
/** The shortest time between two redraws of the ring or the open menu: 4 a second at most. */
const REFRESH_INTERVAL_MS = 250;
/**
 * A vertical St.BoxLayout's properties. GNOME 48 gave St.BoxLayout `orientation` and deprecated
 * `vertical` (GLib warns of it with G_ENABLE_DIAGNOSTIC=1); GNOME 51 removed `vertical`, so a
 * row made with it fails there. GNOME 43 has only `vertical`.
 */
const VERTICAL = 'orientation' in St.BoxLayout.prototype
    ? {orientation: Clutter.Orientation.VERTICAL} : {vertical: true};

const NetActivityIndicator = GObject.registerClass(
class NetActivityIndicator extends PanelMenu.Button {
    _init() {
        super._init(0.5, 'Network activity', false);
        this.add_style_class_name('netactivity-indicator');
        this._ledger = new Ledger();
        this._percent = null;
        this._lastRefresh = 0;
        this._pendingRefresh = 0;
        this._menuStale = true;

        const box = new St.BoxLayout({style_class: 'panel-status-indicators-box'});
        this._icon = new St.Icon({
            icon_name: 'network-transmit-receive-symbolic',
            style_class: 'system-status-icon',
        });
        this._ring = new St.DrawingArea({
            style_class: 'netactivity-ring',
            y_align: Clutter.ActorAlign.CENTER,
            visible: false,
        });
        this._ledger.connect(this._ring, 'repaint', area => this._paint(area));
        box.add_child(this._icon);
        box.add_child(this._ring);
        this.add_child(box);

        this._list = new PopupMenu.PopupMenuSection();
        this.menu.addMenuItem(this._list);
        this._ledger.connect(this.menu, 'open-state-changed', (_menu, open) => {
            if (open && this._menuStale)
                this._fillMenu();
        });
    }

    /** Starts following both services; the button stays hidden until one is `Visible`. */
    start() {
        this.visible = false;
        const onChange = () => this._changed();
        this._sides = [
            new ServiceSide('session', this._ledger, onChange),
            new ServiceSide('system', this._ledger, onChange),
        ];
        // PopupMenu.open() does nothing while the menu is empty, so it always has a line;
        // while closed it is only marked stale, and filled again when it opens.
        this._fillMenu();
    }

    // MARK: - Changes

    /**
     * Shows a change: visibility at once, since it is already debounced by the services; the
     * ring and the open menu at most every REFRESH_INTERVAL_MS, with one timer only while a
     * change waits for its turn.
     */
    _changed() {
        // Every line of the menu may change with any property: Count, progress, activities.
        this._menuStale = true;
        const visible = this._sides.some(side => side.visible);
        if (visible !== this.visible) {
            this.visible = visible;
            if (!visible && this.menu.isOpen)
                this.menu.close();
        }
        if (this._pendingRefresh)
            return;
        const wait = this._lastRefresh + REFRESH_INTERVAL_MS - GLib.get_monotonic_time() / 1000;
        if (wait > 0) {
            this._pendingRefresh = this._ledger.timeout(Math.ceil(wait), () => {
                this._pendingRefresh = 0;
                this._refresh();
            });
        } else {
            this._refresh();
        }
    }

    _refresh() {
        this._lastRefresh = GLib.get_monotonic_time() / 1000;
        const progress = this.visible ? mergedProgress(this._sides) : null;
        const percent = progress === null ? null : wholePercent(progress);
        if (percent !== this._percent) {
            this._percent = percent;
            this._icon.visible = percent === null;
            this._ring.visible = percent !== null;
            if (percent !== null)
                this._ring.queue_repaint();
        }
        if (this.menu.isOpen && this._menuStale)
            this._fillMenu();
    }

    _paint(area) {
        if (this._percent === null)
            return;
        const cr = area.get_context();
        const [width, height] = area.get_surface_size();
        paintRing(cr, Math.min(width, height), this._percent);
        cr.$dispose();
    }

    // MARK: - The menu

    /** Lists the session's activities, then the system's, then the shared counter. */
    _fillMenu() {
        this._menuStale = false;
        this._list.removeAll();
        const available = this._sides.filter(side => side.available);
        if (available.length === 0) {
            this._addLine('The network activity service is not running');
            return;
        }
        const lists = new Map(available.map(side => [side, side.activities()]));
        const activities = [...lists.values()].flat();
        for (const activity of activities.slice(0, MENU_ACTIVITY_LIMIT))
            this._list.addMenuItem(this._activityItem(activity));
        if (activities.length > MENU_ACTIVITY_LIMIT)
            this._addLine(`… and ${activities.length - MENU_ACTIVITY_LIMIT} more`);
        const shared = available.reduce((sum, side) =>
            sum + Math.max(0, side.count - lists.get(side).length), 0);
        if (shared > 0)
            this._addLine(sharedLine(shared));
        if (activities.length === 0 && shared === 0)
            this._addLine('Idle');
        const progress = mergedProgress(available, side => lists.get(side));
        if (progress !== null && activities.filter(activity => activity.total > 0).length > 1)
            this._addLine(`Overall ${wholePercent(progress)}%`);
    }

    _activityItem(activity) {
        const item = new PopupMenu.PopupBaseMenuItem({reactive: false, can_focus: false});
        item.add_child(new St.Icon({
            gicon: activityIcon(activity),
            fallback_gicon: kindIcon(activity),
            style_class: 'popup-menu-icon netactivity-icon',
        }));
        const lines = new St.BoxLayout({...VERTICAL, x_expand: true});
        lines.add_child(new St.Label({text: activityTitle(activity), style_class: 'netactivity-title'}));
        const details = activityDetails(activity);
        if (details)
            lines.add_child(new St.Label({text: details, style_class: 'netactivity-details'}));
        item.add_child(lines);
        return item;
    }

    _addLine(text) {
        const item = new PopupMenu.PopupMenuItem(text, {reactive: false, can_focus: false});
        this._list.addMenuItem(item);
    }

    // MARK: - Tear-down

    /** The menu's text, line by line: what a test reads through org.gnome.Shell.Eval. */
    menuText() {
        const texts = [];
        const walk = actor => {
            if (actor instanceof St.Label && actor.visible && actor.text)
                texts.push(actor.text);
            for (const child of actor.get_children())
                walk(child);
        };
        walk(this.menu.box);
        return texts;
    }

    /** Each activity row's icon, as the names of its icon: what a test reads through Eval. */
    menuIcons() {
        const icons = [];
        for (const item of this._list._getMenuItems()) {
            // Not the ornament, an St.Icon too in every row from GNOME 46 on.
            const icon = item.get_children().find(child => child instanceof St.Icon &&
                child.has_style_class_name('netactivity-icon'));
            if (icon)
                icons.push(icon.gicon?.get_names?.() ?? [icon.gicon?.to_string() ?? '']);
        }
        return icons;
    }

    _onDestroy() {
        this._ledger.release();
        for (const side of this._sides ?? [])
            side.destroy();
        this._sides = [];
        super._onDestroy();
    }
});

/** The button in the top bar while the extension is enabled: what enable() makes. */
class NetActivityPresence {
    constructor(role) {
        this.indicator = new NetActivityIndicator();
        Main.panel.addToStatusArea(role, this.indicator);
        // GNOME 43 shows the button's container when it is added, whatever the button says,
        // so hidden means the button itself, set after adding it.
        this.indicator.start();
    }

    /** Undoes everything the constructor did: the panel forgets the role when it goes. */
    destroy() {
        this.indicator.destroy();
        this.indicator = null;
    }
}
