@testable import NetActivityService
import DesktopApplications
import NetActivityContract
import NetActivityModel
import Testing

/// How an owner's application is named, from real `/proc/PID/cgroup` and `/.flatpak-info`
/// contents (copied from GNOME, KDE, sway and Flatpak sessions).
@Suite struct AttributionTests {
    @Test(arguments: [
        // GNOME Shell launching a desktop app: app-gnome-APPID-PID.scope
        ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.gnome.Terminal-4242.scope\n",
         "org.gnome.Terminal"),
        // An app id with a dash, escaped by systemd
        ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.example.my\\x2dapp-17.scope\n",
         "org.example.my-app"),
        // KDE Plasma: app-LAUNCHER-APPID@RANDOM.service
        ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.kde.konsole@0a1b2c.service\n",
         "org.kde.konsole"),
        // A D-Bus-activated app service without a launcher
        ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Software.service\n",
         "org.gnome.Software"),
        // cgroup v1 lines, the app in the name=systemd hierarchy
        ("12:pids:/user.slice\n1:name=systemd:/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-999.scope\n",
         "firefox"),
        // A terminal's shell: the innermost app unit counts
        ("0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.gnome.Terminal-1.scope/vte-spawn-2.scope\n",
         "org.gnome.Terminal"),
    ])
    func systemdUnitsNameTheApplication(cgroup: String, expected: String) {
        #expect(ApplicationUnit.desktopID(inCgroupFile: cgroup) == expected)
        #expect(Attribution.application(cgroup: cgroup, flatpakInfo: nil, comm: "bash\n") == expected)
    }

    @Test(arguments: [
        "0::/user.slice/user-1000.slice/session-2.scope\n",  // a login shell: no app unit
        "0::/system.slice/packagekit.service\n",
        "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-.scope\n",
        "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-a-b-c-d.service\n",  // too many parts
        "",
        "garbage without colons",
    ])
    func otherCgroupsFallBackToTheExecutable(cgroup: String) {
        #expect(ApplicationUnit.desktopID(inCgroupFile: cgroup) == nil)
        #expect(Attribution.application(cgroup: cgroup, flatpakInfo: nil, comm: "curl\n") == "curl")
    }

    @Test func aFlatpakSandboxNamesItsAppFirst() {
        let info = """
            [Application]
            name=org.mozilla.firefox
            runtime=runtime/org.freedesktop.Platform/x86_64/23.08

            [Instance]
            instance-id=1234567890
            app-path=/var/lib/flatpak/app/org.mozilla.firefox/x86_64/stable/active/files
            """
        let cgroup = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.mozilla.firefox-88.scope\n"
        #expect(Processes.flatpakApplication(in: info) == "org.mozilla.firefox")
        #expect(Attribution.application(cgroup: cgroup, flatpakInfo: info, comm: "firefox-bin") == "org.mozilla.firefox")
        #expect(Processes.flatpakApplication(in: "[Instance]\nname=not-this\n") == nil)
        #expect(Processes.flatpakApplication(in: "[Application]\nname=\n") == nil)
        #expect(Attribution.application(cgroup: nil, flatpakInfo: nil, comm: nil) == "")
    }

    /// The model's limits are the contract's: nothing else ties the two modules' copies.
    @Test func theModelsLimitsAreTheContracts() {
        #expect(Ledger.maximumSharedCount == NetActivityBus.Limits.sharedCount)
        #expect(Ledger.maximumLabelBytes == NetActivityBus.Limits.labelBytes)
        #expect(Ledger.maximumActivitiesPerOwner == NetActivityBus.Limits.activitiesPerOwner)
        #expect(Ledger.maximumActivitiesPerUser == NetActivityBus.Limits.activitiesPerOwner)
        #expect(Ledger.maximumActivities == NetActivityBus.Limits.activities)
        #expect(ActivityHints.maximumBytes == NetActivityBus.Hint.maximumBytes)
        #expect(ActivityKind.allCases.map(\.rawValue) == NetActivityBus.Hint.kinds)
    }
}
