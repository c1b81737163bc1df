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
work=$(mktemp -d)
pids=""
cleanup() {
    exec 3>&- 2>/dev/null || true
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

cc -O2 -o "$work/sse-load" Benchmarks/Sources/sse-load/main.c
cat >"$work/bus.conf" <<CONF
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
  </policy>
</busconfig>
CONF
dbus-daemon --nofork --config-file="$work/bus.conf" --print-address=1 >"$work/address" 2>"$work/bus.log" &
pids="$pids $!"
while [ ! -s "$work/address" ]; do sleep 0.05; done
address=$(head -1 "$work/address")
mkfifo "$work/responder.in"
Benchmarks/.build/release/bench-responder --bus "$address" <"$work/responder.in" >"$work/responder.out" 2>&1 &
pids="$pids $!"
exec 3>"$work/responder.in"
until grep -q ready "$work/responder.out"; do sleep 0.05; done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${GATEWAY:-.build/release/blegateway}" serve --bus "$address" --listen "127.0.0.1:$port" --log-level warning \
    --max-connections 4096 --max-connections-per-client 0 >"$work/gateway.log" 2>&1 &
gateway=$!
pids="$gateway $pids"
until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.05; done

"$work/sse-load" stream --linger 1 --port "$port" --path /v1/devices/B0:0B:00:00:00:01/characteristics/fff2/notifications \
    --clients "$clients" --count "$count" --idle-ms 3000 --timeout-ms $((seconds * 4000 + 60000)) >"$work/load.out" 2>&1 &
load=$!
pids="$load $pids"
until grep -q ready "$work/load.out"; do sleep 0.1; done
ticks() { awk '{ print $14 + $15 }' "/proc/$gateway/stat"; }
before=$(ticks)
start=$(date +%s.%N)
echo "emit $rate $count" >&3
until grep -q "^done\|^error" "$work/responder.out"; do sleep 0.1; done
end=$(date +%s.%N)
after=$(ticks)
wait "$load" || true
grep "^done\|^error" "$work/responder.out"
echo "gateway CPU while emitting: $(awk "BEGIN { printf \"%.0f\", ($after - $before) / $(getconf CLK_TCK) / ($end - $start) * 100 }")% of a core"
tail -1 "$work/load.out"
echo "gateway alive: $(kill -0 $gateway 2>/dev/null && echo yes || echo no)"; tail -5 "$work/gateway.log"
