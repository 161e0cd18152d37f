import DBus
import NetActivityContract

extension IndicatorSnapshot {
    /// The state that one reading of a service gives: the body of `GetManagedObjects`
    /// (`a{oa{sa{sv}}}`) and the main object's `GetAll`, decoded as the client library's own
    /// states are, so a one-shot reader (`netactivity status`) shows what `observe` would,
    /// attribution (application, process, user) included.
    ///
    /// - Parameters:
    ///   - managedObjects: the first argument of `GetManagedObjects`' reply, or nil when the
    ///     service has no activity objects (a version 1 service): then the activities come
    ///     from the main object's `Activities` property.
    ///   - main: the entries of `GetAll` on the main interface.
    public init(managedObjects: Value?, main: [String: Value]) {
        var mirror = IndicatorMirror()
        if let managedObjects { mirror.loadObjects(managedObjects) } else { mirror.useActivitiesProperty() }
        mirror.loadMain(main)
        self = mirror.snapshot
    }
}
