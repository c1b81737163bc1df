#!/bin/sh
# Notification fan-out measured by hand: CLIENTS streams of one
# characteristic while Benchmarks' bench-responder notifies COUNT values at
# RATE/s; prints sse-load's result (lost, latency) and the gateway's CPU.
#
#   scripts/sse-fanout.sh [CLIENTS] [RATE] [SECONDS]
#
# Needs the release gateway and Benchmarks' bench-responder
# (swift build -c release --package-path Benchmarks --product bench-responder).
set -eu
cd "$(dirname "$0")/.."
clients=${1:-1000}
rate=${2:-1000}
seconds=${3:-10}
count=$((rate * seconds))
. scripts/lib/rig.sh
cc -O2 -o "$work/sse-load" Benchmarks/Sources/sse-load/main.c
rig_bus
rig_responder
rig_gateway

"$work/sse-load" stream --linger 1 --port "$port" --path /v1/devices/B0:0B:00:00:00:01/characteristics/fff2/notifications \
    --clients "$clients" --count "$count" --idle-ms 3000 --timeout-ms $((seconds * 4000 + 60000)) >"$work/load.out" 2>&1 &
load=$!
pids="$load $pids"
until grep -q ready "$work/load.out"; do sleep 0.1; done
before=$(rig_ticks)
start=$(date +%s.%N)
echo "emit $rate $count" >&3
until grep -q "^done\|^error" "$work/responder.out"; do sleep 0.1; done
end=$(date +%s.%N)
after=$(rig_ticks)
wait "$load" || true
grep "^done\|^error" "$work/responder.out"
echo "gateway CPU while emitting: $(awk "BEGIN { printf \"%.0f\", ($after - $before) / $(getconf CLK_TCK) / ($end - $start) * 100 }")% of a core"
tail -1 "$work/load.out"
echo "gateway alive: $(kill -0 $gateway 2>/dev/null && echo yes || echo no)"; tail -5 "$work/gateway.log"
