// Holds the extension's mergedProgress (src/service.js) to the table of cases that
// MergedSnapshotTests holds IndicatorSnapshot.merging to, so the ring in GNOME's top bar and
// every other panel agree.
//
// usage: gjs -m merged-progress.js SRC_DIR CASES.json
import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import System from 'system';

const [sourceDir, casesPath] = ARGV;
const read = path => new TextDecoder().decode(GLib.file_get_contents(path)[1]);
// The sources share one scope in the built extension; here the two that mergedProgress needs.
const source = ['interface.js', 'service.js'].map(name => read(`${sourceDir}/${name}`)).join('\n');
// eslint-disable-next-line no-new-func
const mergedProgress = new Function('Gio', 'GLib', `${source}\nreturn mergedProgress;`)(Gio, GLib);

let failures = 0;
for (const {name, sides, expected} of JSON.parse(read(casesPath)).cases) {
    const merged = mergedProgress(sides, side => side.activities);
    const agrees = expected === null ? merged === null : merged !== null && Math.abs(merged - expected) < 1e-9;
    print(`${agrees ? 'ok' : 'FAILED'}: ${name}: ${merged} (expected ${expected})`);
    if (!agrees)
        failures += 1;
}
System.exit(failures > 0 ? 1 : 0);
