#!/usr/bin/env bash
# Runs a test command (`make test`: swift test) once more when its process crashed.
#
# Foundation's Process.run in Swift 6.3.1 can crash the process that calls it
# (swift-corelibs-foundation #5472, merged after 6.3.1: a 256-byte copy of each dirent of
# /proc/self/fd reads past glibc's buffer). The suite runs hundreds of programs, and about
# one full run in five has crashed this way. After the crash the Swift backtracer prints
# "*** Program crashed", and swift-test may then wait forever. This script watches for that
# line, stops the whole run (its process group, with the servers and peers its tests
# started) and runs the command once more. A test that fails is never run again: only a
# crash is, and only once, and the first run's crash stays in the log.
#
# A run that fails ends with its failures again, gathered from the hundreds of lines above:
# CI keeps only the last lines of a run.
#
#   scripts/retry-on-crash.sh COMMAND [ARGUMENTS...]
set -uo pipefail
crashed='^\*\*\* (Program crashed|Signal [0-9]+: Backtracing)'
for attempt in 1 2; do
    log=$(mktemp)
    setsid "$@" > >(tee "$log") 2>&1 &
    group=$!
    while kill -0 "$group" 2>/dev/null; do
        if grep -Eq "$crashed" "$log"; then
            sleep 30  # the backtrace is still being written
            kill -9 -- "-$group" 2>/dev/null
            break
        fi
        sleep 2
    done
    wait "$group"
    status=$?
    if grep -Eq "$crashed" "$log" && [ "$attempt" = 1 ]; then
        rm -f "$log"
        echo "retry-on-crash: the test process crashed (above); running the command once more" >&2
        continue
    fi
    if [ "$status" != 0 ]; then
        sleep 2  # tee's last lines, to the log and above these
        echo "retry-on-crash: the run failed ($status); its issues and failed tests, from above:" >&2
        grep -E 'recorded an issue|^✘ Test "|Fatal error|\*\*\* (Program crashed|Signal)' "$log" | cut -c1-900 | head -n 12 >&2
    fi
    rm -f "$log"
    exit "$status"
done
