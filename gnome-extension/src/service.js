// MARK: - One service, on one bus

/**
 * A proxy's cached `property` (one of interface.js's, which name the declared type) as a JS
 * value, or `fallback` while it is unknown or not of that type (whoever owns the name on the
 * bus may send anything).
 */
function cachedValue(proxy, property, fallback) {
    const variant = proxy?.get_cached_property(property.name);
    if (!variant || variant.get_type_string() !== property.type)
        return fallback;
    const value = variant.unpack();
    return typeof value === 'number' && !Number.isFinite(value) ? fallback : value;
}

/**
 * Follows `netactivityd` on one bus as `netactivity watch` does: a proxy for the main object
 * (its cached properties, kept current by PropertiesChanged) and an object manager client
 * for the activity objects. Both follow the name's owner, so a restarted service is picked
 * up, and neither starts the service by asking. Every change calls `onChange`.
 */
class ServiceSide {
    /**
     * @param {string} bus 'session' or 'system'
     * @param {Ledger} ledger where the signal connections are recorded
     * @param {function()} onChange called on every change
     */
    constructor(bus, ledger, onChange) {
        this.bus = bus;
        this._proxy = null;
        this._manager = null;
        this._cancellable = new Gio.Cancellable();
        const busType = bus === 'system' ? Gio.BusType.SYSTEM : Gio.BusType.SESSION;

        Gio.DBusProxy.new_for_bus(busType, Gio.DBusProxyFlags.DO_NOT_AUTO_START, null,
            BUS_NAME, OBJECT_PATH, MAIN_INTERFACE, this._cancellable, (_source, result) => {
                let proxy;
                try {
                    proxy = Gio.DBusProxy.new_for_bus_finish(result);
                } catch (error) {
                    this._report(error);
                    return;
                }
                this._proxy = proxy;
                ledger.connect(proxy, 'g-properties-changed', () => onChange());
                ledger.connect(proxy, 'notify::g-name-owner', () => onChange());
                onChange();
            });

        const manager = new Gio.DBusObjectManagerClient({
            bus_type: busType,
            flags: Gio.DBusObjectManagerClientFlags.DO_NOT_AUTO_START,
            name: BUS_NAME,
            object_path: OBJECT_PATH,
        });
        manager.init_async(GLib.PRIORITY_DEFAULT, this._cancellable, (_source, result) => {
            try {
                manager.init_finish(result);
            } catch (error) {
                this._report(error);
                return;
            }
            this._manager = manager;
            ledger.connect(manager, 'object-added', () => onChange());
            ledger.connect(manager, 'object-removed', () => onChange());
            ledger.connect(manager, 'interface-proxy-properties-changed', () => onChange());
            ledger.connect(manager, 'notify::name-owner', () => onChange());
            onChange();
        });
    }

    /** Whether the service runs now: its name has an owner. */
    get available() {
        return this._proxy !== null && this._proxy.g_name_owner !== null;
    }

    /** The main object's cached `property`, or `fallback` while unknown. */
    _property(property, fallback) {
        return cachedValue(this._proxy, property, fallback);
    }

    /** The debounced `Visible`: what the top bar follows. */
    get visible() {
        return this.available && this._property(MAIN_PROPERTIES.visible, false) === true;
    }

    /** `Count`: the shared counter plus the live tracked activities. */
    get count() {
        return this.available ? this._property(MAIN_PROPERTIES.count, 0) : 0;
    }

    /** `Progress` from 0 to 1, or null while no activity has a known one. */
    get progress() {
        const progress = this.available ? this._property(MAIN_PROPERTIES.progress, -1) : -1;
        return progress >= 0 ? Math.min(1, progress) : null;
    }

    /** The live activities, by id, each as the menu needs it. */
    activities() {
        if (this._manager === null || this._manager.name_owner === null)
            return [];
        const activities = [];
        for (const object of this._manager.get_objects()) {
            const proxy = object.get_interface(ACTIVITY_INTERFACE);
            if (proxy === null)
                continue;
            const value = (property, fallback) => cachedValue(proxy, property, fallback);
            const completed = value(ACTIVITY_PROPERTIES.completed, 0);
            const total = value(ACTIVITY_PROPERTIES.total, 0);
            // Version 3 says how far along a fraction-mode activity is; version 2 only bytes.
            let fraction = value(ACTIVITY_PROPERTIES.fraction, null);
            if (fraction === null && total > 0)
                fraction = completed / total;
            activities.push({
                bus: this.bus,
                id: value(ACTIVITY_PROPERTIES.id, 0),
                label: printable(value(ACTIVITY_PROPERTIES.label, '')),
                application: printable(value(ACTIVITY_PROPERTIES.application, '')),
                claimedApplication: printable(value(ACTIVITY_PROPERTIES.claimedApplication, '')),
                icon: printable(value(ACTIVITY_PROPERTIES.icon, '')),
                kind: printable(value(ACTIVITY_PROPERTIES.kind, 'other')),
                completed,
                total,
                fraction: fraction !== null && fraction >= 0 ? fraction : null,
                rate: value(ACTIVITY_PROPERTIES.rate, null),
            });
        }
        return activities.sort((a, b) => a.id - b.id);
    }

    _report(error) {
        if (!error.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
            console.warn(`NetActivity: no ${this.bus} bus: ${error.message}`);
    }

    /** Stops following: pending set-ups are cancelled; the ledger holds the connections. */
    destroy() {
        this._cancellable.cancel();
        this._proxy = null;
        this._manager = null;
    }
}

/**
 * The progress over `activities`, as IndicatorSnapshot.progress(of:) computes it: bytes over
 * the activities with a total, and each fraction-only activity (no total, a fraction the
 * service reports) weighed as one of the average size of those; null when none says how far
 * it is.
 */
function activitiesProgress(activities) {
    let completed = 0;
    let total = 0;
    let byteActivities = 0;
    let fractions = 0;
    let fractionActivities = 0;
    for (const activity of activities) {
        if (activity.total > 0) {
            completed += Math.min(activity.completed, activity.total);
            total += activity.total;
            byteActivities += 1;
        } else if (activity.fraction !== null) {
            fractions += activity.fraction;
            fractionActivities += 1;
        }
    }
    if (byteActivities + fractionActivities === 0)
        return null;
    const weight = byteActivities > 0 ? total / byteActivities : 1;
    return Math.min(1, Math.max(0, (completed + weight * fractions) / (total + weight * fractionActivities)));
}

/**
 * The session's and the system's progress as one, as IndicatorSnapshot.merging does it: the
 * one that reports a progress; with both, the progress over both lists when both know how far
 * their activities are, else the mean of the two. `activitiesOf` gives a side's activities when
 * they are already at hand. A test holds the two to one table of cases
 * (gnome-extension/tests/merged-progress-cases.json).
 */
function mergedProgress(sides, activitiesOf = side => side.activities()) {
    const reporting = sides.filter(side => side.progress !== null);
    if (reporting.length <= 1)
        return reporting.length ? reporting[0].progress : null;
    const lists = reporting.map(activitiesOf);
    if (lists.some(list => activitiesProgress(list) === null))
        return reporting.reduce((sum, each) => sum + each.progress, 0) / reporting.length;
    return activitiesProgress(lists.flat());
}
