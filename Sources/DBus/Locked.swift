public import Locking

/// A value guarded by a mutex: the project's one lock, `Locking.Locked`, under the name every
/// module that imports `DBus` uses.
public typealias Locked<Value> = Locking.Locked<Value>
