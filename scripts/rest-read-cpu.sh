#!/bin/sh
# The gateway's CPU per REST read, measured by hand: wrk reads one
# characteristic of Benchmarks' bench-responder through the release
# gateway with CONNECTIONS connections for SECONDS; prints reads/s, the
# latency (its p50 too) and the gateway's CPU time per read. PERF=1 also
# records a profile (perf record -e cpu-clock -g) of the gateway into
# perf.data. GATEWAY=path measures another build (A/B comparisons).
#
#   scripts/rest-read-cpu.sh [CONNECTIONS] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
connections=${1:-1}
seconds=${2:-5}
. scripts/lib/rig.sh
rig_bus
rig_responder
rig_gateway
url="http://127.0.0.1:$port/v1/devices/B0:0B:00:00:00:01/characteristics/fff1/value"
until curl -sf "$url" >/dev/null; do sleep 0.05; done
wrk -t1 -c"$connections" -d1s "$url" >/dev/null
if [ "${PERF:-0}" = 1 ]; then
    perf record -e cpu-clock -g -o perf.data -p "$gateway" -- sleep "$seconds" >/dev/null 2>&1 &
    recorder=$!
fi
before=$(rig_ticks)
wrk -t1 -c"$connections" -d"${seconds}s" --latency "$url" >"$work/wrk.out"
after=$(rig_ticks)
requests=$(awk '/requests in/ { print $1 }' "$work/wrk.out")
grep -E "Latency  |^ +50%|Requests/sec|Non-2xx|Socket errors" "$work/wrk.out"
echo "gateway CPU per read: $(awk "BEGIN { printf \"%.0f\", ($after - $before) / $(getconf CLK_TCK) * 1e6 / $requests }") µs ($requests reads)"
[ -z "${recorder:-}" ] || wait "$recorder"
