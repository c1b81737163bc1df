#!/bin/sh
# The gateway's CPU per REST read, measured by hand: wrk reads one
# characteristic of Benchmarks' bench-responder through the release
# gateway with CONNECTIONS connections for SECONDS; prints reads/s and the
# gateway's CPU time per read. PERF=1 also records a profile
# (perf record -e cpu-clock -g) of the gateway into perf.data.
#
#   scripts/rest-read-cpu.sh [CONNECTIONS] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
connections=${1:-1}
seconds=${2:-5}
work=$(mktemp -d)
pids=""
cleanup() {
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

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
url="http://127.0.0.1:$port/v1/devices/B0:0B:00:00:00:01/characteristics/fff1/value"
until curl -sf "$url" >/dev/null; do sleep 0.05; done
wrk -t1 -c"$connections" -d1s "$url" >/dev/null
ticks() { awk '{ print $14 + $15 }' "/proc/$gateway/stat"; }
if [ "${PERF:-0}" = 1 ]; then
    perf record -e cpu-clock -g -o perf.data -p "$gateway" -- sleep "$seconds" >/dev/null 2>&1 &
    recorder=$!
fi
before=$(ticks)
wrk -t1 -c"$connections" -d"${seconds}s" "$url" >"$work/wrk.out"
after=$(ticks)
requests=$(awk '/requests in/ { print $1 }' "$work/wrk.out")
grep -E "Latency|Requests/sec" "$work/wrk.out"
echo "gateway CPU per read: $(awk "BEGIN { printf \"%.0f\", ($after - $before) / $(getconf CLK_TCK) * 1e6 / $requests }") µs ($requests reads)"
[ -z "${recorder:-}" ] || wait "$recorder"
