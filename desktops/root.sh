#!/usr/bin/env bash
# The Debian root filesystems the desktop matrix runs newer desktops in (docs/development.md).
#
# usage: desktops/root.sh make SUITE...        make each suite's root that is missing or whose
#                                              package list changed (all of them together)
#        desktops/root.sh path SUITE           print the suite's root (made first when missing)
#        desktops/root.sh enter SUITE [--bind HOST:INSIDE]... [--ro-bind HOST:INSIDE]... -- COMMAND...
#                                              run COMMAND as root inside a throw-away copy
#        desktops/root.sh session SUITE [BINDS]... -- COMMAND...
#                                              as enter, with a system bus running, as the user
#                                              `tester` (uid 1000) under dbus-run-session
#        desktops/root.sh clean                remove every root and the package pool
#
# A suite's packages are listed in desktops/SUITE.packages. Roots live under $NETACTIVITY_ROOTS
# (default /var/cache/netactivity), one directory a suite and package list; a root whose list
# changed is made again and the old one removed. Packages are fetched once into a pool there,
# in parallel, and shared by every root that needs the same file. The mirror is the host's own
# Debian mirror (NETACTIVITY_DEBIAN_MIRROR overrides it).
#
# A root is entered through an overlay in a mount and PID namespace of its own, with fresh /run
# and /tmp: nothing a test does changes the cached root, and when COMMAND ends every process
# and mount it made goes with the namespace. Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${NETACTIVITY_ROOTS:-/var/cache/netactivity}
roots=$cache/roots
pool=$cache/debs
# Part of every root's key: raise it when what `build_root` does to a root changes.
format=1

die() { echo "desktops: $*" >&2; exit 1; }

need_tools() {
    [ "$(id -u)" = 0 ] || die "the desktop matrix needs root (debootstrap, chroot, namespaces)"
    local missing=()
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    command -v unshare >/dev/null || missing+=(util-linux)
    command -v curl >/dev/null || missing+=(curl)
    command -v ip >/dev/null || missing+=(iproute2)
    if [ ${#missing[@]} -gt 0 ]; then
        if command -v apt-get >/dev/null; then
            apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
                { apt-get update -qq >/dev/null 2>&1 && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1; } ||
                die "cannot install ${missing[*]}: the desktop matrix needs them (apt-get install ${missing[*]})"
        else
            die "the desktop matrix needs ${missing[*]}, and there is no apt-get to install them"
        fi
    fi
}

# The host's Debian mirror, from its apt sources.
mirror() {
    if [ -n "${NETACTIVITY_DEBIAN_MIRROR:-}" ]; then echo "$NETACTIVITY_DEBIAN_MIRROR"; return; fi
    local uri
    uri=$( { sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n'
             sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' \
                 /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null; } |
           grep -E '/debian/?$' | sed -n 1p)
    [ -n "$uri" ] || die "no Debian mirror in this machine's apt sources (set NETACTIVITY_DEBIAN_MIRROR)"
    echo "${uri%/}"
}

packages() {
    local list=$here/$1.packages
    [ -f "$list" ] || die "no package list for suite '$1' ($list)"
    sed 's/#.*//' "$list" | tr -s ' \t' '\n\n' | sed '/^$/d'
}

root_of() {
    local key
    key=$( { echo "$format $1"; packages "$1"; } | sha256sum | cut -c1-16)
    echo "$roots/$1-$key"
}

# Removes a root, unmounting first whatever a killed run left mounted inside it.
remove_root() {
    local mounted
    mounted=$(awk -v root="$1/" 'index($2 "/", root) == 1 { print $2 }' /proc/mounts | sort -r)
    [ -z "$mounted" ] || umount -l $mounted
    rm -rf --one-file-system "$1"
}

in_root() { local root=$1; shift; chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

# Stage one of a root: the base system, apt set up, the user, and the list of files apt would
# fetch for the suite's packages (in ROOT.uris).
bootstrap_root() {
    local suite=$1 root=$2 script=/usr/share/debootstrap/scripts/$1
    # Older debootstraps have no script for the newest suites; sid's fits any of them.
    [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
    remove_root "$root"
    mkdir -p "$root"
    # The base's packages go through the pool one suite at a time (debootstrap writes a file it
    # fetches to a fixed name there); unpacking them runs in parallel.
    (
        flock 9
        debootstrap --variant=minbase --download-only --cache-dir="$pool" "$suite" "$root" "$(mirror)" "$script"
    ) 9>"$pool/.debootstrap.lock" >"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; die "debootstrap $suite failed (log above)"; }
    debootstrap --variant=minbase --cache-dir="$pool" "$suite" "$root" "$(mirror)" "$script" >>"$root.log" 2>&1 ||
        { tail -n 20 "$root.log" >&2; die "debootstrap $suite failed (log above)"; }
    # The registry's indexes of the suites in development can read as expired.
    printf 'Acquire::Check-Valid-Until "false";\nAPT::Install-Recommends "false";\nAcquire::Languages "none";\n' \
        >"$root/etc/apt/apt.conf.d/90netactivity"
    echo "deb $(mirror) $suite main" >"$root/etc/apt/sources.list"
    in_root "$root" apt-get update -qq >>"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; die "apt-get update in $suite failed"; }
    in_root "$root" apt-get install -y --print-uris -qq $(packages "$suite") >"$root.uris" 2>>"$root.log" ||
        { tail -n 20 "$root.log" >&2; die "the packages of desktops/$suite.packages cannot all be installed in $suite (log above)"; }
    in_root "$root" useradd --create-home --uid 1000 --shell /bin/bash tester
}

# Stage two: the packages, all fetched into the pool by then.
finish_root() {
    local suite=$1 root=$2
    local archives=$root/var/cache/apt/archives file
    sed -n "s/^'[^']*' \([^ ]*\) .*/\1/p" "$root.uris" | while read -r file; do
        ln -f "$pool/$file" "$archives/$file"
    done
    # /proc for the packages' scripts, in a mount namespace that drops it however this ends.
    unshare --mount --propagation private -- sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" \
        /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' \
        "$root" apt-get install -y --no-download -q $(packages "$suite") >>"$root.log" 2>&1 || {
        tail -n 20 "$root.log" >&2
        die "installing the packages of desktops/$suite.packages in $suite failed (log above)"
    }
    in_root "$root" apt-get clean
    # Package setup leaves things behind that would make the desktops look for a real seat.
    rm -rf "$root/run/"* "$root/tmp/"*
    echo "$suite $(date -u +%F)" >"$root/.netactivity-root"
    rm -f "$root.uris"
}

# Fetches every file the roots' lists name that the pool lacks, once each, in parallel,
# checking each against its SHA256.
fetch_into_pool() {
    local list
    list=$(mktemp)
    cat "$@" | sort -u -k2,2 | while read -r uri file size hash; do
        [ -e "$pool/$file" ] || echo "$uri $file $hash"
    done | tr -d "'" >"$list"
    if [ -s "$list" ]; then
        echo "desktops: fetching $(wc -l <"$list") packages" >&2
        mkdir -p "$pool/partial"
        # apt names the hash it knows: MD5Sum:…, SHA256:…, SHA512:…
        xargs -P 8 -L 1 sh -c 'sum=$(echo "${3%%:*}" | tr "A-Z" "a-z" | sed "s/sum\$//")sum
            curl -fsS --retry 5 --retry-delay 1 --retry-all-errors -o "$0/partial/$2" "$1" &&
            echo "${3#*:}  $0/partial/$2" | "$sum" --quiet -c - && mv "$0/partial/$2" "$0/$2"' "$pool" <"$list" ||
            { rm -f "$list"; die "fetching packages failed"; }
    fi
    rm -f "$list"
}

make_roots() {
    need_tools
    mkdir -p "$roots" "$pool"
    exec 8>"$roots/.lock"
    flock 8
    local suite root todo=() pids=() failed=0
    for suite in "$@"; do
        root=$(root_of "$suite")
        [ -e "$root/.netactivity-root" ] || todo+=("$suite")
    done
    [ ${#todo[@]} -gt 0 ] || return 0
    SECONDS=0
    local reach
    for suite in "${todo[@]}"; do
        reach=$(curl -fsS -o /dev/null --max-time 20 "$(mirror)/dists/$suite/InRelease" 2>&1) ||
            die "cannot reach the Debian mirror $(mirror) for $suite ($reach): the desktop matrix makes its roots from it"
    done
    echo "desktops: making the roots of ${todo[*]} in $roots (once; later runs reuse them)" >&2
    for suite in "${todo[@]}"; do bootstrap_root "$suite" "$(root_of "$suite")" & pids+=($!); done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    [ $failed = 0 ] || exit 1
    local uris=()
    for suite in "${todo[@]}"; do uris+=("$(root_of "$suite").uris"); done
    fetch_into_pool "${uris[@]}"
    pids=()
    for suite in "${todo[@]}"; do finish_root "$suite" "$(root_of "$suite")" & pids+=($!); done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    [ $failed = 0 ] || exit 1
    # Roots of an older package list or format, and packages no root uses any more.
    for suite in "${todo[@]}"; do
        root=$(root_of "$suite")
        for old in "$roots/$suite"-*; do
            case "$old" in "$root" | "$root".log) ;; *) remove_root "$old" ;; esac
        done
    done
    echo "desktops: made the roots of ${todo[*]} in $SECONDS s" >&2
}

# enter SUITE [--bind H:I | --ro-bind H:I]... [--session] [--private-network] -- COMMAND...
# --private-network: a network namespace of the test's own with loopback alone, so that two
# desktops running side by side cannot meet on an abstract socket (Xvfb's :9) or a port.
enter() {
    local suite=$1 session=0 network=()
    shift
    local root binds=()
    root=$(root_of "$suite")
    [ -e "$root/.netactivity-root" ] || make_roots "$suite"
    while [ $# -gt 0 ]; do
        case "$1" in
        --bind | --ro-bind) binds+=("$1" "$2"); shift 2 ;;
        --session) session=1; shift ;;
        --private-network) network=(--net); shift ;;
        --) shift; break ;;
        *) die "enter: unknown option $1" ;;
        esac
    done
    [ $# -gt 0 ] || die "enter: no command"
    local work
    work=$(mktemp -d /tmp/netactivity-root.XXXXXX)
    # The namespace's first process mounts the copy and runs COMMAND; when it ends, the kernel
    # ends every process left in the namespace and drops its mounts.
    local status=0
    unshare --mount --pid "${network[@]}" --fork --kill-child --propagation private -- \
        "$here/root.sh" _inside "$root" "$work" "$session" "${binds[@]}" -- "$@" || status=$?
    rm -rf "$work"
    return $status
}

# Run by `enter` inside the new namespaces.
inside() {
    local lower=$1 work=$2 session=$3
    shift 3
    local root=$work/root
    mkdir -p "$work/upper" "$work/overlay-work" "$root"
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$work/upper,workdir=$work/overlay-work" "$root"
    # In a network namespace of its own (--private-network) loopback starts down; elsewhere
    # it is up already.
    ip link set lo up
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mount -t tmpfs -o mode=0755 tmpfs "$root/run"
    mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        local from=${2%%:*} to=${2#*:}
        mkdir -p "$root$to"
        mount --bind "$from" "$root$to"
        [ "$1" = --ro-bind ] && mount -o remount,bind,ro "$root$to"
        shift 2
    done
    shift
    if [ "$session" = 1 ]; then
        mkdir -p "$root/run/dbus" "$root/run/user/1000"
        chown 1000:1000 "$root/run/user/1000"
        chmod 0700 "$root/run/user/1000"
        exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 /bin/sh -c '
            dbus-daemon --system --fork --nopidfile >/dev/null
            exec runuser -u tester -- env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/home/tester USER=tester \
                XDG_RUNTIME_DIR=/run/user/1000 dbus-run-session -- "$@"' sh "$@"
    fi
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@"
}

case "${1:-}" in
make) shift; [ $# -gt 0 ] || die "make: which suites?"; make_roots "$@" ;;
path) need_tools; [ $# = 2 ] || die "usage: $0 path SUITE"; root=$(root_of "$2"); [ -e "$root/.netactivity-root" ] || make_roots "$2"; echo "$root" ;;
enter) shift; need_tools; enter "$@" ;;
session) shift; need_tools; suite=$1; shift; enter "$suite" --session "$@" ;;
_inside) shift; inside "$@" ;;
clean) for root in "$roots"/*/; do [ -d "$root" ] && remove_root "${root%/}"; done; rm -rf "$roots" "$pool" ;;
*) echo "usage: $0 make SUITE... | path SUITE | enter SUITE [--bind H:I]... -- COMMAND... | session SUITE ... | clean" >&2; exit 2 ;;
esac
