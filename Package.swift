// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "NetActivity",
    products: [
        .executable(name: "netactivityd", targets: ["netactivityd"]),
        .executable(name: "netactivity", targets: ["netactivity"]),
        .library(name: "NetActivity", targets: ["NetActivity"]),
        .library(name: "NetActivityURLSession", targets: ["NetActivityURLSession"]),
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "NetActivityModel", targets: ["NetActivityModel"]),
    ],
    targets: [
        // libdbus, reached through pkg-config; nothing else lives here.
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // The kernel's netlink and sock_diag headers, for the platform layer; nothing else lives here.
        .systemLibrary(name: "CLinux"),
        // The one lock wrapper, shared by the model and the D-Bus layer, which know nothing of
        // each other.
        .target(name: "Locking"),
        // The kernel's concepts as Swift types (descriptors, directories, /proc, the clocks),
        // their raw calls behind it and EINTR handled once.
        .target(name: "Platform", dependencies: ["CLinux"]),
        // A Swift layer over libdbus that knows nothing of network activity.
        .target(name: "DBus", dependencies: ["CDBus", "Locking", "Platform"]),
        // Counter, activities, throttle and debounce: pure Swift, driven by an injected clock.
        .target(name: "NetActivityModel", dependencies: ["Locking", "Platform"]),
        // Which application a process, a unit or an id is, and what people call it: desktop
        // entries, /proc, systemd's app unit names. Shared by the bridge and every client.
        .target(name: "DesktopApplications", dependencies: ["Locking", "Platform"]),
        // The contract: fixed names, limits, and the interfaces declared once as typed descriptors.
        .target(name: "NetActivityContract", dependencies: ["DBus", "NetActivityModel"]),
        // Binds the model to the bus as io.github.netactivity.NetActivity1.
        .target(
            name: "NetActivityService",
            dependencies: ["DBus", "DesktopApplications", "NetActivityModel", "NetActivityContract", "Platform"]),
        .executableTarget(name: "netactivityd", dependencies: ["NetActivityService"]),
        // Prints the introspection XML and the extension's names the descriptors declare: `make interface`.
        .executableTarget(name: "netactivity-interface", dependencies: ["NetActivityContract"]),
        // The client library apps import to report and watch network activity; no Foundation.
        .target(name: "NetActivity", dependencies: ["DBus", "NetActivityContract", "NetActivityModel", "DesktopApplications", "Platform"]),
        // URLSession transfers and sessions tracked by the client library (Foundation, libcurl).
        .target(name: "NetActivityURLSession", dependencies: ["NetActivity", "Locking"]),
        // The seed's NetworkActivityCenter sample made real: `swift run DownloadCenter`.
        .executableTarget(name: "DownloadCenter", dependencies: ["NetActivityURLSession"], path: "Examples/DownloadCenter"),
        // An app that holds a client and idles, built against NetActivity alone (RSS test).
        .executableTarget(name: "na-idleclient", dependencies: ["NetActivity"], path: "Tests/Support/IdleClientExecutable"),
        // `netactivity tray`: a StatusNotifierItem that follows Visible.
        .target(name: "NetActivityTray", dependencies: ["NetActivity", "NetActivityContract", "DBus", "Platform"]),
        // `netactivity bridge`: transfers PackageKit and the Unity launcher API announce, and those the
        // kernel's socket statistics show (the traffic source), reported.
        .target(
            name: "NetActivityBridge", dependencies: ["NetActivity", "NetActivityContract", "DBus", "DesktopApplications", "Platform"]),
        // `netactivity browser-host`: the browser extension's native messaging host, its framing
        // and its downloads, testable without a browser.
        .target(
            name: "NetActivityBrowser", dependencies: ["NetActivity", "NetActivityContract", "DesktopApplications", "Platform"]),
        // The `netactivity` command line: status, push/pop, run, watch, top, tray, bridge, the shell hook,
        // browser-host.
        .target(
            name: "NetActivityCLI",
            dependencies: [
                "NetActivity", "NetActivityContract", "NetActivityTray", "NetActivityBridge", "NetActivityBrowser", "DBus", "Platform",
            ]),
        .executableTarget(name: "netactivity", dependencies: ["NetActivityCLI"]),
        // How tests and benchmarks start processes and private dbus-daemons (the spawner, the
        // bus's directory, configuration and command line), without Foundation: shared by
        // BusTestSupport and the benchmark driver, which cannot depend on a test-support target.
        .target(name: "PrivateBusLauncher", dependencies: ["DBus", "Platform"], path: "Tests/Support/PrivateBusLauncher"),
        // Private dbus-daemon instances and process helpers for the test suites.
        .target(name: "BusTestSupport", dependencies: ["DBus", "PrivateBusLauncher"], path: "Tests/Support/BusTestSupport"),
        // The real netactivityd on a private bus (ServiceDaemon) and a client that looks at it
        // (ServiceProbe): how every suite starts, stops and questions the service; what a library
        // client shows a test (LibraryObservers).
        .target(
            name: "NetActivityTestSupport", dependencies: ["BusTestSupport", "DBus", "NetActivityContract", "NetActivity"],
            path: "Tests/Support/NetActivityTestSupport"),
        // The real desktop programs around the stack (a headless browser and its file server,
        // packagekitd, a libunity app, network namespaces and a pacing server) and the whole stack
        // started, faulted and sampled as one (`Stack`).
        .target(
            name: "StackTestSupport",
            dependencies: ["BusTestSupport", "NetActivityTestSupport", "DBus", "NetActivityContract", "NetActivity", "Platform", "PrivateBusLauncher"],
            path: "Tests/Support/StackTestSupport",
            // Run by the tests with python3: Firefox's driver (Marionette), the GLib watcher, the
            // KDE job client.
            exclude: ["marionette.py", "glib-watcher.py", "kde-job-client.py"]),
        // The benchmark driver: `make bench`.
        .executableTarget(
            name: "netactivity-bench", dependencies: ["DBus", "NetActivityContract", "NetActivityBridge", "PrivateBusLauncher"],
            path: "Benchmarks/Driver"),
        // A long-lived client process for tests that SIGKILL a client holding activities.
        .executableTarget(
            name: "na-testclient", dependencies: ["DBus", "BusTestSupport"], path: "Tests/Support/TestClientExecutable"),

        .testTarget(name: "NetActivityModelTests", dependencies: ["NetActivityModel", "Platform"]),
        .testTarget(name: "PlatformTests", dependencies: ["Platform", "BusTestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "Platform", "BusTestSupport"]),
        .testTarget(name: "DesktopApplicationsTests", dependencies: ["DesktopApplications", "Platform", "BusTestSupport"]),
        .testTarget(
            name: "NetActivityServiceTests",
            dependencies: [
                "NetActivityService", "NetActivityModel", "DesktopApplications", "DBus", "BusTestSupport", "NetActivityTestSupport",
                "netactivityd",
                "na-testclient",
            ]
        ),
        .testTarget(
            name: "NetActivityClientTests",
            dependencies: [
                "NetActivity", "NetActivityCLI", "NetActivityContract", "NetActivityModel", "DBus", "BusTestSupport", "NetActivityTestSupport",
                "netactivityd", "na-idleclient",
            ]
        ),
        // URLSession transfers and sessions against a loopback HTTP server and the real service.
        .testTarget(
            name: "NetActivityURLSessionTests",
            dependencies: [
                "NetActivityURLSession", "NetActivity", "NetActivityContract", "DBus", "BusTestSupport",
                "NetActivityTestSupport", "netactivityd",
            ]
        ),
        // The command line, run as users and panels run it (`top` live in tmux and a pty), and the
        // shell hook in real shells.
        .testTarget(
            name: "NetActivityCLITests",
            dependencies: [
                "NetActivityCLI", "NetActivity", "NetActivityContract", "NetActivityTray", "NetActivityBridge",
                "DesktopApplications", "DBus", "BusTestSupport", "NetActivityTestSupport", "netactivityd", "netactivity",
            ]
        ),
        .testTarget(
            name: "NetActivityTrayTests",
            dependencies: [
                "NetActivityTray", "NetActivity", "DBus", "BusTestSupport", "NetActivityTestSupport", "netactivityd",
                "netactivity",
            ]
        ),
        .testTarget(
            name: "NetActivityFaultTests",
            dependencies: [
                "NetActivity", "NetActivityContract", "DBus", "BusTestSupport", "NetActivityTestSupport", "netactivityd",
                "na-testclient",
            ]
        ),
        // `netactivity bridge` against the real programs it bridges (packagekitd, libunity).
        .testTarget(
            name: "NetActivityBridgeTests",
            dependencies: [
                "NetActivityBridge", "NetActivity", "NetActivityContract", "DBus", "BusTestSupport",
                "NetActivityTestSupport", "StackTestSupport", "Platform", "DesktopApplications", "netactivityd", "netactivity",
            ],
            // plasmashell's introspection, read by PlasmaJobsServerTests.
            exclude: ["Fixtures"]
        ),
        // `netactivity browser-host`: its framing and downloads alone, then the extension in the
        // real Chromium and Firefox against the real service.
        .testTarget(
            name: "NetActivityBrowserTests",
            dependencies: [
                "NetActivityBrowser", "NetActivity", "NetActivityContract", "DBus", "BusTestSupport",
                "NetActivityTestSupport", "StackTestSupport", "netactivityd", "netactivity",
            ]
        ),
        // The whole stack on one private bus under faults (SIGKILL, SIGSTOP, the bus restarted),
        // and its soak (`make soak`).
        .testTarget(
            name: "NetActivityStackTests",
            dependencies: [
                "NetActivity", "NetActivityContract", "DBus", "BusTestSupport", "NetActivityTestSupport", "StackTestSupport",
                "netactivityd", "netactivity",
            ]
        ),
        // The repository as a user meets it: install-deps.sh, docs, man pages, completions, and
        // the docs' examples, compiled against the client modules and run against the service.
        .testTarget(
            name: "RepositoryTests",
            dependencies: [
                "BusTestSupport", "NetActivityTestSupport", "NetActivityContract", "DBus", "NetActivity", "NetActivityURLSession",
                "netactivityd", "netactivity",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: - Fuzzing (docs/development.md#fuzzing)

package.targets += [
    // Every fuzz target's entry, defined once: the fuzzers and the regression test run it.
    .target(
        name: "FuzzTargets",
        dependencies: [
            "DBus", "Platform", "DesktopApplications", "NetActivityContract", "NetActivityService", "NetActivityBridge",
            "NetActivityBrowser", "NetActivityCLI",
        ],
        path: "Fuzz/FuzzTargets"),
    // Every corpus file and kept crash through the same entries, on the unfuzzed build.
    .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets"]),
]

// libFuzzer supplies these programs' `main`, so they are only targets when `make fuzz` builds
// with `--sanitize=fuzzer` and sets NETACTIVITY_FUZZ: elsewhere each would be one more link of
// a program that does nothing, in every build and test pass.
if Context.environment["NETACTIVITY_FUZZ"] != nil {
    package.targets += [
        .executableTarget(name: "fuzz-sock-diag", dependencies: ["FuzzTargets"], path: "Fuzz/sock-diag"),
        .executableTarget(name: "fuzz-interface-counters", dependencies: ["FuzzTargets"], path: "Fuzz/interface-counters"),
        .executableTarget(name: "fuzz-json", dependencies: ["FuzzTargets"], path: "Fuzz/json"),
        .executableTarget(name: "fuzz-native-messaging", dependencies: ["FuzzTargets"], path: "Fuzz/native-messaging"),
        .executableTarget(name: "fuzz-desktop-entry", dependencies: ["FuzzTargets"], path: "Fuzz/desktop-entry"),
        .executableTarget(name: "fuzz-app-unit", dependencies: ["FuzzTargets"], path: "Fuzz/app-unit"),
        .executableTarget(name: "fuzz-procfs", dependencies: ["FuzzTargets"], path: "Fuzz/procfs"),
        .executableTarget(name: "fuzz-launcher-update", dependencies: ["FuzzTargets"], path: "Fuzz/launcher-update"),
        .executableTarget(name: "fuzz-packagekit", dependencies: ["FuzzTargets"], path: "Fuzz/packagekit"),
        .executableTarget(name: "fuzz-shell-helper", dependencies: ["FuzzTargets"], path: "Fuzz/shell-helper"),
        .executableTarget(name: "fuzz-dbus-message", dependencies: ["FuzzTargets"], path: "Fuzz/dbus-message"),
        .executableTarget(name: "fuzz-unit-file", dependencies: ["FuzzTargets"], path: "Fuzz/unit-file"),
        .executableTarget(name: "fuzz-plasma-jobs", dependencies: ["FuzzTargets"], path: "Fuzz/plasma-jobs"),
    ]
}
