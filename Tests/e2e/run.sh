#!/usr/bin/env bash
# The end-to-end suite (`make e2e`): blegateway against the real bluetoothd.
#
# Builds blegateway, boots the bluez-vm rig (../shared/bluez-vm: kernel HCI,
# btvirt, bluetoothd 5.66, BlueZ's example GATT peripheral on hci1) with this
# checkout shared, runs `blegateway serve` in the guest on hci0, and drives it
# from this machine over the forwarded port with Tests/e2e/api-checks.sh,
# which prints one PASS or FAIL line per step. Exit status: 0 when every step
# passed, 1 when one failed, 2 when the rig could not run.
#
#   Tests/e2e/run.sh              the real stack in the VM (root; 3 to 6 min)
#   Tests/e2e/run.sh --simulate   the same checks against the built-in
#                                 simulator (Tests/e2e/example-peripheral.yaml)
#   Tests/e2e/run.sh --container  the same checks against the image
#                                 (docker/Dockerfile, IMAGE, default
#                                 blegateway:check, built when missing) on
#                                 this machine, on the guest's system bus
#                                 forwarded by the rig (--bus-port; root)
#
# Environment: SWIFT (default swift), BLUEZ_VM (the rig's folder, default
# ../shared/bluez-vm), BLUEZ_VM_DIR (the rig's state and logs, default
# /tmp/bluez-vm; set it to keep your runs apart from other users').
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
SWIFT=${SWIFT:-swift}
RIG=${BLUEZ_VM:-$ROOT/../shared/bluez-vm}/run-e2e.sh
CHECKS=$ROOT/Tests/e2e/api-checks.sh
START=$(date +%s)

mode=vm
case "${1:-}" in
    "") ;;
    --simulate) mode=simulate ;;
    --container) mode=container ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--simulate | --container]" >&2; exit 2 ;;
esac

if [ "$mode" != container ]; then
    echo "e2e: building blegateway (and blegateway-client, which runs its client commands)"
    "$SWIFT" build --product blegateway
    "$SWIFT" build --product blegateway-client
    BIN=$("$SWIFT" build --show-bin-path)/blegateway
fi

if [ "$mode" = simulate ]; then
    # The simulator in-process, on a private bus, on a free loopback port.
    RUN=$(mktemp -d /tmp/blegateway-e2e-sim.XXXXXX)
    "$BIN" serve --simulate "$ROOT/Tests/e2e/example-peripheral.yaml" --listen 127.0.0.1:0 --log-level debug \
        > "$RUN/gateway.log" 2>&1 &
    GATEWAY=$!
    trap 'kill "$GATEWAY" 2> /dev/null || true; wait "$GATEWAY" 2> /dev/null || true' EXIT
    url=""
    for _ in $(seq 100); do
        url=$(grep -o 'listening on http://[0-9.:]*' "$RUN/gateway.log" | head -1 | sed 's/^listening on //') || true
        [ -n "$url" ] && break
        kill -0 "$GATEWAY" 2> /dev/null || break
        sleep 0.1
    done
    if [ -z "$url" ]; then
        echo "e2e: the gateway did not start; see $RUN/gateway.log" >&2
        tail -5 "$RUN/gateway.log" >&2
        exit 2
    fi
    status=0
    clients=(E2E_CLIENT="$BIN")
    [ -x "$ROOT/.venv/bin/python3" ] && clients+=(E2E_PYTHON="$ROOT/.venv/bin/python3")
    env "${clients[@]}" E2E_HTTP_URL="$url" E2E_RUN="$RUN" "$CHECKS" || status=$?
    echo "e2e (simulator): $([ "$status" = 0 ] && echo passed || echo FAILED) in $(($(date +%s) - START)) s; logs in $RUN (gateway.log, api/)"
    exit "$status"
fi

[ -x "$RIG" ] || { echo "e2e: the bluez-vm rig is not at $RIG (set BLUEZ_VM)" >&2; exit 2; }
# shellcheck source=Tests/e2e/rig.sh
. "$ROOT/Tests/e2e/rig.sh"
if [ "$mode" = container ]; then
    # The image on this machine, as a user runs it, on the guest's system
    # bus forwarded over TCP (ANONYMOUS; no fd passing, which the gateway
    # does not need); the checks drive the container's port.
    IMAGE=${IMAGE:-blegateway:check}
    ENGINE=${CONTAINER_ENGINE:-$ROOT/../shared/container/podman.sh}
    [ -x "$ENGINE" ] || ENGINE=docker
    if ! "$ENGINE" image inspect "$IMAGE" > /dev/null 2>&1; then
        echo "e2e: building $IMAGE (docker/container-check.sh builds it the same way)"
        options=(--format docker)
        if [ -x "$ROOT/../shared/container/base-images.sh" ]; then
            options+=(--pull=never -v /opt/swift-packages:/opt/swift-packages:ro -v /etc/gitconfig:/etc/gitconfig:ro)
        fi
        "$ENGINE" build "${options[@]}" -f docker/Dockerfile -t "$IMAGE" . || exit 2
    fi
    bus_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    http_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    name=blegateway-e2e-$$
    host_cmd="$(printf '%q' "$ROOT/Tests/e2e/container-host-cmd.sh") $(printf '%q' "$ENGINE") $IMAGE $name $bus_port $http_port"
    rig_args=(--bus-port "$bus_port" --host-cmd "$host_cmd")
else
    # In the guest the gateway listens on every interface of the guest, which
    # is reachable only through the rig's forwarded port on 127.0.0.1.
    # The guest's root is read-only; its /tmp is a fresh tmpfs each run.
    # Tests/e2e/guest-gateway.sh runs the gateway and restarts bluetoothd or
    # kills the gateway when the checks ask (E2E_FAULTS=1 tells them they can).
    guest_cmd="exec $(printf '%q' "$ROOT/Tests/e2e/guest-gateway.sh") $(printf '%q' "$BIN") serve --listen 0.0.0.0:8080 --adapter hci0 --log-level debug --state-dir /tmp/blegateway-state"
    # The clients run on this machine: the client commands of the same
    # build, and Bleak from the checkout's virtual environment.
    clients="E2E_CLIENT=$(printf '%q' "$BIN")"
    [ -x "$ROOT/.venv/bin/python3" ] && clients+=" E2E_PYTHON=$(printf '%q' "$ROOT/.venv/bin/python3")"
    rig_args=(--share "$ROOT" --guest-cmd "$guest_cmd" --guest-port 8080 --host-cmd "E2E_FAULTS=1 $clients $(printf '%q' "$CHECKS")")
fi
# --hold bounds the checks (about two minutes; up to 4 on a loaded machine),
# --timeout the whole run, boot and package installation included.
run_rig e2e "$RIG" --quiet --no-checker "${rig_args[@]}" --hold 300 --timeout 400
if [ "$mode" = container ]; then "$ENGINE" rm -f "$name" > /dev/null 2>&1 || true; fi

echo
if [ "$status" = 0 ]; then
    echo "e2e: passed in $(($(date +%s) - START)) s; logs in $run_dir"
else
    echo "e2e: FAILED (rig exit status $status) after $(($(date +%s) - START)) s. Why, in $run_dir:"
    echo "  host-cmd.log    these checks (each FAIL line says what was expected)"
    echo "  api/            every request and response (requests.log) and every stream (*.sse)"
    echo "  guest-cmd.log   the gateway's log (debug; with --container: container.log)"
    echo "  bluetoothd.log  bluetoothd -d; dbus-monitor.log its PropertiesChanged"
    echo "  hci.btsnoop     the HCI traffic of both controllers (btmon -r hci.btsnoop)"
    echo "  console.log     the guest's boot and setup"
fi
exit "$status"
