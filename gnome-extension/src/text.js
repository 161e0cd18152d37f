// MARK: - What the menu says

/** How many desktop entries `desktopEntry` remembers before it starts over. */
const DESKTOP_ENTRY_CACHE_LIMIT = 256;
const desktopEntries = new Map();
/** What can name a desktop entry: letters, digits, `.`, `-`, `_`; no path, no hidden file. */
const DESKTOP_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;

/**
 * The installed desktop entry of `id` (`org.gnome.Software`, without `.desktop`) as
 * `{name, icon}`, or null. Ids come from other processes, so only names that can be desktop
 * ids are looked up, and what is learned is kept: the open menu redraws up to 4 times a second.
 */
function desktopEntry(id) {
    if (!DESKTOP_ID.test(id))
        return null;
    if (desktopEntries.has(id))
        return desktopEntries.get(id);
    let entry = null;
    const info = (GioUnix ?? Gio).DesktopAppInfo.new(`${id}.desktop`);
    if (info !== null)
        entry = {name: info.get_name(), icon: info.get_icon()};
    if (desktopEntries.size >= DESKTOP_ENTRY_CACHE_LIMIT)
        desktopEntries.clear();
    desktopEntries.set(id, entry);
    return entry;
}

/**
 * An application id as people read it: its desktop entry's name where one is installed
 * ("org.gnome.Software" → "Software"), else the id's last part, capitalised
 * ("org.mozilla.firefox" → "Firefox", "curl" → "Curl").
 */
function applicationName(application) {
    const name = desktopEntry(application)?.name;
    if (name)
        return name;
    const short = application.split('.').pop();
    return short ? short[0].toUpperCase() + short.slice(1) : null;
}

/** The symbolic icon of each kind of transfer, for a row whose application names no icon. */
const KIND_ICONS = Object.freeze({
    download: 'folder-download-symbolic',
    upload: 'document-send-symbolic',
    sync: 'emblem-synchronizing-symbolic',
    update: 'software-update-available-symbolic',
    other: 'network-transmit-receive-symbolic',
});

/**
 * The icon of an activity's menu row: its application's (the one it is for, else its owner's)
 * where that application's desktop entry names one, else the `icon` hint where it is a themed
 * icon name, else the symbolic icon of its kind.
 */
function activityIcon(activity) {
    for (const id of [activity.claimedApplication, activity.application]) {
        const icon = id ? desktopEntry(id)?.icon : null;
        if (icon)
            return icon;
    }
    if (DESKTOP_ID.test(activity.icon ?? ''))
        return new Gio.ThemedIcon({name: activity.icon});
    return kindIcon(activity);
}

/** The symbolic icon of the activity's kind: also what shows where its own icon is missing. */
function kindIcon(activity) {
    return new Gio.ThemedIcon({name: KIND_ICONS[activity.kind] ?? KIND_ICONS.other});
}

/**
 * The activity's first line: "Firefox — Sync feeds" as the tray and `netactivity watch` say
 * it, "system: " first for the system service's. An application the caller only claims (the
 * `application` hint) is shown as such beside the one the bus vouches for.
 */
function activityTitle(activity) {
    const own = applicationName(activity.application);
    const claimed = applicationName(activity.claimedApplication);
    let who = own;
    if (claimed && claimed !== own)
        who = own ? `${claimed} (via ${own})` : claimed;
    return printable((activity.bus === 'system' ? 'system: ' : '') + (who ? `${who} — ` : '') + activity.label);
}

/** `fraction` of 0–1 as a whole percent, rounded down: 100 only when complete. */
function wholePercent(fraction) {
    return Math.floor(Math.min(1, Math.max(0, fraction)) * 100);
}

/** "42 s", "3 min", "1 h 5 min": the time left, rounded up to what is worth reading. */
function duration(seconds) {
    if (seconds < 60)
        return `${Math.max(1, Math.ceil(seconds))} s`;
    const minutes = Math.ceil(seconds / 60);
    if (minutes < 60)
        return `${minutes} min`;
    const hours = Math.floor(minutes / 60);
    return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
}

/**
 * The activity's second line: "42% · 1.2 MB/s · 3 min left", each part only when known;
 * rate and time left only from services with contract version 3 (`Rate`).
 */
function activityDetails(activity) {
    const parts = [];
    if (activity.fraction !== null)
        parts.push(`${wholePercent(activity.fraction)}%`);
    if (activity.rate !== null && activity.rate > 0) {
        parts.push(`${GLib.format_size(Math.round(activity.rate))}/s`);
        if (activity.total > 0 && activity.completed < activity.total)
            parts.push(`${duration((activity.total - activity.completed) / activity.rate)} left`);
    }
    return parts.join(' · ');
}

/**
 * Text another program wrote, as a person may read it: the rule the command line and the tray
 * follow (docs/cli.md, "Text from other programs"). Control characters (C0, DEL, C1) and
 * unassigned code points show as "?"; format characters (the bidirectional controls, which
 * would make a file name read backwards, zero-width characters, tags) are left out; line and
 * paragraph separators show as spaces.
 */
function printable(text) {
    return text.replace(/[\p{Cc}\p{Cn}\p{Cs}]/gu, '?').replace(/\p{Cf}/gu, '').replace(/[\u2028\u2029]/g, ' ');
}

/** "3 other connections": the shared counter, what Count holds beyond the listed activities. */
function sharedLine(shared) {
    return `${shared} other connection${shared === 1 ? '' : 's'}`;
}
