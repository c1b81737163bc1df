#!/usr/bin/env bash
# The rig's --host-cmd for `Tests/e2e/run.sh --container`: runs the image on
# this machine against the guest's system bus (forwarded to BUS_PORT), as
# compose.yaml's gateway runs (uid 10001, read-only root, no capabilities),
# waits for /health, then runs api-checks.sh against it. The container's log
# goes to $E2E_RUN/container.log.
#
#   container-host-cmd.sh ENGINE IMAGE NAME BUS_PORT HTTP_PORT
set -uo pipefail
engine=$1 image=$2 name=$3 bus_port=$4 http_port=$5
here=$(cd "$(dirname "$0")" && pwd)
run=${E2E_RUN:?E2E_RUN is not set (run through Tests/e2e/run.sh --container)}

"$engine" rm -f "$name" > /dev/null 2>&1
limits=()
case "$engine" in *podman*) limits=(--ulimit host) ;; esac   # see docker/container-check.sh
"$engine" run -d --name "$name" --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges "${limits[@]}" \
    "$image" --bus "tcp:host=127.0.0.1,port=$bus_port" --listen "127.0.0.1:$http_port" --adapter hci0 \
    --log-level debug --state-dir /tmp/blegateway-state > /dev/null 2> "$run/engine.log" || { echo "FAIL container-start (the engine refused to run $image)"; exit 1; }
url=http://127.0.0.1:$http_port
healthy=false
for _ in $(seq 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/health")" = 200 ] && { healthy=true; break; }
    [ "$("$engine" inspect --format '{{.State.Running}}' "$name" 2> /dev/null)" = true ] || break
    sleep 0.2
done
status=1
if $healthy; then
    echo "PASS container-health (the image, uid 10001, on the guest's bluetoothd through tcp:127.0.0.1:$bus_port)"
    E2E_HTTP_URL=$url E2E_BUS_OVER_TCP=1 "$here/api-checks.sh"
    status=$?
else
    echo "FAIL container-health (/health: $(curl -s "$url/health"))"
fi
"$engine" logs "$name" > "$run/container.log" 2>&1
"$engine" rm -f "$name" > /dev/null 2>&1
exit "$status"
