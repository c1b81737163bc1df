#!/usr/bin/env bash
# Records a real bluetoothd 5.66 signal sequence for the reducer test:
# boots ../shared/bluez-vm without its checker, runs record-bluez-signals.py
# in the guest, and copies the recording to Tests/BlueZTests/Fixtures/.
#   scripts/record-bluez-signals.sh [output.jsonl]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out=${1:-$repo/Tests/BlueZTests/Fixtures/bluetoothd-5.66-session.jsonl}
share=$(mktemp -d /tmp/bluez-record.XXXXXX)
cp "$here/record-bluez-signals.py" "$share/"
"$repo/../shared/bluez-vm/run-e2e.sh" --quiet --no-checker --share "$share" --hold 120 \
  --guest-cmd "python3 -u $share/record-bluez-signals.py $share/recording.jsonl"
test -s "$share/recording.jsonl"
cp "$share/recording.jsonl" "$out"
echo "recorded $(wc -l < "$out") lines to $out"
