#!/usr/bin/env bash
# Runs the probes the BlueZ simulator was checked with against the real
# bluetoothd 5.66 in the VM rig (../shared/bluez-vm), and leaves their logs
# (probe*.log: every call with its reply or error name and message;
# signals*.log: every signal from org.bluez with a time stamp; managed-*.json,
# introspect-*.xml; bluetoothctl.txt) under $OUT.
#
#   scripts/bluez-vm-probe/run.sh [errors|lifecycle|disconnect]    (root; ~2 min each)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
which=${1:-errors}
share=${SHARE:-/tmp/bluez-sim-probe}
export BLUEZ_VM_DIR=${BLUEZ_VM_DIR:-/tmp/bluez-vm-sim}
mkdir -p "$share"
cp "$here"/probe-*.py "$here"/probelib.py "$share"/
cat > "$share/guest.sh" <<GUEST
#!/bin/bash
O=$share/out-$which; rm -rf \$O; mkdir -p \$O
dbus-monitor --system "sender='org.bluez'" > \$O/dbus-monitor.txt 2>&1 &
timeout 240 python3 -u $share/probe-$which.py \$O > \$O/probe.out 2>&1
if [ "$which" = errors ]; then
  ( sleep 2; echo list; sleep 1; echo show; sleep 1; echo "info 00:AA:01:01:00:01"; sleep 1; echo "connect 00:AA:01:01:00:01"; sleep 8
    echo "menu gatt"; sleep 1; echo list-attributes; sleep 1; echo "select-attribute 00002a38-0000-1000-8000-00805f9b34fb"; sleep 1
    echo read; sleep 2; echo back; sleep 1; echo "disconnect 00:AA:01:01:00:01"; sleep 3; echo quit ) | timeout 60 bluetoothctl > \$O/bluetoothctl.txt 2>&1
fi
kill %1
GUEST
chmod +x "$share/guest.sh"
"$(cd "$here/../.." && pwd)/../shared/bluez-vm/run-e2e.sh" --quiet --no-checker --share "$share" \
  --guest-cmd "$share/guest.sh" --timeout 480
echo "logs: $share/out-$which"
