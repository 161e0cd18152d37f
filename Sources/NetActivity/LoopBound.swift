/// A value confined to one `LoopThread`, in a box that any thread may hold and pass on but only
/// the loop's thread may open.
///
/// The library's state lives on its loop thread and is reached from the app's threads only by
/// posting work there; this box is how that work carries the state. Its invariant, on which
/// the `@unchecked Sendable` below rests: the value is reached only through `open()`, and
/// `open()` runs only on the loop's thread (asserted in debug builds), so however the box
/// travels no two threads touch the value. The value is handed in as `sending`, so whoever made
/// it keeps no other way in.
struct LoopBound<Value>: @unchecked Sendable {
    private let value: Value
    private let thread: LoopThread

    init(_ value: sending Value, on thread: LoopThread) {
        self.value = value
        self.thread = thread
    }

    /// The value. Only on the loop's thread.
    func open() -> Value {
        assert(thread.isCurrent, "a LoopBound value opened off its loop's thread")
        return value
    }

    /// Runs `work` with the value on the loop's thread. Safe from any thread.
    func perform(_ work: @escaping @Sendable (Value) -> Void) {
        thread.perform { work(open()) }
    }
}
