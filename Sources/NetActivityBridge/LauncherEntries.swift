import DBus
import DesktopApplications
import NetActivity
import NetActivityContract

/// The launcher entries that have said anything of progress, by desktop id, and the activity
/// each one holds while its progress bar shows.
///
/// Keyed by desktop id, not by sender: an app may send every update from a new connection
/// (`gdbus emit` does), so the entry remembers only which connection updated it last. It ends
/// when `progress-visible` turns false, or when that connection leaves the bus and no other
/// update follows within `departureGrace`: libunity never sends `progress-visible false` when
/// its app exits. A one-shot timer runs only while such a departure is pending.
///
/// Bounded whatever the senders do: at most `entryLimit` entries and `activityLimit` live
/// activities, each limit said once. Confined to the bridge's loop thread.
final class LauncherEntries {
    private struct Entry {
        var progress: Double?
        var visible = false
        var activity: Activity?
        /// The connection that updated it last.
        var sender: BusName
    }

    /// How long an entry outlives the connection that updated it last, for an app that sends
    /// each update from a connection of its own.
    static let departureGrace: Duration = .seconds(1)
    /// Entries followed at once: a sender inventing app_uris costs no more than this.
    static let entryLimit = 4_096
    /// Live launcher activities at once: the service takes `activitiesPerOwner` from the
    /// bridge's one connection, and the rest is left to the bridge's other sources.
    static let activityLimit = NetActivityBus.Limits.activitiesPerOwner - 24

    private let loop: EventLoop
    private let client: NetActivityClient
    private let desktopEntries: DesktopEntries
    private let problems: (String) -> Void

    private var entries: [String: Entry] = [:]
    /// The desktop ids each connection updated last, so its departure finds them at once.
    private var bySender: [BusName: Set<String>] = [:]
    /// Entries whose last sender left, and when they end unless another update comes.
    private var departing: [String: ContinuousClock.Instant] = [:]
    private var departureTimer: (id: EventLoop.TimerID, deadline: ContinuousClock.Instant)?
    private let clock = ContinuousClock()
    private var liveActivities = 0
    private var saidEntryLimit = false
    private var saidActivityLimit = false

    init(loop: EventLoop, client: NetActivityClient, desktopEntries: DesktopEntries, problems: @escaping (String) -> Void) {
        self.desktopEntries = desktopEntries
        self.loop = loop
        self.client = client
        self.problems = problems
    }

    // MARK: - What the bus says

    /// Applies an update `sender` broadcast.
    func apply(_ update: LauncherUpdate, from sender: BusName) {
        let id = update.desktopID
        var entry: Entry
        if let known = entries[id] {
            entry = known
            if known.sender != sender { forget(id, sentBy: known.sender) }
        } else {
            guard entries.count < Self.entryLimit else {
                if !saidEntryLimit {
                    saidEntryLimit = true
                    problems("more than \(Self.entryLimit) launcher entries report progress; ignoring new ones")
                }
                return
            }
            entry = Entry(sender: sender)
        }
        entry.sender = sender
        bySender[sender, default: []].insert(id)
        departing[id] = nil

        if let progress = update.progress { entry.progress = progress }
        if let visible = update.progressVisible { entry.visible = visible }
        if entry.visible {
            if entry.activity == nil {
                entry.activity = begin(id)
                if let activity = entry.activity, let progress = entry.progress { activity.report(fraction: progress) }
            } else if let activity = entry.activity, let progress = update.progress {
                // The library keeps the latest and sends about 40 a second at most.
                activity.report(fraction: progress)
            }
        } else if let activity = entry.activity {
            end(activity)
            entry.activity = nil
        }
        entries[id] = entry
    }

    /// A unique name left the bus: the entries it updated last end after the grace period,
    /// unless another update for them comes first.
    func senderLeft(_ name: BusName) {
        guard let ids = bySender.removeValue(forKey: name) else { return }
        let deadline = clock.now + Self.departureGrace
        for id in ids { departing[id] = deadline }
        scheduleDepartures()
    }

    /// Ends every activity and forgets every entry.
    func removeAll() {
        for entry in entries.values { if let activity = entry.activity { activity.end() } }
        entries.removeAll()
        bySender.removeAll()
        departing.removeAll()
        liveActivities = 0
        if let timer = departureTimer { loop.cancel(timer.id) }
        departureTimer = nil
    }

    // MARK: - Activities

    /// A new activity for desktop id `id`, labelled with its desktop entry's name; nil past
    /// `activityLimit`.
    private func begin(_ id: String) -> Activity? {
        guard liveActivities < Self.activityLimit else {
            if !saidActivityLimit {
                saidActivityLimit = true
                problems("more than \(Self.activityLimit) launcher entries show progress at once; the rest are not shown")
            }
            return nil
        }
        liveActivities += 1
        // The launcher API says how far along, never what: a download, an update, a render.
        let hints = ActivityHints(application: id, icon: icon(of: id), kind: .other)
        return client.begin(desktopEntries.name(of: id) ?? id, hints: hints)
    }

    /// The desktop entry's icon, when it fits the service's hint; a cut path would name nothing.
    private func icon(of id: String) -> String? {
        guard let icon = desktopEntries.icon(of: id), icon.utf8.count <= NetActivityBus.Hint.maximumBytes else {
            return nil
        }
        return icon
    }

    private func end(_ activity: Activity) {
        activity.end()
        liveActivities -= 1
    }

    // MARK: - Departures

    private func forget(_ id: String, sentBy sender: BusName) {
        guard var ids = bySender[sender] else { return }
        ids.remove(id)
        bySender[sender] = ids.isEmpty ? nil : ids
    }

    /// Keeps one timer for the earliest pending departure, none while there is none.
    private func scheduleDepartures() {
        guard let earliest = departing.values.min() else {
            if let timer = departureTimer { loop.cancel(timer.id) }
            departureTimer = nil
            return
        }
        if let timer = departureTimer {
            guard timer.deadline > earliest else { return }
            loop.cancel(timer.id)
        }
        let id = loop.schedule(after: earliest - clock.now) { [weak self] in
            guard let self else { return }
            self.departureTimer = nil
            self.endDeparted()
        }
        departureTimer = (id, earliest)
    }

    /// Ends the entries whose grace period has passed without an update.
    private func endDeparted() {
        let now = clock.now
        for (id, deadline) in departing where deadline <= now {
            departing[id] = nil
            if let entry = entries.removeValue(forKey: id), let activity = entry.activity { end(activity) }
        }
        scheduleDepartures()
    }
}
