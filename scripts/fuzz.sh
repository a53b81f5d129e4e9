#!/usr/bin/env bash
# Builds the libFuzzer targets of Fuzz/ (with -sanitize=fuzzer,address) and runs each for
# FUZZ_SECONDS (default 600) from its committed seed corpus, one after the other, one
# process each. New inputs go to a scratch directory, never into Fuzz/Corpus. Prints each
# target's runs, speed and coverage; exits non-zero when any target crashed, leaked, timed
# out or ran out of memory, after running the rest. A crashing input is kept in
# $FUZZ_SCRATCH/artifacts/<target>/; replay it with `<bin>/<target> FILE`.
#
# Usage: scripts/fuzz.sh [TARGET...]   (default: all; FUZZ_SECONDS, FUZZ_SCRATCH may be set)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-600}
scratch=${FUZZ_SCRATCH:-.build-fuzz}
all=(phone bbox decimal datetime clusterid geojson geojsonseq csv jsonbody photo)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi

# Release (-O keeps Swift's overflow and bounds checks and every precondition) runs several
# times faster than debug. lld, because gold fails on ASan-instrumented Swift objects.
flags=(--package-path Fuzz --scratch-path "$scratch" -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)
mkdir -p "$scratch"
swift build "${flags[@]}" 2>&1 | { grep -v "Cannot export local symbol" || true; }
bin=$(swift build "${flags[@]}" --show-bin-path)
for target in "${targets[@]}"; do
    [ -x "$bin/$target" ] || { echo "fuzz: no target $target (build failed?); targets: ${all[*]}" >&2; exit 2; }
done

# A Swift trap is left to libFuzzer, which saves the input: the Swift runtime's own
# backtracer would read other threads' memory and make AddressSanitizer report itself.
export SWIFT_BACKTRACE=enable=no
failed=()
summary=()
for target in "${targets[@]}"; do
    corpus="$scratch/corpus/$target"
    artifacts="$scratch/artifacts/$target"
    log="$scratch/logs/$target.log"
    rm -rf "$corpus"
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    options=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/")
    [ -f "Fuzz/Dictionaries/$target.dict" ] && options+=(-dict="Fuzz/Dictionaries/$target.dict")
    echo "== $target: ${seconds}s from Fuzz/Corpus/$target (log: $log)"
    status=0
    # The first directory takes the new inputs; the committed one is only read.
    "$bin/$target" "${options[@]}" "$corpus" "Fuzz/Corpus/$target" >"$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    coverage=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1 || true)
    if [ "$status" -eq 0 ]; then
        result="ok"
    else
        result="FAILED (exit $status): $(grep -m1 -oE 'ERROR: [A-Za-z]+: [^ ]+( [^ ]+)?|Fatal error: .*|==[0-9]+==ERROR: .*|ALARM: .*|out-of-memory.*' "$log" || echo 'see the log')"
        failed+=("$target")
        grep -E 'Test unit written to|^artifact_prefix' "$log" | tail -1 || true
        tail -n 40 "$log"
    fi
    line=$(printf '%-11s %10s runs %8s exec/s   %-36s %s' "$target" "${runs:-?}" "${speed:-?}" "${coverage:-?}" "$result")
    echo "$line"
    summary+=("$line")
done

echo
echo "== fuzzing: ${seconds}s per target"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${failed[*]} failed; the inputs are in $scratch/artifacts/, replay one with $bin/<target> FILE" >&2
    exit 1
fi
