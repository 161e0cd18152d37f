import DBus

/// The names CONTRACT.md fixes for the service.
public enum NetActivityBus {
    /// The well-known bus name.
    public static let name: BusName = "io.github.netactivity.NetActivity1"
    /// The object path of the one exported object.
    public static let path: ObjectPath = "/io/github/netactivity/NetActivity1"
    /// The interface name.
    public static let interface: InterfaceName = "io.github.netactivity.NetActivity1"
    /// The service's version, the `Version` property.
    public static let version = "0.1.0"
}

extension ErrorName {
    /// `Pop` while the shared counter is 0.
    public static let notActive: ErrorName = "io.github.netactivity.NetActivity1.Error.NotActive"
    /// An activity id that is not live.
    public static let unknownActivity: ErrorName = "io.github.netactivity.NetActivity1.Error.UnknownActivity"
}
