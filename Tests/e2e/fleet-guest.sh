#!/usr/bin/env bash
# The fleet in the bluez-vm guest (Tests/e2e/fleet.sh's --guest-cmd): a
# mosquitto broker and two gateways on the one real bluetoothd, each using
# only its own adapter (--use-adapters), as two gateways in two rooms would:
#
#   g-a  hci0  0.0.0.0:8080 (forwarded to the host, where the checks run)
#   g-b  hci2  127.0.0.1:8081 (reached through g-a's /v1/fleet/ routes)
#
# Presence comes from each gateway's own passive presence scan
# (--mqtt-presence passive), as a fleet at rest runs. bluetoothd runs
# without -E, so it is the low-duty discovery (10 s every 40 s): with -E,
# bluetoothd 5.66 aborted (a malloc assertion) at the first RegisterMonitor
# on hci2 here. Continuous discovery on both adapters (a scan stream each)
# restarted scanning every few seconds, and links made meanwhile failed
# their GATT set-up on the emulated radio.
#
#   fleet-guest.sh BLEGATEWAY
set -uo pipefail

BIN=$1
RUN=${E2E_RUN:?}
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "[fleet-guest $(up)s] $*"; }
waitfor() {
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}
listening() { ss -ltnH "sport = :$1" | grep -q .; }

children=()
# On the way out (the rig allows a second): each gateway's subscriptions
# and its events since it started, for whoever reads a failed run.
finish() {
    for port in 8080 8081; do
        curl -s --max-time 0.7 "http://127.0.0.1:$port/v1/subscriptions" > "$RUN/subscriptions-$port.json" &
        curl -s --max-time 0.7 -H 'Last-Event-ID: 0' "http://127.0.0.1:$port/v1/events" > "$RUN/events-$port.sse" &
    done
    sleep 0.8
    kill "${children[@]}" 2> /dev/null
    exit 0
}
trap finish TERM INT

# hci2 is powered by bluetoothd (AutoEnable) as hci0 is; made sure of here.
timeout 10 busctl --system set-property org.bluez /org/bluez/hci2 org.bluez.Adapter1 Powered b true \
    || log "could not power hci2"

cat > /tmp/mosquitto.conf << 'CONF'
listener 1883 127.0.0.1
allow_anonymous true
persistence false
CONF
mosquitto -c /tmp/mosquitto.conf > "$RUN/mosquitto.log" 2>&1 &
children+=($!)
waitfor 20 listening 1883 || log "mosquitto is not listening"

# A short keep-alive and loss rule: a roam in seconds, as docs/fleet.md
# describes for a fleet that wants it.
common=(serve --mqtt mqtt://127.0.0.1:1883 --mqtt-commands --mqtt-keepalive 5 --mqtt-roam-lost-after 2
    --mqtt-presence passive --log-level debug)
"$BIN" "${common[@]}" --gateway-id g-a --use-adapters hci0 --adapter hci0 --listen 0.0.0.0:8080 \
    --state-dir /tmp/state-a > "$RUN/gateway-a.log" 2>&1 &
children+=($!)
waitfor 60 listening 8080 || log "g-a is not listening"
"$BIN" "${common[@]}" --gateway-id g-b --use-adapters hci2 --adapter hci2 --listen 127.0.0.1:8081 \
    --state-dir /tmp/state-b > "$RUN/gateway-b.log" 2>&1 &
children+=($!)
waitfor 60 listening 8081 || log "g-b is not listening"
log "broker and gateways up"
wait
