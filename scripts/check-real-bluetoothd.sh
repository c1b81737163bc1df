#!/usr/bin/env bash
# Runs RealBluetoothdCheck (Tests/BlueZIntegrationTests) on this machine
# against the real bluetoothd 5.66 in ../shared/bluez-vm, over the guest's
# system bus forwarded to TCP. Build the tests first (swift build --build-tests).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
"$repo/../shared/bluez-vm/run-e2e.sh" --quiet --no-checker --bus-port 17777 --hold 150 --timeout 400 \
  --host-cmd "cd $repo && BLUEZ_REAL_BUS=tcp:host=127.0.0.1,port=17777 PATH=/opt/swift/usr/bin:\$PATH swift test --skip-build --filter RealBluetoothdCheck 2>&1 | tee \$E2E_RUN/real-check.log | grep -E 'REAL|✘|✔ Test run|passed|failed'"
