#!/bin/bash
# Runs the fuzz targets `make fuzz` built (docs/development.md#fuzzing).
#
#   scripts/fuzz.sh run SECONDS JOBS TARGET...   each target SECONDS on its corpus, JOBS at once
#   scripts/fuzz.sh merge TARGET...              what the runs found, minimised into Fuzz/corpus
#
# A run reads Fuzz/corpus/TARGET but writes what it finds to $FUZZ_DIR/found/TARGET, so the
# corpus changes only on request (`make fuzz-merge`). A crash, hang (an input over 10 s), leak
# or sanitizer report goes to $FUZZ_DIR/crashes/TARGET/; the run then fails, naming it.
# Each target's log is $FUZZ_DIR/logs/TARGET.log; one line per target sums it up.
set -euo pipefail

FUZZ_DIR=${FUZZ_DIR:-.build/fuzz}
BIN=${FUZZ_BIN:-$FUZZ_DIR/release}
# Extra libFuzzer flags, e.g. FUZZ_FLAGS=-jobs=1 for a long run in the background.
FUZZ_FLAGS=${FUZZ_FLAGS:-}

# libFuzzer and AddressSanitizer report a crash; Swift's backtracer would read the crashed
# process's memory first, which AddressSanitizer reports as a second error.
export SWIFT_BACKTRACE=enable=no

run_one() {
    local seconds=$1 target=$2
    local found=$FUZZ_DIR/found/$target crashes=$FUZZ_DIR/crashes/$target log=$FUZZ_DIR/logs/$target.log
    mkdir -p "$found" "$crashes" "$FUZZ_DIR/logs" "Fuzz/corpus/$target"
    local dictionary=()
    [[ -f Fuzz/dictionaries/$target.dict ]] && dictionary=(-dict="Fuzz/dictionaries/$target.dict")
    local status=0
    # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
    "$BIN/fuzz-$target" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 "${dictionary[@]}" \
        -artifact_prefix="$crashes/" $FUZZ_FLAGS "$found" "Fuzz/corpus/$target" >"$log" 2>&1 || status=$?
    # libFuzzer's last status line: "#RUNS ... cov: EDGES ft: FEATURES corp: UNITS/SIZE ...".
    local executions coverage corpus
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    corpus=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | cut -d' ' -f2)
    local artifacts
    artifacts=$(find "$crashes" -type f | wc -l)
    printf '%-20s %12s executions  cov %6s  corpus %-12s crashes %s%s\n' "$target" "${executions:-?}" "${coverage:-?}" \
        "${corpus:-?}" "$artifacts" "$([[ $status -ne 0 ]] && echo "  FAILED (exit $status): see $log" || true)"
    return "$status"
}

case ${1:-} in
run)
    seconds=$2 jobs=$3
    shift 3
    export -f run_one
    export FUZZ_DIR BIN FUZZ_FLAGS
    printf '%s\n' "$@" | xargs -P "$jobs" -I{} bash -c 'run_one "$0" "$1"' "$seconds" {}
    ;;
merge)
    shift
    for target in "$@"; do
        mkdir -p "$FUZZ_DIR/found/$target"
        "$BIN/fuzz-$target" -merge=1 "Fuzz/corpus/$target" "$FUZZ_DIR/found/$target" >"$FUZZ_DIR/logs/$target-merge.log" 2>&1
        echo "$target: $(find "Fuzz/corpus/$target" -type f | wc -l) files, $(du -sh "Fuzz/corpus/$target" | cut -f1)"
    done
    ;;
*)
    echo "usage: $0 run SECONDS JOBS TARGET... | merge TARGET..." >&2
    exit 2
    ;;
esac
