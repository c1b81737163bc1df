#!/usr/bin/env bash
# Runs the probes the BlueZ simulator was checked with against the real
# bluetoothd 5.66 in the VM rig (../shared/bluez-vm), and leaves their logs
# (probe*.log: every call with its reply or error name and message;
# signals*.log: every signal from org.bluez with a time stamp; managed-*.json,
# introspect-*.xml; bluetoothctl.txt) under $OUT.
#
#   scripts/bluez-vm-probe/run.sh [errors|lifecycle|disconnect|acquire|gateway-rates|monitor|monitor-noexp]
#                                                                  (root; ~2 min each)
#
# monitor runs probe-monitor.py (the Advertisement Monitor API) with
# bluetoothd started with -E (experimental interfaces), monitor-noexp the
# same probe on bluetoothd without it.
# acquire and gateway-rates also register fast-peripheral.py's application
# on hci1 first; gateway-rates runs this checkout's debug blegateway in the
# guest twice (--notify-path start-notify, then acquire) and measures its
# notification stream with gateway-rates.py (rates-<path>.json).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
which=${1:-errors}
share=${SHARE:-/tmp/bluez-sim-probe}
export BLUEZ_VM_DIR=${BLUEZ_VM_DIR:-/tmp/bluez-vm-sim}
mkdir -p "$share"
bluetoothd_args=""
if [ "$which" = monitor ]; then bluetoothd_args="-E"; fi
cp "$here"/probe-*.py "$here"/probelib.py "$here"/fast-peripheral.py "$here"/gateway-rates.py "$share"/
bin=$(cd "$here/../.." && pwd)/.build/debug/blegateway
cat > "$share/guest.sh" <<GUEST
#!/bin/bash
O=$share/out-$which; rm -rf \$O; mkdir -p \$O
dbus-monitor --system "sender='org.bluez'" > \$O/dbus-monitor.txt 2>&1 &
if [ "$which" = acquire ] || [ "$which" = gateway-rates ]; then python3 -u $share/fast-peripheral.py \$O/peripheral.log & sleep 3; fi
if [ "$which" = gateway-rates ]; then
  for path in start-notify acquire; do
    $bin serve --listen 127.0.0.1:8080 --adapter hci0 --notify-path \$path --log-level warning --state-dir /tmp/state-\$path > \$O/gateway-\$path.log 2>&1 &
    gw=\$!
    for i in \$(seq 100); do curl -sf http://127.0.0.1:8080/health > /dev/null && break; sleep 0.2; done
    timeout 200 python3 -u $share/gateway-rates.py http://127.0.0.1:8080 \$path \$O/rates-\$path.json > \$O/rates-\$path.out 2>&1
    kill \$gw; wait \$gw
  done
elif [ "$which" = monitor ] || [ "$which" = monitor-noexp ]; then
  timeout 400 python3 -u $share/probe-monitor.py \$O > \$O/probe.out 2>&1
else
  timeout 240 python3 -u $share/probe-$which.py \$O > \$O/probe.out 2>&1
fi
if [ "$which" = errors ]; then
  ( sleep 2; echo list; sleep 1; echo show; sleep 1; echo "info 00:AA:01:01:00:01"; sleep 1; echo "connect 00:AA:01:01:00:01"; sleep 8
    echo "menu gatt"; sleep 1; echo list-attributes; sleep 1; echo "select-attribute 00002a38-0000-1000-8000-00805f9b34fb"; sleep 1
    echo read; sleep 2; echo back; sleep 1; echo "disconnect 00:AA:01:01:00:01"; sleep 3; echo quit ) | timeout 60 bluetoothctl > \$O/bluetoothctl.txt 2>&1
fi
kill %1 %2 2> /dev/null || true
GUEST
chmod +x "$share/guest.sh"
"$(cd "$here/../.." && pwd)/../shared/bluez-vm/run-e2e.sh" --quiet --no-checker --share "$share" \
  --guest-cmd "$share/guest.sh" --hold 520 --timeout 590 \
  ${bluetoothd_args:+--bluetoothd-args "$bluetoothd_args"}
echo "logs: $share/out-$which"
