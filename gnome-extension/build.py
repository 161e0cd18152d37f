#!/usr/bin/env python3
"""Builds the extension for both of GNOME Shell's formats from the one source in src/.

usage: gnome-extension/build.py OUTDIR

  OUTDIR/shell43/UUID/   GNOME 43: legacy imports, init() returning enable()/disable()
  OUTDIR/shell45/UUID/   GNOME 45 and later: an ES module, `export default class … extends Extension`
  OUTDIR/UUID.shell43.zip, OUTDIR/UUID.shell45.zip
                         what extensions.gnome.org accepts (files at the top of the zip); it
                         takes one upload per format, as the two cannot share a zip

Each extension.js is the format's imports (entry/*-head.js), the sources (src/*.js, in the
order below, which share one scope) and its entry points (entry/*-tail.js). Each build's
metadata.json lists its part of metadata.json's `shell-version`: 43 for the legacy build, 45
and later for the ES module.
"""
import json
import pathlib
import shutil
import sys
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = ["interface.js", "ledger.js", "ring.js", "text.js", "service.js", "indicator.js"]
FORMATS = {
    "shell43": ("legacy", lambda version: version < 45),
    "shell45": ("esm", lambda version: version >= 45),
}


def build(out: pathlib.Path) -> None:
    metadata = json.loads((HERE / "metadata.json").read_text())
    uuid = metadata["uuid"]
    body = "".join("\n" + (HERE / "src" / name).read_text() for name in SOURCES)
    for format_name, (entry, loads) in FORMATS.items():
        folder = out / format_name / uuid
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        script = (HERE / "entry" / f"{entry}-head.js").read_text() + body + "\n" + \
            (HERE / "entry" / f"{entry}-tail.js").read_text()
        (folder / "extension.js").write_text(script)
        versions = [version for version in metadata["shell-version"] if loads(int(version))]
        shipped = dict(metadata, **{"shell-version": versions})
        (folder / "metadata.json").write_text(json.dumps(shipped, indent=2, ensure_ascii=False) + "\n")
        shutil.copy(HERE / "stylesheet.css", folder / "stylesheet.css")
        with zipfile.ZipFile(out / f"{uuid}.{format_name}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(folder.iterdir()):
                archive.write(file, file.name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build(pathlib.Path(sys.argv[1]))
