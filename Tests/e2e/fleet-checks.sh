#!/usr/bin/env bash
# The fleet's end-to-end checks on the real bluetoothd (Tests/e2e/fleet.sh's
# --host-cmd): two gateways in the bluez-vm guest, g-a on hci0 and g-b on
# hci2 (Tests/e2e/fleet-guest.sh), one mosquitto, BlueZ's example peripheral
# on hci1. Everything goes through g-a's HTTP API, as a user with curl and jq
# would reach the fleet through any gateway: a device kept by the fleet is
# held by one gateway, roams to the other when its holder loses it (hci0
# powered off), comes back when pinned, with its heart-rate values going on
# in /v1/fleet/events and never two links at once.
#
# Prints one "PASS <step> ..." or "FAIL <step> (why)" line per step; exits 1
# when a step failed. Every wait is bounded.
set -uo pipefail

BASE=${E2E_HTTP_URL:?E2E_HTTP_URL is not set (run through Tests/e2e/fleet.sh)}
OUT=${E2E_RUN:-$(mktemp -d)}/fleet
mkdir -p "$OUT"
PERIPHERAL=00:AA:01:01:00:01
HEART_RATE=00002a37-0000-1000-8000-00805f9b34fb
FLEET=$BASE/v1/fleet/devices/$PERIPHERAL

failures=0
pass() { echo "PASS $1${2:+ ($2)}"; }
fail() { failures=$((failures + 1)); echo "FAIL $1 (${2:-failed})"; }

# http NAME METHOD URL [JSON]: STATUS and BODY; every exchange in requests.log.
http() {
    local args=(-s -S -X "$2" -o "$OUT/$1.body" -w '%{http_code}' --max-time 60)
    [ -n "${4:-}" ] && args+=(-H 'Content-Type: application/json' --data "$4")
    STATUS=$(curl "${args[@]}" "$3" 2> "$OUT/$1.curl-err") || STATUS=000
    BODY=$(cat "$OUT/$1.body" 2> /dev/null || true)
    printf '%s %s -> %s\n%s\n\n' "$2" "$3" "$STATUS" "$BODY" >> "$OUT/requests.log"
}
why() { echo "HTTP $STATUS: $(head -c 300 <<< "$BODY" | tr '\n' ' ')"; }
# until_json NAME SECONDS URL JQ: polls URL until JQ holds on its body.
until_json() {
    local deadline=$(($(date +%s) + $2))
    while :; do
        http "$1" GET "$3"
        [ "$STATUS" = 200 ] && jq -e "$4" > /dev/null 2>&1 <<< "$BODY" && return 0
        [ "$(date +%s)" -ge "$deadline" ] && return 1
        sleep 0.5
    done
}
# events TYPE: the data of every complete TYPE event of the fleet stream.
events() {
    awk -v type="$1" '
        /^event: / { ev = substr($0, 8) }
        /^data: /  { data = substr($0, 7) }
        /^$/       { if (ev == type && data != "") print data; ev = ""; data = "" }
    ' "$OUT/fleet-events.sse" 2> /dev/null
}
# values_from GATEWAY: how many heart-rate values the stream has from it.
values_from() {
    events characteristic-value | jq -c "select(.gateway == \"$1\" and .characteristic == \"$HEART_RATE\")" \
        2> /dev/null | wc -l
}
# more_values_from GATEWAY THAN SECONDS: waits for more than THAN values.
more_values_from() {
    local deadline=$(($(date +%s) + $3))
    while [ "$(values_from "$1")" -le "$2" ]; do
        [ "$(date +%s)" -ge "$deadline" ] && return 1
        sleep 0.5
    done
}
held_by() { until_json "held-by-$1" "$2" "$FLEET" ".owner == \"$1\" and .connected_on == [\"$1\"]"; }

# ------------------------------------------------------------ the fleet ----
if until_json gateways 90 "$BASE/v1/fleet/gateways" \
    '(map(select(.online)) | map(.id) | sort) == ["g-a", "g-b"]
     and (map({(.id): (.connection_slots // [] | map(.adapter))}) | add) == {"g-a": ["hci0"], "g-b": ["hci2"]}'; then
    pass fleet-gateways "g-a and g-b online, each with the slots of its own adapter only"
else
    fail fleet-gateways "$(why)"
fi
# The whole fleet's events from here on, through g-a.
curl -s -S -N --max-time 900 -H 'Accept: text/event-stream' "$BASE/v1/fleet/events" > "$OUT/fleet-events.sse" \
    2> "$OUT/fleet-events.curl-err" &
EVENTS=$!
trap 'kill $EVENTS 2> /dev/null' EXIT
http adapters GET "$BASE/v1/adapters"
if jq -e 'map(.name) == ["hci0"]' > /dev/null 2>&1 <<< "$BODY"; then
    pass use-adapters "g-a lists hci0 alone of hci0, hci1 and hci2"
else
    fail use-adapters "$(why)"
fi
# btvirt sends one advertising report per scan enable (BlueZ 5.66's
# emulator/btdev.c has no periodic advertising), and under software
# emulation that one report is sometimes lost: a gateway's presence (10 s of
# discovery every 40 s) then hears the peripheral only in a later window. So
# hearing, and the roam below, wait for five windows.
if until_json heard 200 "$FLEET" '(.heard_by | map(.gateway) | sort) == ["g-a", "g-b"]'; then
    pass fleet-heard "both gateways hear the peripheral ($(jq -c '[.heard_by[] | {gateway, adapter}]' <<< "$BODY"))"
else
    fail fleet-heard "$(why)"
fi

# --------------------------------------------------------- kept, roamed ----
http keep PUT "$FLEET/keep" '{"fleet":true,"label":"e2e","subscriptions":[{"service":"180d","characteristic":"2a37"}]}'
if [ "$STATUS" = 202 ]; then pass fleet-keep "202"; else fail fleet-keep "$(why)"; fi
# Both hear it alike (the emulator reports no RSSI): the first by id holds it.
if held_by g-a 90; then pass held-by-g-a "owner g-a, connected on g-a"; else fail held-by-g-a "$(why)"; fi
if more_values_from g-a 0 60; then
    pass values-from-g-a "$(values_from g-a) heart-rate values through g-a"
else
    fail values-from-g-a "no heart-rate value from g-a in /v1/fleet/events"
fi

# g-a loses it: its adapter goes off, the link drops; g-b hears it and takes it.
before_b=$(values_from g-b)
lost_at=$(date +%s%N)
http power-off PATCH "$BASE/v1/adapters/hci0" '{"powered":false}'
[ "$STATUS" = 200 ] || fail power-off-hci0 "$(why)"
if held_by g-b 200; then
    pass roamed-to-g-b "owner g-b, connected on g-b, $((($(date +%s%N) - lost_at) / 1000000)) ms after hci0 went off"
else
    fail roamed-to-g-b "$(why)"
fi
if more_values_from g-b "$before_b" 60; then
    pass values-from-g-b "$(values_from g-b) heart-rate values through g-b after the roam"
else
    fail values-from-g-b "no heart-rate value from g-b after the roam"
fi

# Back on, and pinned to g-a: g-b hands it over.
http power-on PATCH "$BASE/v1/adapters/hci0" '{"powered":true}'
[ "$STATUS" = 200 ] || fail power-on-hci0 "$(why)"
before_a=$(values_from g-a)
http pin PUT "$FLEET/keep" \
    '{"fleet":true,"label":"e2e","pin":"g-a","subscriptions":[{"service":"180d","characteristic":"2a37"}]}'
[ "$STATUS" = 202 ] || fail pin-g-a "$(why)"
if held_by g-a 120; then pass pinned-to-g-a "owner g-a again"; else fail pinned-to-g-a "$(why)"; fi
if more_values_from g-a "$before_a" 60; then
    pass values-from-g-a-again "heart-rate values through g-a after the hand-over"
else
    fail values-from-g-a-again "no heart-rate value from g-a after the hand-over"
fi

http unkeep DELETE "$FLEET/keep"
[ "$STATUS" = 204 ] || fail fleet-unkeep "$(why)"
if until_json released 60 "$FLEET" '.owner == null and .connected_on == [] and .fleet_keep == null'; then
    pass fleet-unkeep "nobody holds it, nobody is connected"
else
    fail fleet-unkeep "$(why)"
fi

# ------------------------------------------------- what the stream shows ----
sleep 1
kill "$EVENTS" 2> /dev/null
wait "$EVENTS" 2> /dev/null
# Never two links: the connection events of the peripheral, in the stream's
# order (one broker order), never have two gateways connected at once.
most=$(
    awk '/^event: / { ev = substr($0, 8) } /^data: / { if (ev == "device-connected" || ev == "device-disconnected") print ev " " substr($0, 7) }' \
        "$OUT/fleet-events.sse" | while read -r ev data; do
        jq -r --arg ev "$ev" "select(.address == \"$PERIPHERAL\") | \"\(\$ev) \(.gateway)\"" <<< "$data"
    done | awk '$1 == "device-connected" { up[$2] = 1 } $1 == "device-disconnected" { delete up[$2] }
        { n = 0; for (g in up) n++; if (n > most) most = n } END { print most + 0 }'
)
if [ "$most" = 1 ]; then
    pass never-two-links "at most one gateway connected at any point of the stream"
else
    fail never-two-links "$most gateways connected at once (see $OUT/fleet-events.sse)"
fi
owners=$(events fleet-owner | jq -r 'select(.address == "'"$PERIPHERAL"'" and .owner != null) | .owner' | uniq | tr '\n' ' ')
if [[ "$owners" == *"g-a g-b g-a"* ]]; then
    pass fleet-owner-events "holders in order: $owners"
else
    fail fleet-owner-events "holders in order: $owners"
fi
ids=$(awk '/^id: / { print substr($0, 5) }' "$OUT/fleet-events.sse")
if [ -n "$ids" ] && awk 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { exit bad }' <<< "$ids"; then
    pass fleet-event-ids "$(wc -l <<< "$ids") events, ids without a gap"
else
    fail fleet-event-ids "ids with a gap (see $OUT/fleet-events.sse)"
fi

echo "fleet checks: $failures failed"
[ "$failures" = 0 ]
