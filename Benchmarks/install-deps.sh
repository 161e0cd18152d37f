#!/usr/bin/env bash
# Installs what `make bench` needs beyond `make deps`: dbus-test-tool (Debian's dbus-tests), the
# floor the benchmark compares netactivityd with, and a C compiler for the toggle floor. Only
# what is missing, and without touching apt at all when nothing is. Used by `make bench-deps`.
# (valgrind and perf are for profiling by hand; see README.md, "Benchmarks".)
set -euo pipefail

missing=()
command -v dbus-test-tool >/dev/null 2>&1 || missing+=(dbus-tests)
command -v cc >/dev/null 2>&1 || missing+=(gcc)

if [ ${#missing[@]} -eq 0 ]; then
    echo "bench-deps: everything needed is installed"
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "bench-deps: missing, and no apt-get to install them: ${missing[*]}" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "bench-deps: missing ${missing[*]}; run as root (or install sudo) to install them" >&2
        exit 1
    fi
    sudo=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
echo "bench-deps: apt-get update"
"${sudo[@]}" apt-get update -q
echo "bench-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
