#!/usr/bin/env bash
# The fleet on the real bluetoothd (`make e2e-fleet`): the project's copy of
# the bluez-vm rig (Tests/e2e/bluez-vm) with three emulated controllers on
# one radio; in the guest a mosquitto broker and two gateways, g-a on hci0
# and g-b on hci2, each using only its own adapter (Tests/e2e/fleet-guest.sh),
# and BlueZ's example peripheral on hci1; on this machine the checks
# (Tests/e2e/fleet-checks.sh) through g-a's forwarded port. Root; about 3 to
# 5 minutes. Exit status: 0 every step passed, 1 one failed, 2 the rig could
# not run.
#
# Environment: SWIFT (default swift), BLUEZ_VM_DIR (the rig's state and
# logs, default /tmp/bluez-vm).
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$PWD
SWIFT=${SWIFT:-swift}
RIG=$ROOT/Tests/e2e/bluez-vm/run-e2e.sh
START=$(date +%s)

echo "e2e-fleet: building blegateway"
"$SWIFT" build --product blegateway
BIN=$("$SWIFT" build --show-bin-path)/blegateway

# shellcheck source=Tests/e2e/rig.sh
. "$ROOT/Tests/e2e/rig.sh"
guest_cmd="exec $(printf '%q' "$ROOT/Tests/e2e/fleet-guest.sh") $(printf '%q' "$BIN")"
run_rig e2e-fleet "$RIG" --quiet --no-checker --controllers 3 --share "$ROOT" --guest-cmd "$guest_cmd" \
    --guest-port 8080 --host-cmd "$(printf '%q' "$ROOT/Tests/e2e/fleet-checks.sh")" --hold 600 --timeout 720
echo
if [ "$status" = 0 ]; then
    echo "e2e-fleet: passed in $(($(date +%s) - START)) s; logs in $run_dir"
else
    echo "e2e-fleet: FAILED (rig exit status $status) after $(($(date +%s) - START)) s. Why, in $run_dir:"
    echo "  host-cmd.log                   these checks (each FAIL line says what was expected)"
    echo "  fleet/                         every request and response, and /v1/fleet/events"
    echo "  gateway-a.log, gateway-b.log   the gateways' logs (debug); mosquitto.log; bluetoothd.log"
fi
exit "$status"
