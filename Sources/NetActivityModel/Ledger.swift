/// The bookkeeping behind `Count`, `Progress`, `Rate` and `Activities`: the shared counter and
/// the live tracked activities, with the contract's limits.
///
/// A value type with no clock and no notion of time. Every mutating call either succeeds or
/// throws a ``LedgerError`` and changes nothing. `begin` is O(1) amortised, `update` and `end`
/// O(log n); `release(owner:)` is O(k log n) in that owner's k activities; reading
/// ``activities`` is O(n).
public struct Ledger: Sendable {
    /// `push()` while ``sharedCount`` equals this throws ``LedgerError/counterLimit(limit:)``.
    public static let maximumSharedCount: UInt32 = 65_536
    /// The longest label, in UTF-8 bytes.
    public static let maximumLabelBytes = 256
    /// The most live activities one owner may have.
    public static let maximumActivitiesPerOwner = 1_024
    /// The most live activities in all.
    public static let maximumActivities = 65_536
    /// The most live activities the owners of one user id may have together, where the
    /// ledger is told user ids (on the system bus).
    public static let maximumActivitiesPerUser = 1_024

    /// The shared counter moved by `push()` and `pop()`.
    public private(set) var sharedCount: UInt32 = 0

    // Activities in id order, with each slot's id beside it in `slotIDs`. Ids only grow, so
    // appending keeps the order and a binary search over `slotIDs` finds an activity: no hash
    // table to keep up to date on every begin and end. An ended activity leaves a nil (its id
    // stays) until `compactIfSparse()` squeezes the holes out.
    private var slots: [Activity?] = []
    private var slotIDs: [ActivityID] = []
    private var liveCount = 0
    private var idsByOwner: [String: Set<ActivityID>] = [:]
    // Where begins carry user ids: each such owner's user id, and the live activities per user.
    private var userOfOwner: [String: UInt32] = [:]
    private var activitiesByUser: [UInt32: Int] = [:]
    // Running sums, so `progress` and `rate` are O(1): bytes over the byte activities (UInt128
    // holds a million UInt64 totals without overflow), fractions over the fraction-mode ones,
    // and rates over those with a rate. Each floating sum is reset to 0 whenever its count
    // is, so rounding never leaves an idle service with a rate of 1e-12.
    private var completedSum: UInt128 = 0
    private var totalSum: UInt128 = 0
    private var byteActivityCount = 0
    private var fractionSum = 0.0
    private var fractionActivityCount = 0
    private var rateSum = 0.0
    private var ratedActivityCount = 0
    // Activities with a rate, by when their rate falls to 0 unless bytes move again.
    private var stalls = StallQueue()
    private var nextID: ActivityID?
    private let activityLimit: Int
    // The largest emptied owner set kept for the owner's next begin.
    private static let keptEmptyOwnerCapacity = 64

    /// Bumped by every change to ``activities``, so an observer can skip comparing arrays
    /// that cannot have changed. Never reused.
    private(set) var activitiesRevision: UInt64 = 0

    /// Creates an empty ledger: counter 0, no activities, first id 1.
    public init() {
        self.init(firstActivityID: 1, activityLimit: Self.maximumActivities)
    }

    /// Creates an empty ledger with a different first id or global cap, so tests can reach
    /// id exhaustion and the global cap without a million calls.
    init(firstActivityID: ActivityID, activityLimit: Int) {
        nextID = firstActivityID
        self.activityLimit = activityLimit
    }

    // MARK: - Derived values

    /// The `Count` property: ``sharedCount`` plus the number of live activities, saturating.
    public var count: UInt32 {
        let (sum, overflow) = sharedCount.addingReportingOverflow(UInt32(clamping: liveCount))
        return overflow ? .max : sum
    }

    /// The `Active` property: `count > 0`.
    public var isActive: Bool {
        sharedCount > 0 || liveCount > 0
    }

    /// The `Progress` property (version 3): byte activities weigh by their total, each
    /// fraction-mode activity as much as the mean total of the byte activities (1 when there
    /// are none): (ΣC + W·ΣF) / (ΣT + W·|F|); `-1.0` when no activity knows how far it is.
    /// Without fraction-mode activities this is Σcompleted / Σtotal exactly.
    public var progress: Double {
        guard fractionActivityCount > 0 else {
            return totalSum == 0 ? -1.0 : Double(completedSum) / Double(totalSum)
        }
        let weight = byteActivityCount > 0 ? Double(totalSum) / Double(byteActivityCount) : 1
        let progress =
            (Double(completedSum) + weight * fractionSum) / (Double(totalSum) + weight * Double(fractionActivityCount))
        return min(1, max(0, progress))
    }

    /// The main object's `Rate`: the sum of the live activities' rates, in bytes per second.
    public var rate: Double {
        ratedActivityCount == 0 ? 0 : max(0, rateSum)
    }

    /// When ``stallRates(at:)`` next has an activity to look at: the earliest moment a rate may
    /// fall to 0. Nil when no activity has a rate, so an idle service sets no timer.
    public var nextStall: Instant? { stalls.first?.due }

    /// The `Activities` property: the live activities sorted by id.
    public var activities: [Activity] {
        slots.compactMap { $0 }
    }

    /// The live activity with this id, or nil.
    public func activity(_ id: ActivityID) -> Activity? {
        slot(of: id).flatMap { slots[$0] }
    }

    /// How many live activities there are.
    public var activityTotal: Int { liveCount }

    /// The ids of `owner`'s live activities, in order.
    public func activityIDs(owner: String) -> [ActivityID] {
        (idsByOwner[owner] ?? []).sorted()
    }

    /// How many live activities `owner` has.
    public func activityCount(owner: String) -> Int {
        idsByOwner[owner]?.count ?? 0
    }

    // MARK: - Shared counter

    /// Adds one to the shared counter.
    ///
    /// - Throws: ``LedgerError/counterLimit(limit:)`` when it is already at
    ///   ``maximumSharedCount``.
    public mutating func push() throws(LedgerError) {
        guard sharedCount < Self.maximumSharedCount else {
            throw .counterLimit(limit: Self.maximumSharedCount)
        }
        sharedCount += 1
    }

    /// Takes one from the shared counter. Tracked activities do not count here.
    ///
    /// - Throws: ``LedgerError/notActive`` when the shared counter is 0.
    public mutating func pop() throws(LedgerError) {
        guard sharedCount > 0 else { throw .notActive }
        sharedCount -= 1
    }

    // MARK: - Tracked activities

    /// Starts a tracked activity owned by `owner`, with unknown progress, and returns its id.
    ///
    /// Ids start at 1, strictly increase and are never reused, even after `end` or
    /// `release(owner:)`; a refused call uses no id.
    ///
    /// With a `userID`, the owners of that user id may have at most
    /// ``maximumActivitiesPerUser`` live activities together (an owner's user id never changes).
    ///
    /// - Throws: ``LedgerError/labelTooLong(bytes:limit:)``,
    ///   ``LedgerError/ownerLimit(owner:limit:)``, ``LedgerError/userLimit(userID:limit:)``,
    ///   ``LedgerError/activityLimit(limit:)``, ``LedgerError/idsExhausted``, checked in that order.
    public mutating func begin(
        owner: String, label: String, started: UInt64, userID: UInt32? = nil, hints: ActivityHints = ActivityHints()
    ) throws(LedgerError) -> ActivityID {
        let bytes = label.utf8.count
        guard bytes <= Self.maximumLabelBytes else {
            throw .labelTooLong(bytes: bytes, limit: Self.maximumLabelBytes)
        }
        // Two checks written out: an array of the pairs would be an allocation on every begin.
        if hints.application.utf8.count > ActivityHints.maximumBytes {
            throw .hintTooLong(key: "application", bytes: hints.application.utf8.count, limit: ActivityHints.maximumBytes)
        }
        if hints.icon.utf8.count > ActivityHints.maximumBytes {
            throw .hintTooLong(key: "icon", bytes: hints.icon.utf8.count, limit: ActivityHints.maximumBytes)
        }
        // One hash of the owner per call: the index stays valid until idsByOwner changes.
        let ownerEntry = idsByOwner.index(forKey: owner)
        guard (ownerEntry.map { idsByOwner.values[$0].count } ?? 0) < Self.maximumActivitiesPerOwner else {
            throw .ownerLimit(owner: owner, limit: Self.maximumActivitiesPerOwner)
        }
        if let userID, activitiesByUser[userID, default: 0] >= Self.maximumActivitiesPerUser {
            throw .userLimit(userID: userID, limit: Self.maximumActivitiesPerUser)
        }
        guard liveCount < activityLimit else {
            throw .activityLimit(limit: activityLimit)
        }
        guard let id = nextID else { throw .idsExhausted }
        if let userID {
            userOfOwner[owner] = userID
            activitiesByUser[userID, default: 0] += 1
        }

        nextID = id == .max ? nil : id + 1
        slots.append(Activity(id: id, owner: owner, label: label, completed: 0, total: 0, started: started, hints: hints))
        slotIDs.append(id)
        liveCount += 1
        if let ownerEntry {
            idsByOwner.values[ownerEntry].insert(id)
        } else {
            idsByOwner[owner] = [id]
        }
        activitiesRevision += 1
        return id
    }

    /// Sets the byte progress of activity `id`; `total` 0 means unknown. An activity in
    /// fraction mode leaves it. Returns whether anything changed (the same values again change
    /// nothing).
    ///
    /// With `now`, the update is a sample of the activity's rate (``RateMeter``); without it
    /// the rate is left as it is.
    ///
    /// - Throws: ``LedgerError/unknownActivity(_:)``, ``LedgerError/notOwner(_:)``, and
    ///   ``LedgerError/completedExceedsTotal(completed:total:)`` (only when `total > 0`),
    ///   checked in that order.
    @discardableResult
    public mutating func update(
        _ id: ActivityID, by owner: String, completed: UInt64, total: UInt64, at now: Instant? = nil
    ) throws(LedgerError) -> Bool {
        let index = try ownedSlot(id, by: owner)
        guard total == 0 || completed <= total else {
            throw .completedExceedsTotal(completed: completed, total: total)
        }
        guard var activity = slots[index] else { return false }
        let before = activity
        subtractProgress(of: activity)
        activity.completed = completed
        activity.total = total
        activity.reportedFraction = nil
        if let now, let rate = activity.meter.sample(completed, at: now) {
            activity.rate = rate
            if rate > 0, !activity.meter.queuedForStall, let moved = activity.meter.lastMoved {
                activity.meter.queuedForStall = true
                stalls.insert(id, due: moved + RateMeter.stallTimeout)
            }
        }
        addProgress(of: activity)
        slots[index] = activity
        guard activity != before else { return false }
        activitiesRevision += 1
        return true
    }

    /// Sets the progress of activity `id` as a fraction (fraction mode): its bytes become 0/0
    /// and its rate 0 until a later ``update(_:by:completed:total:at:)`` reports bytes again.
    /// Returns whether anything changed.
    ///
    /// - Throws: ``LedgerError/unknownActivity(_:)``, ``LedgerError/notOwner(_:)``, then
    ///   ``LedgerError/invalidFraction(_:)`` for a fraction outside 0...1 or not a number.
    @discardableResult
    public mutating func updateFraction(_ id: ActivityID, by owner: String, fraction: Double) throws(LedgerError) -> Bool {
        let index = try ownedSlot(id, by: owner)
        guard fraction.isFinite, fraction >= 0, fraction <= 1 else { throw .invalidFraction(fraction) }
        guard var activity = slots[index] else { return false }
        let before = activity
        subtractProgress(of: activity)
        activity.completed = 0
        activity.total = 0
        activity.reportedFraction = fraction
        activity.rate = 0
        activity.meter.reset()
        addProgress(of: activity)
        slots[index] = activity
        guard activity != before else { return false }
        activitiesRevision += 1
        return true
    }

    /// Sets to 0 the rate of every activity that has moved no bytes for
    /// ``RateMeter/stallTimeout`` by `now`; returns their ids, in the order they stalled.
    /// O(log n) per activity looked at; each activity with a rate is looked at about once per
    /// stall timeout.
    public mutating func stallRates(at now: Instant) -> [ActivityID] {
        var stalled: [ActivityID] = []
        while let entry = stalls.first, entry.due <= now {
            let id = entry.id
            stalls.removeFirst()
            guard let index = slot(of: id), var activity = slots[index], activity.meter.queuedForStall else { continue }
            if let moved = activity.meter.lastMoved, now < moved + RateMeter.stallTimeout {
                // Bytes moved since it was queued: look again when they will have stopped for long enough.
                stalls.insert(id, due: moved + RateMeter.stallTimeout)
                continue
            }
            activity.meter.queuedForStall = false
            guard activity.rate != 0 else { continue }
            subtractProgress(of: activity)
            activity.rate = 0
            addProgress(of: activity)
            slots[index] = activity
            activitiesRevision += 1
            stalled.append(id)
        }
        return stalled
    }

    /// Ends activity `id`.
    ///
    /// - Throws: ``LedgerError/unknownActivity(_:)``, then ``LedgerError/notOwner(_:)``.
    public mutating func end(_ id: ActivityID, by owner: String) throws(LedgerError) {
        let index = try ownedSlot(id, by: owner)
        remove(at: index)
        if let userID = userOfOwner[owner] { releaseUserSlots(userID, 1) }
        // ownedSlot found the activity owned by `owner`, so the owner has an entry holding `id`.
        // An emptied entry stays until `release(owner:)` (the owner leaving the bus), so a client
        // that runs one activity at a time does not rebuild it on every begin; a large one goes
        // now, so an idle client holds no more than a small empty set.
        if let ownerEntry = idsByOwner.index(forKey: owner) {
            idsByOwner.values[ownerEntry].remove(id)
            let ids = idsByOwner.values[ownerEntry]
            if ids.isEmpty, ids.capacity > Self.keptEmptyOwnerCapacity { idsByOwner.remove(at: ownerEntry) }
        }
        activitiesRevision += 1
        compactIfSparse()
    }

    /// Ends every activity of `owner` (it left the bus); returns their ids, in order.
    ///
    /// O(k log k + k log n) in that owner's k activities. An owner with no activities is not
    /// an error.
    @discardableResult
    public mutating func release(owner: String) -> [ActivityID] {
        let userID = userOfOwner.removeValue(forKey: owner)
        guard let ids = idsByOwner.removeValue(forKey: owner), !ids.isEmpty else { return [] }
        for id in ids {
            if let index = slot(of: id) { remove(at: index) }
        }
        if let userID { releaseUserSlots(userID, ids.count) }
        activitiesRevision += 1
        compactIfSparse()
        return ids.sorted()
    }

    /// How many live activities the owners of `userID` have together.
    public func activityCount(userID: UInt32) -> Int {
        activitiesByUser[userID] ?? 0
    }

    private mutating func releaseUserSlots(_ userID: UInt32, _ count: Int) {
        let left = activitiesByUser[userID, default: 0] - count
        activitiesByUser[userID] = left > 0 ? left : nil
    }

    // MARK: - Storage

    /// The slot of live activity `id` if `owner` owns it.
    private func ownedSlot(_ id: ActivityID, by owner: String) throws(LedgerError) -> Int {
        guard let index = slot(of: id), let activity = slots[index] else {
            throw .unknownActivity(id)
        }
        guard activity.owner == owner else { throw .notOwner(id) }
        return index
    }

    /// The slot that holds (or held) activity `id`, by binary search; nil if none does.
    private func slot(of id: ActivityID) -> Int? {
        var low = 0
        var high = slotIDs.count
        while low < high {
            let middle = low + (high - low) / 2
            if slotIDs[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < slotIDs.count && slotIDs[low] == id ? low : nil
    }

    /// Empties slot `index`; leaves the owner index to the caller.
    private mutating func remove(at index: Int) {
        guard let activity = slots[index] else { return }
        subtractProgress(of: activity)
        slots[index] = nil
        liveCount -= 1
        // Entries of ended activities are skipped when they come due; with none live, none
        // may wake an idle service.
        if liveCount == 0 { stalls.removeAll() }
    }

    /// Squeezes out the holes once they outnumber the live activities, so the slots stay at
    /// most about twice the live count and each end pays O(1) amortised.
    private mutating func compactIfSparse() {
        let holes = slots.count - liveCount
        guard holes > 64, holes > liveCount else { return }
        // In place, in id order. New storage only when the old would be more than twice what
        // is left (after a big release), so memory follows the live count.
        var kept = 0
        for index in slots.indices where slots[index] != nil {
            if index != kept {
                slots.swapAt(kept, index)
                slotIDs[kept] = slotIDs[index]
            }
            kept += 1
        }
        if slots.capacity > 2 * max(kept, 128) {
            slots = Array(slots[..<kept])
            slotIDs = Array(slotIDs[..<kept])
        } else {
            slots.removeSubrange(kept...)
            slotIDs.removeSubrange(kept...)
        }
    }

    /// Adds `activity` to the running sums behind `progress` and `rate`.
    private mutating func addProgress(of activity: Activity) {
        if activity.isByteActivity {
            completedSum += UInt128(activity.completed)
            totalSum += UInt128(activity.total)
            byteActivityCount += 1
        } else if let fraction = activity.reportedFraction {
            fractionSum += fraction
            fractionActivityCount += 1
        }
        if activity.rate > 0 {
            rateSum += activity.rate
            ratedActivityCount += 1
        }
    }

    /// Takes `activity` out of the running sums behind `progress` and `rate`.
    private mutating func subtractProgress(of activity: Activity) {
        if activity.isByteActivity {
            completedSum -= UInt128(activity.completed)
            totalSum -= UInt128(activity.total)
            byteActivityCount -= 1
        } else if let fraction = activity.reportedFraction {
            fractionActivityCount -= 1
            fractionSum = fractionActivityCount == 0 ? 0 : fractionSum - fraction
        }
        if activity.rate > 0 {
            ratedActivityCount -= 1
            rateSum = ratedActivityCount == 0 ? 0 : rateSum - activity.rate
        }
    }
}

/// Activities with a rate, by when it falls to 0: a binary min-heap, so the earliest is found
/// in O(1) and each insertion and removal costs O(log n).
struct StallQueue: Sendable {
    private var entries: [(id: ActivityID, due: Instant)] = []

    var first: (id: ActivityID, due: Instant)? { entries.first }

    mutating func insert(_ id: ActivityID, due: Instant) {
        entries.append((id, due))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].due < entries[parent].due else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeFirst() {
        guard !entries.isEmpty else { return }
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].due < entries[smallest].due { smallest = left }
            if right < entries.count, entries[right].due < entries[smallest].due { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: entries.count <= 1_024)
    }
}
