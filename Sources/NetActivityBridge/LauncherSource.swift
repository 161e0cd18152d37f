import DBus
import NetActivity

/// The Unity launcher API's progress bars (Electron's `setProgressBar`, libunity apps,
/// Chromium's downloads on KDE): each launcher entry whose `progress-visible` is true is one
/// activity, labelled with its desktop entry's name. See docs/bridges.md.
///
/// On a connection of its own to the session bus it hears two broadcasts: every
/// `com.canonical.Unity.LauncherEntry.Update`, and the bus's `NameOwnerChanged` for names that
/// lose their owner (a sender leaving, `com.canonical.Unity` freed). Nothing else wakes it.
final class LauncherSource: BridgeSource {
    private let context: BridgeContext
    private var attached: AttachedConnection?
    private var server: ObjectServer?
    private var name: YieldingName?
    private var entries: LauncherEntries?

    /// The name libunity (and Electron) wait for before they send anything: it watches the name
    /// and calls nothing on it, and when an owner appears every entry sends its whole state. Docks
    /// take it for that reason; the bridge holds it while no dock does (`YieldingName`).
    static let unity: BusName = "com.canonical.Unity"
    static let updates = LauncherUpdate.signal.matchRule()
    /// `arg2=''`: only names left without an owner, not every connection that joins.
    static let departures = NameOwnerChange.departuresMatchRule

    /// How often the connection is read at most. An app may broadcast its progress 100 times a
    /// second; the service announces progress at most once per 50 ms throttle window anyway,
    /// so reading the updates once per window, together, shows the same and wakes the bridge
    /// 20 times a second instead of 100. Departures and calls on `com.canonical.Unity` wait as
    /// long at most.
    static let readInterval: Duration = .milliseconds(50)

    init(_ context: BridgeContext) {
        self.context = context
    }

    func start() throws(BusError) {
        let connection = try Connection(context.sessionBus)
        let entries = LauncherEntries(
            loop: context.loop, client: context.client, desktopEntries: context.processes.entries, problems: context.problems)
        let name = YieldingName(Self.unity, connection: connection, problems: context.problems)
        // Closed in stop(): the filter holds the name, which holds the connection.
        let attached = AttachedConnection(connection, on: context.loop, readingAtMostEvery: Self.readInterval) { message in
            if let update = LauncherUpdate(message) {
                if let sender = message.sender { entries.apply(update, from: sender) }
                return true
            }
            if let change = NameOwnerChange(message), change.newOwner == nil {
                let lost = change.name
                if lost == Self.unity {
                    name.nameFreed()
                } else if lost.isUnique {
                    entries.senderLeft(lost)
                }
                return true
            }
            return name.handle(message)
        }
        // What reaches com.canonical.Unity is answered (Introspect and Ping on "/", an error for
        // the rest): libunity and Electron call nothing there, they only watch who owns it.
        let server = ObjectServer(connection: connection)
        server.export([], at: .root)
        do {
            try connection.addMatch(Self.updates)
            try connection.addMatch(Self.departures)
            // After the subscriptions: taking the name makes every libunity app send its state.
            try name.start()
        } catch {
            attached.close()
            throw error
        }
        self.attached = attached
        self.server = server
        self.name = name
        self.entries = entries
    }

    func stop() {
        entries?.removeAll()
        name?.stop()
        attached?.close()
        attached = nil
        entries = nil
        name = nil
        server = nil
    }
}
