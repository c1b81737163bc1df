# Shared by the measuring scripts (scripts/sse-memory.sh, sse-fanout.sh,
# rest-read-cpu.sh): a private dbus-daemon, a BlueZ stand-in and the release
# gateway, all stopped (and the work directory removed) on exit. Source it
# from the repository root, then call the functions in order.

work=$(mktemp -d)
pids=""
rig_cleanup() {
    exec 3>&- 2>/dev/null || true
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap rig_cleanup EXIT INT TERM

# A private bus that lets anyone own and call anything; sets $address.
rig_bus() {
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
}

# Benchmarks' bench-responder, driven through file descriptor 3 (`echo
# "emit RATE COUNT" >&3`); its output in $work/responder.out.
rig_responder() {
    mkfifo "$work/responder.in"
    Benchmarks/.build/release/bench-responder --bus "$address" <"$work/responder.in" >"$work/responder.out" 2>&1 &
    pids="$pids $!"
    exec 3>"$work/responder.in"
    until grep -q ready "$work/responder.out"; do sleep 0.05; done
}

# The release simulator (or $SIM).
rig_simulator() {
    "${SIM:-.build/release/bluez-sim}" --bus "$address" >"$work/sim.log" 2>&1 &
    pids="$pids $!"
}

# The release gateway (or $GATEWAY) with its state in the work directory,
# extra `serve` options as arguments; sets $port and $gateway once /health
# answers.
rig_gateway() {
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "${GATEWAY:-.build/release/blegateway}" serve --bus "$address" --listen "127.0.0.1:$port" --log-level warning \
        --max-connections 4096 --max-connections-per-client 0 --state-dir "$work/state" "$@" >"$work/gateway.log" 2>&1 &
    gateway=$!
    pids="$gateway $pids"
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.05; done
}

# The gateway's CPU time so far, in clock ticks.
rig_ticks() { awk '{ print $14 + $15 }' "/proc/$gateway/stat"; }
