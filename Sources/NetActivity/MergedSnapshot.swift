extension ActivityInfo {
    /// Which service an activity came from, for watchers that follow both buses as one
    /// indicator (`IndicatorSnapshot.merging(session:system:)`).
    public enum Bus: String, Equatable, Hashable, Sendable, CaseIterable {
        /// The user's own `netactivityd`, on the session bus.
        case session
        /// The system's `netactivityd --system`, reporting for system daemons.
        case system
    }
}

extension IndicatorSnapshot {
    /// The session's and the system's services as one indicator.
    ///
    /// Either snapshot may be nil or `serviceAvailable == false` (the service is not running):
    /// it then adds nothing, and the result is the other one's state, with its activities
    /// marked. With neither, the result is `.unavailable`.
    ///
    /// - `active`, `visible`: true when either service's is (each is debounced by its own service).
    /// - `count`: the sum, saturating at `UInt32.max`.
    /// - `activities`: the session's, then the system's, each in its own order (by id); ids of
    ///   the two services may coincide, so an entry is told apart by its `bus` too.
    /// - `rate`: the sum.
    /// - `progress`: the contract's aggregate over both lists. When both services report a
    ///   progress and both lists know how far their activities are, the aggregate over every
    ///   listed activity, so a 4 GiB download outweighs a 1 MiB one, as within one service. When only one reports a
    ///   progress, it is that one. When both do but a list lacks the totals behind its progress
    ///   (`Activities` is throttled and announced by invalidation, so a list can lag its
    ///   `Progress`), the mean of the two, for want of the bytes to weigh them.
    public static func merging(session: IndicatorSnapshot?, system: IndicatorSnapshot?) -> IndicatorSnapshot {
        let session = session.flatMap { $0.serviceAvailable ? $0 : nil }
        let system = system.flatMap { $0.serviceAvailable ? $0 : nil }
        guard session != nil || system != nil else { return .unavailable }
        let parts = [(session, ActivityInfo.Bus.session), (system, .system)]
            .compactMap { snapshot, bus in snapshot.map { ($0, bus) } }

        var merged = IndicatorSnapshot()
        merged.active = parts.contains { $0.0.active }
        merged.visible = parts.contains { $0.0.visible }
        merged.count = parts.reduce(0) { sum, part in
            let (total, overflow) = sum.addingReportingOverflow(part.0.count)
            return overflow ? .max : total
        }
        merged.activities = parts.flatMap { snapshot, bus in
            snapshot.activities.map { activity in
                var marked = activity
                marked.bus = bus
                return marked
            }
        }
        merged.progress = mergedProgress(parts.map(\.0))
        merged.rate = parts.reduce(0) { $0 + $1.0.rate }
        return merged
    }
}

// MARK: - Progress

/// Progress over the snapshots that report one; see `merging(session:system:)`.
private func mergedProgress(_ snapshots: [IndicatorSnapshot]) -> Double? {
    let reporting = snapshots.filter { $0.progress != nil }
    guard reporting.count > 1 else { return reporting.first?.progress }
    guard reporting.allSatisfy({ IndicatorSnapshot.progress(of: $0.activities) != nil }) else {
        let fractions = reporting.compactMap(\.progress)
        return fractions.reduce(0, +) / Double(fractions.count)
    }
    return IndicatorSnapshot.progress(of: reporting.lazy.flatMap(\.activities))
}
