/// Whose sockets a traffic source counts: one user's, reported on that user's session bus, or
/// the system services', reported on the system bus. Decided per socket from its cgroup as
/// systemd names it, and from its uid only where no systemd slice names it. Pure Swift.
enum TrafficAudience: Equatable, Sendable {
    /// A user's own: every socket in `user-UID.slice` (whatever its uid: `sudo apt upgrade` in
    /// a terminal), and where no slice tells, the sockets of `uid`.
    case user(UInt32)
    /// The system's: every socket in a slice other than `user.slice` (`system.slice/UNIT`,
    /// `machine.slice/…`), whatever its uid.
    case system

    /// Whether a socket of `socketUID` in `cgroup` (nil when unknown) is this audience's.
    /// Another user's slice is nobody's here: that user's own bridge shows it.
    func counts(socketUID: UInt32, cgroup: String?) -> Bool {
        let place = cgroup.map(CgroupPlace.init(path:)) ?? .unplaced
        switch (self, place) {
        case (.user(let uid), .userSlice(let owner)): return owner == uid
        case (.user, .systemUnit): return false
        case (.user(let uid), .unplaced): return socketUID == uid
        case (.system, .systemUnit): return true
        case (.system, _): return false
        }
    }
}

/// Where systemd placed a cgroup: in a user's slice, in a system unit, or nowhere it names
/// (the root cgroup, a machine without systemd, a container's own hierarchy).
enum CgroupPlace: Equatable, Sendable {
    /// `/user.slice/user-UID.slice/…`.
    case userSlice(UInt32)
    /// The first unit below the slices other than `user.slice`: `/system.slice/apt-daily.service`,
    /// `/system.slice/system-getty.slice/getty@tty1.service/payload`, `/machine.slice/libpod-ID.scope`.
    case systemUnit(String)
    case unplaced

    init(path: String) {
        let components = path.split(separator: "/")
        guard let top = components.first, top.hasSuffix(".slice") else {
            self = .unplaced
            return
        }
        if top == "user.slice" {
            // `user-1000.slice`; anything else under user.slice names no user.
            if components.count > 1, components[1].hasPrefix("user-"), components[1].hasSuffix(".slice"),
                let uid = UInt32(components[1].dropFirst(5).dropLast(6))
            {
                self = .userSlice(uid)
            } else {
                self = .unplaced
            }
            return
        }
        guard let unit = components.first(where: { !$0.hasSuffix(".slice") }), unit.contains(".") else {
            self = .unplaced
            return
        }
        self = .systemUnit(String(unit))
    }
}
