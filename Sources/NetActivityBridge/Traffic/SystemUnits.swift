import DBus
import Platform

/// Who owns a system service's socket: its unit, named by the socket's cgroup
/// (`/system.slice/apt-daily.service`), labelled with the unit's `Description`. Asked only for
/// sockets the system side counts; every socket of one unit is one application.
final class SystemUnitOwners: SocketOwnerLookup {
    private let cgroups: CgroupTree
    private let descriptions: UnitDescriptions

    init(cgroups: CgroupTree = CgroupTree(), descriptions: UnitDescriptions) {
        self.cgroups = cgroups
        self.descriptions = descriptions
    }

    func cgroupPaths(of ids: Set<UInt64>) -> [UInt64: String] {
        cgroups.paths(of: ids)
    }

    func owners(of sockets: [SocketRecord]) -> [UInt64: SocketOwner] {
        let paths = cgroups.paths(of: Set(sockets.compactMap(\.cgroupID)))
        var result: [UInt64: SocketOwner] = [:]
        for socket in sockets {
            guard let path = socket.cgroupID.flatMap({ paths[$0] }), case .systemUnit(let unit) = CgroupPlace(path: path)
            else { continue }
            result[socket.cookie] = Self.owner(unit: unit, cgroup: path, description: descriptions.description(of: unit))
        }
        return result
    }

    /// The owner of the sockets of `unit` in `cgroup`.
    static func owner(unit: String, cgroup: String, description: String?) -> SocketOwner {
        SocketOwner(
            application: unit, desktopID: nil, program: nil, label: description ?? unit, icon: SystemUnitIcons.icon(of: unit),
            cgroup: cgroup)
    }
}

/// The icons of the units whose transfers are the system's own updates: a short table, by
/// unit name without its instance (`fwupd-refresh.service`, `dnf-automatic@x.service`).
enum SystemUnitIcons {
    static let softwareUpdate = "system-software-update"

    static let table: [String: String] = [
        "apt-daily.service": softwareUpdate, "apt-daily-upgrade.service": softwareUpdate,
        "unattended-upgrades.service": softwareUpdate, "packagekit.service": softwareUpdate,
        "packagekit-offline-update.service": softwareUpdate, "snapd.service": softwareUpdate,
        "fwupd.service": softwareUpdate, "fwupd-refresh.service": softwareUpdate,
        "flatpak-system-helper.service": softwareUpdate, "dnf-makecache.service": softwareUpdate,
        "dnf-automatic.service": softwareUpdate, "dnf-automatic-install.service": softwareUpdate,
        "dnf-automatic-download.service": softwareUpdate, "zypper-refresh.service": softwareUpdate,
        "pamac-daemon.service": softwareUpdate, "rpm-ostreed.service": softwareUpdate,
        "rpm-ostreed-automatic.service": softwareUpdate, "man-db.service": softwareUpdate,
    ]

    /// The icon of `unit`, or nil for a unit not in the table.
    static func icon(of unit: String) -> String? {
        table[unit] ?? table[UnitName(unit).template]
    }
}

/// A unit name split as systemd splits it: `getty@tty1.service` is an instance of the template
/// `getty@.service`.
struct UnitName {
    let name: String
    /// The template (`getty@.service`), or the name itself when it is no instance.
    let template: String
    /// The instance (`tty1`), or nil.
    let instance: String?

    init(_ name: String) {
        self.name = name
        if let at = name.firstIndex(of: "@"), let dot = name.lastIndex(of: "."), at < dot {
            let instance = name[name.index(after: at)..<dot]
            template = String(name[...at]) + String(name[dot...])
            self.instance = instance.isEmpty ? nil : String(instance)
        } else {
            template = name
            instance = nil
        }
    }
}
