#!/bin/sh
# The gateway's memory around many idle Server-Sent-Events streams, measured
# by hand (make bench has the same phase; this one adds the minute after the
# streams close and a private-dirty breakdown).
#
#   scripts/sse-memory.sh [CLIENTS] [SETTLE_SECONDS]
#
# Starts a private dbus-daemon, the release bluez-sim and the release
# gateway (make release, then make release RELEASE_PRODUCT=bluez-sim,
# first),
# holds CLIENTS (1000) streams on /v1/events with Benchmarks' sse-load
# (compiled here with cc), and prints the gateway's RSS: idle, with the
# streams, at once after they closed, and SETTLE_SECONDS (60) later.
# Set GATEWAY_ARGS for extra `serve` options, GATEWAY or SIM for other
# binaries; KEEP=1 keeps the work dir.
set -eu
cd "$(dirname "$0")/.."
clients=${1:-1000}
settle=${2:-60}
. scripts/lib/rig.sh
cc -O2 -o "$work/sse-load" Benchmarks/Sources/sse-load/main.c
rig_bus
rig_simulator
# shellcheck disable=SC2086
rig_gateway ${GATEWAY_ARGS:-}

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$gateway/status"; }
breakdown() {
    # Resident and private dirty memory by mapping: the binary, libraries,
    # the heap and anonymous maps (malloc arenas, pools, stacks).
    awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "") ? "[anon]" : $6 }
         /^Rss:/ { rss[name] += $2 }
         /^Private_Dirty:/ { dirty[name] += $2 }
         END { for (n in rss) if (rss[n] >= 512) printf "    %8d KiB resident, %8d KiB private dirty  %s\n", rss[n], dirty[n], n }' \
        "/proc/$gateway/smaps" | sort -n -r | head -8
    echo "    threads: $(ls "/proc/$gateway/task" | wc -l)"
}

sleep 2
idle=$(rss)
echo "idle: $idle KiB"
breakdown
mkfifo "$work/hold"
"$work/sse-load" hold --port "$port" --path /v1/events --clients "$clients" <"$work/hold" >"$work/load.out" 2>&1 &
load=$!
pids="$load $pids"
exec 3>"$work/hold"
until grep -q ready "$work/load.out"; do sleep 0.1; done
sleep 3
with=$(rss)
echo "with $clients streams: $with KiB ($(( (with - idle) * 1024 / clients )) bytes a stream)"
breakdown
exec 3>&-
wait "$load" || true
sleep 3
closed=$(rss)
echo "3 s after they closed: $closed KiB"
sleep "$settle"
after=$(rss)
echo "$settle s later: $after KiB ($(awk "BEGIN { printf \"%.2f\", $after / $idle }")x idle)"
breakdown
if [ "${TRIM:-0}" = 1 ]; then
    # Diagnosis: how much of what stayed is free memory malloc kept.
    gdb -p "$gateway" -batch -ex 'call (int)malloc_trim(0)' >/dev/null 2>&1
    echo "after malloc_trim(0): $(rss) KiB"
fi
