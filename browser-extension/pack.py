#!/usr/bin/env python3
"""Packs the extension for the stores: OUTDIR/netactivity-VERSION.zip for the Chrome Web Store
and OUTDIR/netactivity-VERSION.xpi for addons.mozilla.org (`make browser-extension`).

Both hold manifest.json and background.js, nothing else (host/, this script and the policy file
are not the extension's). The .zip's manifest is without `key`, which the Chrome Web Store
refuses: the store gives the extension its own id (docs/browsers.md). Entries are stored with
a fixed date and in a fixed order, so the same source packs to the same bytes.

usage: browser-extension/pack.py OUTDIR
"""
import json
import pathlib
import sys
import zipfile

SOURCE = pathlib.Path(__file__).resolve().parent
FILES = ["manifest.json", "background.js"]


def pack(path, manifest):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in FILES:
            data = manifest if name == "manifest.json" else (SOURCE / name).read_bytes()
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((SOURCE / "manifest.json").read_text())
    version = manifest["version"]
    pack(out / f"netactivity-{version}.xpi", (SOURCE / "manifest.json").read_bytes())
    store = dict(manifest)
    del store["key"]
    pack(out / f"netactivity-{version}.zip", (json.dumps(store, indent=2) + "\n").encode())
    print(f"built {out}/netactivity-{version}.zip (Chrome Web Store) and {out}/netactivity-{version}.xpi (addons.mozilla.org)")


if __name__ == "__main__":
    main()
