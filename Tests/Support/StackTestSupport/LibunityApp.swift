import BusTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real libunity app: `/usr/bin/python3` with PyGObject driving
/// `Unity.LauncherEntry.get_for_desktop_id(ID.desktop)` in a GLib main loop.
///
/// `steps` are applied one at a time: the first at start, each next one on `advance()`
/// (SIGUSR1). A step is `progress=0.25,visible=1`. It prints `applied N unity-running=B` once
/// libunity has had the chance to send the step's update, and `unity-running=B` whenever
/// libunity sees `com.canonical.Unity` come or go.
public final class LibunityApp {
    public let process: ChildProcess
    private var step = 0

    public init(_ id: String, steps: [String], address: String) throws {
        process = try ChildProcess(
            "/usr/bin/python3", ["-c", Self.program, id + ".desktop"] + steps,
            environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        try waitFor("applied 0 ")
    }

    /// Applies the next step and waits until libunity has sent it (if it sends at all).
    public func advance() throws {
        step += 1
        process.send(signal: SIGUSR1)
        try waitFor("applied \(step) ")
    }

    public func waitFor(_ text: String) throws {
        try waitUntil("the libunity app to print '\(text)'") {
            guard process.isRunning || process.stdoutText.contains(text) else {
                throw BusTestError("the libunity app exited: \(process.stderrText)")
            }
            return process.stdoutText.contains(text)
        }
    }

    /// Exits the way an app does (SIGTERM ends its main loop): libunity sends nothing more.
    public func quit() throws {
        process.send(signal: SIGTERM)
        let result = try process.waitForExit(timeout: .seconds(10))
        guard result.exitStatus == 0 else { throw BusTestError("the libunity app did not exit 0: \(result)") }
    }

    public static let program = #"""
        import signal, sys
        try:
            import gi
            gi.require_version('Unity', '7.0')
            from gi.repository import GLib, Unity
        except (ImportError, ValueError) as error:
            sys.exit('libunity through PyGObject is missing (Debian: gir1.2-unity-7.0, python3-gi): %s' % error)

        entry = Unity.LauncherEntry.get_for_desktop_id(sys.argv[1])
        inspector = Unity.Inspector.get_default()
        steps = sys.argv[2:]
        loop = GLib.MainLoop()
        position = 0

        def say(text):
            print(text, flush=True)
            return False

        def running():
            return inspector.get_property('unity_running')

        def apply(index):
            for assignment in steps[index].split(','):
                key, value = assignment.split('=')
                if key == 'progress':
                    entry.set_property('progress', float(value))
                elif key == 'visible':
                    entry.set_property('progress_visible', value == '1')
            # libunity sends from an idle callback: this runs after it.
            GLib.timeout_add(100, say, 'applied %d unity-running=%s' % (index, running()))

        def advance():
            global position
            position += 1
            if position < len(steps):
                apply(position)
            return True

        inspector.connect('notify::unity-running', lambda *_: say('unity-running=%s' % running()))
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, advance)
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: loop.quit() or False)
        apply(0)
        loop.run()
        """#
}
