#!/bin/sh
# tests/fuzz/run.sh - builds the libFuzzer targets with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer and runs each for a while.
#
#   tests/fuzz/run.sh [target...]     (default: every target)
#
# FUZZ_SECONDS  seconds per target (default 180)
# FUZZ_RUNS     stop a target after this many inputs instead (0: by time)
# FUZZ_DIR      the build directory (default build-fuzz)
# FUZZ_FLAGS    more libFuzzer flags, e.g. "-max_len=65536"
#
# -entropic=0: libFuzzer 14's entropic scheduler spends most of its time in
# UpdateFeatureFrequency on these targets (25 times fewer executions on
# fuzz_commands); the classic scheduler keeps them fast.
#
# New interesting inputs go to $FUZZ_DIR/fuzz-corpus/<target>/ (kept
# between runs), crashes to $FUZZ_DIR/fuzz-crashes/<target>/. Prints each
# target's executions, executions per second and result; exits 1 if any
# target found a crash. A crash becomes a regression by copying its file to
# tests/fuzz/regress/<target>/ (see docs/testing.md).
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dir=${FUZZ_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-180}
runs=${FUZZ_RUNS:-0}
flags=${FUZZ_FLAGS:-}
targets=${*:-commands rdb resp ring sbe snapshot script}

cd "$top" || exit 1
if [ ! -d "$dir" ]; then
    CC=clang meson setup "$dir" -Dfuzz=enabled -Dtests=false \
        -Dbench=disabled -Db_sanitize=address,undefined -Db_lundef=false \
        || exit 1
fi
meson compile -C "$dir" || exit 1

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

failed=0
summary=""
for t in $targets; do
    exe="$dir/tests/fuzz/fuzz_$t"
    work="$dir/fuzz-corpus/$t"
    crashes="$dir/fuzz-crashes/$t"
    log="$dir/fuzz-$t.log"
    dict=""
    [ -f "$here/dict/$t.dict" ] && dict="-dict=$here/dict/$t.dict"
    mkdir -p "$work" "$crashes"
    if [ "$runs" -gt 0 ]; then
        limit="-runs=$runs"
    else
        limit="-max_total_time=$seconds"
    fi
    echo "fuzz_$t: $limit (log $log)"
    # shellcheck disable=SC2086
    "$exe" -print_final_stats=1 -entropic=0 -artifact_prefix="$crashes/" \
        $limit $dict \
        $flags "$work" "$here/corpus/$t" "$here/regress/$t" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        result=ok
    else
        result="CRASH (exit $rc): $(ls "$crashes" | tail -1)"
        failed=1
    fi
    line=$(printf '%-10s %12s execs %8s exec/s  %s' "$t" "${execs:-?}" \
           "${rate:-?}" "$result")
    echo "$line"
    summary="$summary$line
"
done
echo
echo "target          executions   exec/s  result"
printf '%s' "$summary"
exit $failed
