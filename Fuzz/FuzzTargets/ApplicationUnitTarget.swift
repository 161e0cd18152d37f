import DesktopApplications

extension FuzzTarget {
    /// systemd's app unit names: the input as a `/proc/PID/cgroup` file, and as one unit name.
    public static let applicationUnit = FuzzTarget("app-unit") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        _ = ApplicationUnit.desktopID(inCgroupFile: text)
        _ = ApplicationUnit.desktopID(ofUnit: text)
    }
}
