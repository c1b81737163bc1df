#!/usr/bin/env bash
# Runs blegateway in the bluez-vm guest (the rig's --guest-cmd) and carries
# out the faults the checks on the host ask for, which only the guest can
# cause: bluetoothd stopped and started again (as `systemctl restart
# bluetooth` would), and the gateway killed with SIGKILL and started again
# on the same state directory.
#
#   guest-gateway.sh BLEGATEWAY SERVE-ARGUMENTS...
#
# The host asks through files in $E2E_RUN/control (the run's folder, shared
# with the guest): it writes the name of a fault to `request-N` and waits
# for `done-N`, which holds `ok` or what went wrong. Faults:
#   restart-bluetoothd  SIGTERM to bluetoothd, a new bluetoothd, hci1
#                       powered and the example peripheral registered again
#                       (bluetoothd forgets applications and advertisements
#                       when it exits)
#   restart-bluetoothd-experimental
#                       the same with bluetoothd -E (its advertisement
#                       monitor manager, for the passive scan steps)
#   kill-gateway        SIGKILL to the gateway, the same command again
# The gateway's output goes to this script's (the rig's guest-cmd.log).
set -uo pipefail

BIN=$1
shift
CONTROL=${E2E_RUN:?}/control
mkdir -p "$CONTROL"
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "[guest-gateway $(up)s] $*"; }
# waitfor SECONDS CMD...: polls CMD every 0.2 s.
waitfor() {
    local end=$((SECONDS + $1))
    shift
    while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done
    "$@"
}

GATEWAY=""
start_gateway() {
    "$BIN" "$@" &
    GATEWAY=$!
    log "gateway started (pid $GATEWAY): $*"
}
stop_gateway() {
    [ -n "$GATEWAY" ] || return 0
    kill "$GATEWAY" 2> /dev/null
    waitfor 20 eval '! kill -0 $GATEWAY 2> /dev/null' || kill -9 "$GATEWAY" 2> /dev/null
    wait "$GATEWAY" 2> /dev/null
}
trap 'stop_gateway; exit 0' TERM INT

has_owner() {
    dbus-send --system --reply-timeout=3000 --print-reply --dest=org.freedesktop.DBus / \
        org.freedesktop.DBus.NameHasOwner "string:$1" 2> /dev/null | grep -q 'boolean true'
}
adapter_up() {
    dbus-send --system --reply-timeout=3000 --print-reply --dest=org.bluez "/org/bluez/$1" \
        org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Address > /dev/null 2>&1
}
listening() { ss -ltnH "sport = :8080" | grep -q .; }
# fail WHY: what went wrong with the fault asked for, for the host.
WHY=""
fail() { WHY=$1; log "$1"; }

# The example peripheral's two programs, as the rig started them (the rig
# writes them to /tmp with the adapter chosen by PERIPH_HCI).
restart_peripheral() {
    local script pid
    for script in example-gatt-server example-advertisement; do
        for pid in $(pgrep -f "/tmp/$script.py"); do kill "$pid" 2> /dev/null; done
    done
    sleep 0.5
    PERIPH_HCI=hci1 python3 -u /tmp/example-gatt-server.py >> "$E2E_RUN/periph-gatt-server-restarted.log" 2>&1 &
    PERIPH_HCI=hci1 python3 -u /tmp/example-advertisement.py >> "$E2E_RUN/periph-advertisement-restarted.log" 2>&1 &
    waitfor 40 eval "grep -q 'GATT application registered' '$E2E_RUN/periph-gatt-server-restarted.log' \
        && grep -q 'Advertisement registered' '$E2E_RUN/periph-advertisement-restarted.log'"
}

# restart_bluetoothd [EXTRA-ARGUMENTS...]
restart_bluetoothd() {
    local pid
    pid=$(pidof bluetoothd) || { fail "no bluetoothd running"; return 1; }
    kill "$pid"
    waitfor 20 eval '! kill -0 $pid 2> /dev/null' || { fail "bluetoothd $pid did not exit on SIGTERM"; return 1; }
    log "bluetoothd $pid stopped"
    bluetoothd -n -d "$@" >> "$E2E_RUN/bluetoothd-restarted.log" 2>&1 &
    waitfor 30 has_owner org.bluez || { fail "the new bluetoothd did not take org.bluez"; return 1; }
    waitfor 15 adapter_up hci1 || { fail "hci1 is not back on D-Bus"; return 1; }
    waitfor 5 adapter_up hci0 || { fail "hci0 is not back on D-Bus"; return 1; }
    log "bluetoothd $(pidof bluetoothd) serves org.bluez again"
    # The rig powers the peripheral's adapter itself; hci0 is left to
    # bluetoothd and the gateway, as on a host.
    timeout 10 busctl --system set-property org.bluez /org/bluez/hci1 org.bluez.Adapter1 Powered b true ||
        { fail "cannot power hci1"; return 1; }
    restart_peripheral || { fail "the example peripheral did not register again"; return 1; }
    log "peripheral registered again"
}

kill_gateway() {
    kill -9 "$GATEWAY"
    wait "$GATEWAY" 2> /dev/null
    log "gateway $GATEWAY killed with SIGKILL"
    waitfor 10 eval '! listening' || { fail "port 8080 still listening after the kill"; return 1; }
    start_gateway "${ARGS[@]}"
    waitfor 30 listening || { fail "the restarted gateway does not listen"; return 1; }
}

ARGS=("$@")
start_gateway "${ARGS[@]}"
n=1
while :; do
    if [ -e "$CONTROL/request-$n" ]; then
        fault=$(cat "$CONTROL/request-$n")
        log "request $n: $fault"
        WHY=""
        # Not in a subshell: kill-gateway changes GATEWAY.
        case "$fault" in
            restart-bluetoothd) restart_bluetoothd ;;
            restart-bluetoothd-experimental) restart_bluetoothd -E ;;
            kill-gateway) kill_gateway ;;
            *) fail "unknown fault $fault" ;;
        esac
        # Written whole, then renamed: the host polls for done-N and reads
        # it at once, and a file it finds still empty reads as a failure.
        echo "${WHY:-ok}" > "$CONTROL/done-$n.tmp" && mv "$CONTROL/done-$n.tmp" "$CONTROL/done-$n"
        log "request $n done: $(cat "$CONTROL/done-$n")"
        n=$((n + 1))
    fi
    # A gateway that exited on its own ends the run's guest command.
    kill -0 "$GATEWAY" 2> /dev/null || { wait "$GATEWAY"; status=$?; log "gateway exited ($status)"; exit "$status"; }
    sleep 0.2
done
