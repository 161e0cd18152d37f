// Loads the GNOME 45+ build as the shell would, under `gjs -m`: its imports resolved against
// real GI (GLib, Gio, GObject, and St and Clutter from the shell's typelibs) and stand-ins for
// the shell's own modules, served from a GResource at their resource:///org/gnome/shell paths.
// Then enable() and disable(), with a real netactivityd on the session bus.
//
// usage: gjs -m load.js STAND_INS.gresource EXTENSION_DIR NETACTIVITYD   (in dbus-run-session)
import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import System from 'system';

const [resourcePath, extensionDir, netactivityd] = ARGV;
let failures = 0;

function check(condition, what) {
    print(`${condition ? 'ok' : 'FAILED'}: ${what}`);
    if (!condition)
        failures += 1;
}

function sleep(milliseconds) {
    return new Promise(resolve => GLib.timeout_add(GLib.PRIORITY_DEFAULT, milliseconds, () => {
        resolve();
        return GLib.SOURCE_REMOVE;
    }));
}

async function waitFor(what, predicate, milliseconds = 5000) {
    for (let waited = 0; waited < milliseconds; waited += 20) {
        if (predicate())
            return true;
        await sleep(20);
    }
    check(false, `timed out waiting for ${what}`);
    return false;
}

async function run() {
    Gio.Resource.load(resourcePath)._register();
    const [, bytes] = GLib.file_get_contents(`${extensionDir}/metadata.json`);
    const metadata = JSON.parse(new TextDecoder().decode(bytes));
    check(metadata['shell-version'].includes('45'), `metadata.json lists GNOME 45 (${metadata['shell-version']})`);

    const module = await import(`file://${extensionDir}/extension.js`);
    const {Extension} = await import('resource:///org/gnome/shell/extensions/extension.js');
    const Main = await import('resource:///org/gnome/shell/ui/main.js');
    check(module.default.prototype instanceof Extension, 'the default export is a class extending Extension');

    const service = Gio.Subprocess.new([netactivityd, '--activation-delay', '0.1'], Gio.SubprocessFlags.NONE);
    try {
        const extension = new module.default(metadata);
        extension.enable();
        const button = Main.panel.statusArea[metadata.uuid];
        check(button !== undefined && !button.visible, 'enable() adds the button to the panel, hidden');

        const bus = Gio.DBus.session;
        await waitFor('the service on the bus', () => button._sides[0].available);
        bus.call_sync('io.github.netactivity.NetActivity1', '/io/github/netactivity/NetActivity1',
            'io.github.netactivity.NetActivity1', 'Push', null, null, Gio.DBusCallFlags.NONE, 2000, null);
        await waitFor('the button shown', () => button.visible);
        check(button._sides[0].count === 1, 'the shared counter followed');
        bus.call_sync('io.github.netactivity.NetActivity1', '/io/github/netactivity/NetActivity1',
            'io.github.netactivity.NetActivity1', 'Pop', null, null, Gio.DBusCallFlags.NONE, 2000, null);
        await waitFor('the button hidden', () => !button.visible);
        check(!button.visible, 'hidden again after Pop');

        const ledger = button._ledger;
        check(ledger.signals.length > 0, `the ledger holds ${ledger.signals.length} connections`);
        extension.disable();
        check(!(metadata.uuid in Main.panel.statusArea), 'disable() removes the button from the panel');
        check(ledger.signals.length === 0 && ledger.sources.size === 0,
            'disable() releases every signal connection and source');
    } finally {
        service.send_signal(15);
        await new Promise(resolve => service.wait_async(null, () => resolve()));
    }
}

const loop = new GLib.MainLoop(null, false);
run().catch(error => {
    logError(error);
    failures += 1;
}).finally(() => loop.quit());
loop.run();
print(failures ? `${failures} check(s) failed` : 'the GNOME 45+ build loads and runs under gjs -m');
System.exit(failures ? 1 : 0);
