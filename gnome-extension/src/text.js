// MARK: - What the menu says

/** An application id as people read it: "org.mozilla.firefox" → "Firefox", "curl" → "Curl". */
function applicationName(application) {
    const short = application.split('.').pop();
    return short ? short[0].toUpperCase() + short.slice(1) : null;
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
    return (activity.bus === 'system' ? 'system: ' : '') + (who ? `${who} — ` : '') + activity.label;
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

/** "3 other connections": the shared counter, what Count holds beyond the listed activities. */
function sharedLine(shared) {
    return `${shared} other connection${shared === 1 ? '' : 's'}`;
}
