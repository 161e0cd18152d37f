/// An event loop's timers, earliest first: a binary min-heap of deadlines beside the actions by
/// id. A cancelled timer's action goes at once and its heap entry when it comes to the top, so
/// `earliest` is always a live timer's deadline (a cancel never leaves a wake-up for nothing
/// behind) and every operation is O(log n) amortised, whatever number of timers an app keeps.
struct TimerQueue {
    private struct Entry {
        let deadline: UInt64
        let id: Int
        /// Earlier deadline first; among equal ones, the one scheduled first.
        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : id < other.id
        }
    }

    private var heap: [Entry] = []
    private var actions: [Int: () -> Void] = [:]

    /// The earliest live deadline; `UInt64.max` when there is no timer.
    var earliest: UInt64 { heap.first?.deadline ?? .max }

    /// The entries the heap holds, cancelled ones not yet dropped included: bounded by twice the
    /// live timers and a few.
    var heldEntries: Int { heap.count }

    mutating func insert(id: Int, deadline: UInt64, action: @escaping () -> Void) {
        actions[id] = action
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
    }

    /// Forgets the timer; harmless if it fired or was cancelled already.
    mutating func cancel(_ id: Int) {
        guard actions.removeValue(forKey: id) != nil else { return }
        dropCancelledTop()
        // Entries cancelled far from the top would otherwise pile up: a loop that schedules and
        // cancels a long timer again and again must not grow.
        if heap.count > 2 * actions.count + 32 {
            heap.removeAll { actions[$0.id] == nil }
            for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        }
    }

    /// Takes the earliest timer due at `now` and scheduled before `limit` (an id), with its
    /// action; nil when there is none.
    mutating func popDue(at now: UInt64, scheduledBefore limit: Int) -> (() -> Void)? {
        guard let top = heap.first, top.deadline <= now, top.id < limit else { return nil }
        removeTop()
        let action = actions.removeValue(forKey: top.id)
        dropCancelledTop()
        return action
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first, actions[top.id] == nil { removeTop() }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var first = left
            if left + 1 < heap.count, heap[left + 1].precedes(heap[left]) { first = left + 1 }
            guard heap[first].precedes(heap[parent]) else { return }
            heap.swapAt(first, parent)
            parent = first
        }
    }
}
