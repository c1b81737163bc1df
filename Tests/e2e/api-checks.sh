#!/usr/bin/env bash
# The end-to-end checks: drive a blegateway that runs in the bluez-vm guest
# (real bluetoothd 5.66, kernel HCI, BlueZ's example GATT peripheral on hci1)
# through its public HTTP API only, as a user with curl and jq would.
#
# Run by Tests/e2e/run.sh as the rig's --host-cmd. Needs E2E_HTTP_URL (the
# gateway, forwarded from the guest) and E2E_RUN (the run's log folder,
# where the raw responses and streams are kept under api/).
#
# Prints exactly one "PASS <step> ..." or "FAIL <step> (why)" line per step;
# the rig counts them. Exits 1 when a step failed.
#
# No `set -e`: a check that fails is a FAIL line and the next step still
# runs; every wait is bounded.
set -uo pipefail

BASE=${E2E_HTTP_URL:?E2E_HTTP_URL is not set (run through Tests/e2e/run.sh)}
OUT=${E2E_RUN:-$(mktemp -d)}/api
mkdir -p "$OUT"

# The example peripheral (BlueZ's example-gatt-server + example-advertisement
# on hci1) and the gateway's adapter.
PERIPHERAL=00:AA:01:01:00:01
CENTRAL=00:AA:01:00:00:00
ADAPTER=hci0
DEV=$BASE/v1/devices/$PERIPHERAL
TEST_SERVICE=12345678-1234-5678-1234-56789abcdef0
TEST_CHAR=12345678-1234-5678-1234-56789abcdef1
TEST_DESC=12345678-1234-5678-1234-56789abcdef2

failures=0
T0=$(date +%s%N)
# elapsed [SINCE-NS]: seconds since SINCE (default: the start), as "12.3s".
elapsed() {
    local ms=$((($(date +%s%N) - ${1:-$T0}) / 1000000))
    printf '%d.%ds' $((ms / 1000)) $((ms % 1000 / 100))
}
pass() { echo "PASS $1${2:+ ($2)}"; }
fail() { failures=$((failures + 1)); echo "FAIL $1 (${2:-failed})"; }
# check STEP DETAIL-ON-PASS WHY-ON-FAIL COMMAND...: one line either way.
check() {
    local step=$1 ok_detail=$2 why=$3
    shift 3
    if "$@" > /dev/null; then pass "$step" "$ok_detail"; else fail "$step" "$why"; fi
}

# ---------------------------------------------------------------- HTTP ----
# http NAME METHOD URL [JSON-BODY] [CURL-OPTIONS...]: the response body goes
# to $OUT/NAME.body; STATUS, CTYPE and BODY (the text) are set. STATUS is
# 000 when the request itself failed (connection refused, --max-time).
http() {
    local name=$1 method=$2 url=$3 body=${4:-}
    shift 3
    if [ $# -gt 0 ]; then shift; fi
    local args=(-s -S -X "$method" -o "$OUT/$name.body" -w '%{http_code} %{content_type}' --max-time 60)
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data "$body")
    local meta
    meta=$(curl "${args[@]}" "$@" "$url" 2> "$OUT/$name.curl-err") || true
    STATUS=${meta%% *}
    CTYPE=${meta#* }
    [ -n "$STATUS" ] || STATUS=000
    BODY=$(cat "$OUT/$name.body" 2> /dev/null || true)
    printf '%s %s -> %s %s\n%s\n\n' "$method" "$url" "$STATUS" "$CTYPE" "$BODY" >> "$OUT/requests.log"
}
# jqb FILTER: jq -e over the last response body (true when FILTER is truthy).
jqb() { jq -e "$@" > /dev/null 2>&1 <<< "$BODY"; }
# why: the status and the start of the body, for a FAIL line.
why() { echo "HTTP $STATUS: $(head -c 300 <<< "$BODY" | tr '\n' ' ')"; }

# ----------------------------------------------------------------- SSE ----
STREAM_PIDS=()
# stream NAME URL: keeps a text/event-stream open in the background, written
# to $OUT/NAME.sse (its headers to NAME.headers); STREAM_PID is its curl.
stream() {
    curl -s -N --max-time 600 -H 'Accept: text/event-stream' -D "$OUT/$1.headers" "$2" \
        > "$OUT/$1.sse" 2> "$OUT/$1.curl-err" &
    STREAM_PID=$!
    STREAM_PIDS+=("$STREAM_PID")
}
close_stream() { kill "$1" 2> /dev/null; wait "$1" 2> /dev/null; return 0; }
cleanup() { for pid in "${STREAM_PIDS[@]}"; do kill "$pid" 2> /dev/null; done; return 0; }
trap cleanup EXIT

# events NAME TYPE: the data (JSON) of every complete TYPE event of a
# stream, one per line, in order. An event ends with a blank line, so one
# still being written is not returned.
events() {
    awk -v type="$2" '
        /^event: / { ev = substr($0, 8) }
        /^data: /  { data = substr($0, 7) }
        /^$/       { if (ev == type && data != "") print data; ev = ""; data = "" }
    ' "$OUT/$1.sse" 2> /dev/null
}
# wait_events NAME TYPE JQ-SELECT COUNT SECONDS: waits until the stream has
# COUNT events of TYPE whose data passes JQ-SELECT; prints the matching data.
wait_events() {
    local name=$1 type=$2 select=$3 count=$4 deadline=$(($(date +%s) + $5)) found
    while :; do
        found=$(events "$name" "$type" | jq -c "select($select)" 2> /dev/null)
        if [ -n "$found" ] && [ "$(wc -l <<< "$found")" -ge "$count" ]; then
            echo "$found"
            return 0
        fi
        [ "$(date +%s)" -ge "$deadline" ] && { echo "$found"; return 1; }
        sleep 0.2
    done
}
# stream_open NAME SECONDS: waits for the stream's 200 response.
stream_open() {
    local deadline=$(($(date +%s) + $2))
    until grep -q '^HTTP/1.1 200' "$OUT/$1.headers" 2> /dev/null; do
        [ "$(date +%s)" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

is_peripheral=".device.address == \"$PERIPHERAL\""

echo "blegateway end-to-end checks against $BASE (peripheral $PERIPHERAL, adapter $ADAPTER)"

# Everything the gateway publishes about the peripheral, from the start.
stream events "$BASE/v1/events?device=$PERIPHERAL"
EVENTS_PID=$STREAM_PID

# ------------------------------------------------------------ gateway ----
http health GET "$BASE/health"
check health "bluez available" "$(why)" jqb '.status == "ok" and .bluez == "available"'

# --------------------------------------------------------------- adapters --
http adapters GET "$BASE/v1/adapters"
check adapters "hci0 $CENTRAL powered-on, hci1 present" "$(why)" jqb "
    (map(select(.name == \"$ADAPTER\" and .address == \"$CENTRAL\" and .powered == true
        and .state == \"powered-on\")) | length == 1)
    and (map(.name) | index(\"hci1\") != null)"

# Power hci0 off and on again through the API: each PATCH returns once
# bluetoothd reports the new state.
http power-off PATCH "$BASE/v1/adapters/$ADAPTER" '{"powered":false}'
off_ok=false
jqb '.powered == false and .state == "powered-off"' && [ "$STATUS" = 200 ] && off_ok=true
off_why=$(why)
http power-on PATCH "$BASE/v1/adapters/$ADAPTER" '{"powered":true}'
if ! $off_ok; then
    fail adapter-power-cycle "off: $off_why"
else
    check adapter-power-cycle "off then on" "on: $(why)" jqb '.powered == true and .state == "powered-on"'
fi
http adapter GET "$BASE/v1/adapters/$ADAPTER"
check adapter-powered "GET /v1/adapters/$ADAPTER after the cycle" "$(why)" \
    jqb ".name == \"$ADAPTER\" and .powered == true and .state == \"powered-on\""

# --------------------------------------------------------------- scanning --
# Bounded scans (POST /v1/scan): the gateway starts discovery, collects,
# stops. btvirt sends one advertising report per scan start, and the kernel
# drops it when it beats the discovery state change (about every other scan
# start in the rig's hci.btsnoop; the next chance is the kernel's scan
# restart 10.24 s later). Nothing can report a device bluetoothd never
# heard, so, as a user would, this scans again until it shows: each bounded
# scan is a fresh scan start.
t=$(date +%s%N)
attempt=0
found_bounded=false
while [ "$attempt" -lt 15 ]; do
    attempt=$((attempt + 1))
    http scan-bounded POST "$BASE/v1/scan" '{"duration_ms":3000,"services":["180d"]}'
    if [ "$STATUS" = 200 ] && jqb ".devices | map(select(.address == \"$PERIPHERAL\")) | length == 1"; then
        found_bounded=true
        break
    fi
done
if $found_bounded; then
    pass scan-bounded "POST /v1/scan found it in scan $attempt of 3 s, $(elapsed "$t")"
else
    fail scan-bounded "$attempt scans of 3 s found nothing; last: $(why)"
fi

# A scan stream filtered on Heart Rate, opened after that scan stopped: the
# report at this scan's start may be lost too, but bluetoothd still lists the
# peripheral, and the gateway reports what it lists at once.
t=$(date +%s%N)
stream scan1 "$BASE/v1/scan?service=180d"
SCAN1=$STREAM_PID
found=$(wait_events scan1 discovered "$is_peripheral" 1 5 | head -1)
if [ -z "$found" ]; then
    fail scan-stream-discovers "no discovered event for $PERIPHERAL in 5 s"
    for s in scan-name scan-service-uuids scan-manufacturer-data scan-service-data; do fail "$s" "nothing discovered"; done
else
    pass scan-stream-discovers "in $(elapsed "$t")"
    echo "$found" > "$OUT/scan1-discovered.json"
    d() { jq -e "$1" > /dev/null 2>&1 <<< "$found"; }
    check scan-name "TestAdvertisement" "$(jq -c .device.name <<< "$found")" \
        d '.device.name == "TestAdvertisement"'
    check scan-service-uuids "180d, 180f" "$(jq -c .device.service_uuids <<< "$found")" \
        d '.device.service_uuids | (index("0000180d-0000-1000-8000-00805f9b34fb") != null
            and index("0000180f-0000-1000-8000-00805f9b34fb") != null)'
    check scan-manufacturer-data "0xffff: 00010203" "$(jq -c .device.manufacturer_data <<< "$found")" \
        d '.device.manufacturer_data["0xffff"] | .company_id == 65535 and .value == "00010203" and .encoding == "hex"'
    check scan-service-data "9999: 0001020304" "$(jq -c .device.service_data <<< "$found")" \
        d '.device.service_data["00009999-0000-1000-8000-00805f9b34fb"].value == "0001020304"'
fi

# Two more sessions join the running scan: one that matches must report the
# peripheral at once (bluetoothd will not report it again in this scan),
# one whose filter does not match must not.
stream scan2 "$BASE/v1/scan?name=TestAdvertisement"
SCAN2=$STREAM_PID
stream scan3 "$BASE/v1/scan?service=feed"
SCAN3=$STREAM_PID
t=$(date +%s%N)
if wait_events scan2 discovered "$is_peripheral" 1 5 > /dev/null; then
    pass scan-join-running "a second session got it in $(elapsed "$t")"
else
    fail scan-join-running "a session joining the scan got no discovered event in 5 s"
fi
# The non-matching session has had as long as the matching one took, and 2 s.
sleep 2
if ! stream_open scan3 5; then
    fail scan-filter-excludes "the scan stream with service=feed did not open: $(head -c 200 "$OUT/scan3.sse")"
elif [ -n "$(events scan3 discovered | jq -c "select($is_peripheral)")" ]; then
    fail scan-filter-excludes "a session filtering on service feed reported $PERIPHERAL"
else
    pass scan-filter-excludes "service=feed reported nothing"
fi

# Closing the streams ends the sessions, and with them discovery; checked at
# the end (scan-stops), after the connects below, which run while bluetoothd
# may still be stopping discovery: the gateway has to cope with that.
close_stream "$SCAN1"
close_stream "$SCAN2"
close_stream "$SCAN3"
SCANS_CLOSED=$(date +%s)

# A passive scan needs bluetoothd's advertisement monitor (bluetoothd -E,
# which this daemon is not started with): a 403 that says so, or with the
# low-duty fallback an active scan in windows, which reports at once what
# bluetoothd still lists. The monitor itself is checked at the end, after
# bluetoothd is restarted with -E (passive-monitor).
http scan-passive POST "$BASE/v1/scan" '{"duration_ms":1000,"mode":"passive","patterns":["0:ff:ffff"]}'
check scan-passive-needs-monitor "403: $(jq -r .detail <<< "$BODY" 2> /dev/null | head -c 80)..." "$(why)" \
    jqb '.status == 403 and (.detail | contains("-E"))'
http scan-passive-low-duty POST "$BASE/v1/scan" \
    '{"duration_ms":2000,"mode":"passive","patterns":["0:ff:ffff"],"fallback":"low-duty","services":["180d"]}'
check scan-passive-low-duty "the fallback found it" "$(why)" \
    jqb ".mode == \"passive\" and (.devices | map(select(.address == \"$PERIPHERAL\")) | length == 1)"

# ------------------------------------------------------------- connecting --
t=$(date +%s%N)
http connect POST "$DEV/connect"
secs=$(elapsed "$t")
if [ "$STATUS" = 200 ] && jqb '.connected == true and .services_resolved == true'; then
    pass connect "services resolved, $secs"
else
    fail connect "$(why) after $secs"
fi
if wait_events events device-connected ".address == \"$PERIPHERAL\" and .adapter == \"$ADAPTER\"" 1 5 > /dev/null; then
    pass event-device-connected "on /v1/events, though bluetoothd often sends no Connected=true"
else
    fail event-device-connected "no device-connected event for $PERIPHERAL on /v1/events"
fi
check event-services-resolved "on /v1/events" "no services-resolved event for $PERIPHERAL" \
    wait_events events services-resolved ".address == \"$PERIPHERAL\"" 1 5

# ------------------------------------------------------------------- GATT --
http services GET "$DEV/services"
# A characteristic's flags and descriptor UUIDs, by service and UUID.
chr() { jq -c --arg s "$1" --arg c "$2" '.[] | select(.uuid == $s) | .characteristics[] | select(.uuid == $c)
    | {flags, descriptors: [.descriptors[].uuid]}' <<< "$BODY" 2> /dev/null; }
u16() { echo "0000$1-0000-1000-8000-00805f9b34fb"; }
gatt_ok() {
    [ "$STATUS" = 200 ] || return 1
    jqb "map(.uuid) | index(\"$(u16 180d)\") != null and index(\"$(u16 180f)\") != null and index(\"$TEST_SERVICE\") != null" || return 1
    jqb ".[] | select(.uuid == \"$(u16 180d)\") | .name == \"Heart Rate\" and .primary == true" || return 1
    jq -e --arg c "$(u16 2902)" '.flags == ["notify"] and (.descriptors | index($c) != null)' <<< "$(chr "$(u16 180d)" "$(u16 2a37)")" > /dev/null || return 1
    jq -e '.flags == ["read"]' <<< "$(chr "$(u16 180d)" "$(u16 2a38)")" > /dev/null || return 1
    jq -e '.flags == ["write"]' <<< "$(chr "$(u16 180d)" "$(u16 2a39)")" > /dev/null || return 1
    jq -e --arg c "$(u16 2902)" '(.flags | index("read") != null and index("notify") != null) and (.descriptors | index($c) != null)' \
        <<< "$(chr "$(u16 180f)" "$(u16 2a19)")" > /dev/null || return 1
    jq -e --arg d "$TEST_DESC" --arg cud "$(u16 2901)" \
        '(.flags | index("read") != null and index("write") != null and index("writable-auxiliaries") != null)
         and (.descriptors | index($d) != null and index($cud) != null)' \
        <<< "$(chr "$TEST_SERVICE" "$TEST_CHAR")" > /dev/null || return 1
}
if gatt_ok; then
    pass gatt-tree "$(jq -r 'map(.name // .uuid) | join(", ")' <<< "$BODY")"
else
    fail gatt-tree "Heart Rate, Battery or the test service missing or with other flags/descriptors; $(why)"
fi

http read-battery GET "$DEV/characteristics/2a19/value"
level=$(jq -r .value <<< "$BODY" 2> /dev/null)
check read-battery-level "0x$level" "$(why)" \
    jqb '.encoding == "hex" and (.value | test("^[0-9a-f]{2}$"))'

http read-location GET "$DEV/characteristics/2a38/value"
check read-body-sensor-location "01 (chest)" "$(why)" jqb '.value == "01" and .encoding == "hex"'

value=$(printf '%02x%02x%02x%02x' $((RANDOM % 256)) $((RANDOM % 256)) $((RANDOM % 256)) $((RANDOM % 256)))
http write-test PUT "$DEV/characteristics/$TEST_CHAR/value" "{\"value\":\"$value\"}"
write_status=$STATUS write_why=$(why)
http read-test GET "$DEV/characteristics/$TEST_CHAR/value"
if [ "$write_status" != 204 ]; then
    fail write-read-test-characteristic "write: $write_why"
else
    check write-read-test-characteristic "wrote and read back $value" "read: $(why)" jqb ".value == \"$value\""
fi

http read-cud GET "$DEV/characteristics/$TEST_CHAR/descriptors/2901/value?encoding=utf8"
check read-descriptor "2901: \"$(jq -r .value <<< "$BODY" 2> /dev/null)\"" "$(why)" \
    jqb '.value == "This is a characteristic for testing" and .encoding == "utf8"'

# The Heart Rate Control Point accepts only 0x01: the peripheral answers
# anything else with ATT error 0x80, which must come back as a problem.
http control-point-02 PUT "$DEV/characteristics/2a39/value" '{"value":"02"}'
if [ "$STATUS" = 502 ] && [[ $CTYPE == application/problem+json* ]] &&
    jqb '.status == 502 and .att_error == 128 and .dbus_error == "org.bluez.Error.Failed"
         and .type == "urn:blegateway:problem:peripheral-failed"'; then
    pass att-error-problem "502 problem+json, att_error 128"
else
    fail att-error-problem "$(why) ($CTYPE)"
fi
http control-point-01 PUT "$DEV/characteristics/2a39/value" '{"value":"01"}'
check write-control-point "01 accepted (204)" "$(why)" [ "$STATUS" = 204 ]

# ---------------------------------------------------------- notifications --
stream notify1 "$DEV/characteristics/2a37/notifications"
NOTIFY1=$STREAM_PID
is_hrm='.address == "'$PERIPHERAL'" and .characteristic == "'$(u16 2a37)'" and (.value | test("^[0-9a-f]{4,}$"))'
if got=$(wait_events notify1 notification "$is_hrm" 3 15); then
    bpm=$(jq -r '.value[2:4]' <<< "$got" | while read -r h; do echo $((16#$h)); done | paste -sd ' ')
    pass notifications "3 Heart Rate Measurements, bpm $bpm"
else
    fail notifications "$(wc -l <<< "$got" | tr -d ' ') Heart Rate Measurement(s) in 15 s"
fi

# A second client of the same characteristic shares the subscription: both
# streams carry the same notifications.
stream notify2 "$DEV/characteristics/2a37/notifications"
NOTIFY2=$STREAM_PID
if second=$(wait_events notify2 notification "$is_hrm" 2 10); then
    shared=0
    for _ in $(seq 15); do
        shared=$(grep -cxF -f <(events notify2 notification) <(events notify1 notification) || true)
        [ "$shared" -ge 2 ] && break
        sleep 0.2
    done
    check two-notification-clients "$shared notifications on both streams" \
        "the two streams share $shared notifications" [ "$shared" -ge 2 ]
else
    fail two-notification-clients "the second stream got $(wc -l <<< "$second" | tr -d ' ') notification(s) in 10 s"
fi
http characteristic GET "$DEV/characteristics/2a37"
check notifying "2a37 notifying while streamed" "$(why)" jqb '.notifying == true'
# bluetoothd 5.66 offers AcquireNotify for 2a37 (it notifies): on a bus that
# passes file descriptors the gateway takes that path, and the rig's
# dbus-monitor.log shows NotifyAcquired turning true. (A bus forwarded over
# TCP cannot pass them: StartNotify then, as in the container run.)
if [ -n "${E2E_RUN:-}" ] && [ -f "$E2E_RUN/dbus-monitor.log" ] && [ "${E2E_BUS_OVER_TCP:-}" != 1 ]; then
    acquired() { grep -A1 'string "NotifyAcquired"' "$E2E_RUN/dbus-monitor.log" | grep -q 'boolean true'; }
    check notify-fd-path "2a37 through AcquireNotify (NotifyAcquired true)" \
        "no NotifyAcquired=true in dbus-monitor.log: the gateway used StartNotify" acquired
fi

# ------------------------------------------------------------- disconnect --
t=$(date +%s%N)
http disconnect POST "$DEV/disconnect"
secs=$(elapsed "$t")
check disconnect "$secs" "$(why)" jqb '.connected == false and .services_resolved == false'
check event-device-disconnected "on /v1/events" "no device-disconnected event for $PERIPHERAL" \
    wait_events events device-disconnected ".address == \"$PERIPHERAL\" and .adapter == \"$ADAPTER\"" 1 10
if wait_events notify1 subscription-ended '.reason == "disconnected"' 1 10 > /dev/null &&
    wait_events notify2 subscription-ended '.reason == "disconnected"' 1 5 > /dev/null; then
    pass subscription-ended "both notification streams: reason disconnected"
else
    fail subscription-ended "a notification stream got no subscription-ended (disconnected)"
fi
close_stream "$NOTIFY1"
close_stream "$NOTIFY2"

# -------------------------------------------------------------- reconnect --
t=$(date +%s%N)
http connect-again POST "$DEV/connect"
secs=$(elapsed "$t")
if [ "$STATUS" = 200 ] && jqb '.connected == true and .services_resolved == true'; then
    http read-location-again GET "$DEV/characteristics/2a38/value"
    check connect-again "$secs, 2a38 reads $(jq -r .value <<< "$BODY" 2> /dev/null)" "read after reconnecting: $(why)" \
        jqb '.value == "01"'
else
    fail connect-again "$(why) after $secs"
fi
http disconnect-again POST "$DEV/disconnect"
check disconnect-again "" "$(why)" jqb '.connected == false'

# The scan streams closed a while ago: once the gateway has noticed, hci0
# must stop discovering (and bluetoothd must say so: see Options.
# discoveryRestartSettle in the BlueZ central).
stopped=false
while :; do
    http adapter-discovering GET "$BASE/v1/adapters/$ADAPTER"
    if jqb '.discovering == false'; then stopped=true; break; fi
    [ "$(date +%s)" -ge $((SCANS_CLOSED + 30)) ] && break
    sleep 0.5
done
if $stopped; then
    pass scan-stops "discovering=false $(($(date +%s) - SCANS_CLOSED)) s after the scan streams closed"
else
    fail scan-stops "hci0 still discovering 30 s after the scan streams closed"
fi

# -------------------------------------------------------------- unattended --
# The device kept connected and a standing subscription on its Heart Rate
# Measurement, with no client streaming it; then bluetoothd restarted, and
# the gateway killed with SIGKILL and started again on its state directory.
# Each time the gateway reconnects and resubscribes by itself, which its API
# shows: the kept connection's state, and /v1/events (reconnecting, then
# kept-connected, then Heart Rate values again). Only the guest can cause
# these faults: Tests/e2e/guest-gateway.sh does it when asked (E2E_FAULTS=1).
FAULT_N=0
# fault NAME: asks the guest for a fault and waits for it to be done; false
# (and the guest's explanation in FAULT_WHY) when it could not be.
fault() {
    FAULT_N=$((FAULT_N + 1))
    local control=$E2E_RUN/control deadline=$(($(date +%s) + 90))
    echo "$1" > "$control/request-$FAULT_N.tmp" && mv "$control/request-$FAULT_N.tmp" "$control/request-$FAULT_N"
    until [ -e "$control/done-$FAULT_N" ]; do
        [ "$(date +%s)" -ge "$deadline" ] && { FAULT_WHY="no answer from the guest in 90 s"; return 1; }
        sleep 0.2
    done
    FAULT_WHY=$(cat "$control/done-$FAULT_N")
    [ "$FAULT_WHY" = ok ]
}
# count_events NAME TYPE JQ-SELECT: how many TYPE events of the stream pass it.
count_events() { events "$1" "$2" | jq -c "select($3)" 2> /dev/null | grep -c . ; }
# ids NAME: the ids of a stream's complete events, in order.
ids() { awk '/^id: / { id = substr($0, 5) } /^$/ { if (id != "") print id; id = "" }' "$OUT/$1.sse" 2> /dev/null; }
is_hrm_value='.address == "'$PERIPHERAL'" and .characteristic == "'$(u16 2a37)'"'
# values_after NAME TYPE-BEFORE N: Heart Rate values on the stream after its
# Nth TYPE-BEFORE event.
values_after() {
    awk -v type="$2" -v n="$3" '
        /^event: / { ev = substr($0, 8) }
        /^data: /  { data = substr($0, 7) }
        /^$/       { if (ev == type) seen++; else if (seen >= n && ev == "characteristic-value") print data; ev = ""; data = "" }
    ' "$OUT/$1.sse" 2> /dev/null | jq -c "select($is_hrm_value)" 2> /dev/null | grep -c .
}
# wait_until SECONDS CMD...: polls CMD every 0.3 s.
wait_until() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        [ "$(date +%s)" -ge "$deadline" ] && return 1
        sleep 0.3
    done
}
kept_status() { http keep-state GET "$DEV/keep" && jqb ".status == \"$1\""; }

if [ "${E2E_FAULTS:-0}" != 1 ] || [ -z "${E2E_RUN:-}" ]; then
    echo "(the unattended steps need the guest to cause faults: Tests/e2e/run.sh runs them in the VM)"
else
    stream unattended "$BASE/v1/events?device=$PERIPHERAL"
    UNATTENDED=$STREAM_PID
    stream_open unattended 10 || true
    t=$(date +%s%N)
    # Not connected (disconnect-again above): keeping connects it.
    http keep PUT "$DEV/keep"
    check keep "201, $(jq -r .status <<< "$BODY" 2> /dev/null)" "$(why)" [ "$STATUS" = 201 ]
    check kept-connected "in $(elapsed "$t")" "no kept-connected event in 60 s" \
        wait_events unattended kept-connected ".address == \"$PERIPHERAL\"" 1 60
    http subscribe POST "$BASE/v1/subscriptions" "{\"device\":\"$PERIPHERAL\",\"characteristic\":\"2a37\",\"mode\":\"notify\"}"
    SUBSCRIPTION=$(jq -r '.id // empty' <<< "$BODY" 2> /dev/null)
    check standing-subscription "id $SUBSCRIPTION" "$(why)" [ "$STATUS" = 201 ]
    check standing-values "Heart Rate values on /v1/events with no client streaming them" \
        "fewer than 3 Heart Rate values in 30 s" wait_events unattended characteristic-value "$is_hrm_value" 3 30

    # bluetoothd stopped (SIGTERM: it drops the link and forgets every
    # client's notification sessions) and started again.
    t=$(date +%s%N)
    if fault restart-bluetoothd; then
        pass bluetoothd-restarted "in $(elapsed "$t")"
        check keeper-reconnecting "reconnecting after the restart" "no reconnecting event (reason other than kept) in 60 s" \
            wait_events unattended reconnecting '.reason != "kept"' 1 60
        check keeper-reconnected "kept-connected again, $(elapsed "$t") after the restart began" "no second kept-connected in 120 s" \
            wait_events unattended kept-connected ".address == \"$PERIPHERAL\"" 2 120
        check keep-state-connected "GET $DEV/keep: connected" "$(why)" wait_until 30 kept_status connected
        check resubscribed "Heart Rate values again after the reconnect" "fewer than 3 values after the second kept-connected in 60 s" \
            wait_until 60 eval '[ "$(values_after unattended kept-connected 2)" -ge 3 ]'
        http subscription-state GET "$BASE/v1/subscriptions/$SUBSCRIPTION"
        check subscription-active "standing subscription $SUBSCRIPTION active" "$(why)" jqb '.status == "active"'
    else
        fail bluetoothd-restarted "$FAULT_WHY"
    fi

    # SIGKILL: the gateway restores the kept connection and the standing
    # subscription from its state directory, and its event ids go on.
    last_id=$(ids unattended | tail -1)
    close_stream "$UNATTENDED"
    t=$(date +%s%N)
    if fault kill-gateway; then
        pass gateway-killed "SIGKILL and started again in $(elapsed "$t")"
        wait_until 30 eval 'http health-after-kill GET "$BASE/health"; [ "$STATUS" = 200 ]'
        http kept-after-kill GET "$BASE/v1/kept-connections"
        check keep-restored "GET /v1/kept-connections lists $PERIPHERAL" "$(why)" \
            jqb "map(select(.address == \"$PERIPHERAL\")) | length == 1"
        http subscriptions-after-kill GET "$BASE/v1/subscriptions"
        check subscription-restored "GET /v1/subscriptions lists $SUBSCRIPTION" "$(why)" \
            jqb "map(select(.id == ${SUBSCRIPTION:-0})) | length == 1"
        stream restored "$BASE/v1/events?device=$PERIPHERAL"
        check restored-values "Heart Rate values after the restart" "fewer than 3 values in 90 s" \
            wait_events restored characteristic-value "$is_hrm_value" 3 90
        first_new=$(ids restored | head -1)
        ids_continue() { [ -n "$first_new" ] && [ -n "$last_id" ] && [ "$first_new" -gt "$last_id" ]; }
        check event-ids-continue "first id $first_new after $last_id" "first id '$first_new' after the kill, last before '$last_id'" \
            ids_continue
        check keep-state-after-kill "connected" "$(why)" wait_until 60 kept_status connected
        close_stream "$STREAM_PID"
    else
        fail gateway-killed "$FAULT_WHY"
    fi
    # The kill ended the stream of everything the gateway publishes about
    # the peripheral: the steps below follow a new one.
    close_stream "$EVENTS_PID"
    stream events "$BASE/v1/events?device=$PERIPHERAL"
    EVENTS_PID=$STREAM_PID
    http unsubscribe DELETE "$BASE/v1/subscriptions/$SUBSCRIPTION"
    check unsubscribe "204" "$(why)" [ "$STATUS" = 204 ]
    http unkeep DELETE "$DEV/keep"
    check unkeep "204" "$(why)" [ "$STATUS" = 204 ]
    # Released, the device stays connected: the pairing steps start from a
    # disconnected device.
    http unkept-disconnect POST "$DEV/disconnect"
fi

# ---------------------------------------------------------------- pairing --
# The gateway's agent is NoInputNoOutput (Just Works) and bluetoothd's
# default agent. One bluetoothd serves both adapters, so it asks that agent
# on behalf of the peripheral's side too (hci1, about $CENTRAL): the agent
# accepts questions about the host's own adapters without a client.
ENCRYPTED=12345678-1234-5678-1234-56789abcdef3
t=$(date +%s%N)
http pair POST "$DEV/pair?timeout_ms=60000"
secs=$(elapsed "$t")
check pair "$secs, paired and bonded" "$(why)" jqb '.paired == true and .bonded == true'
check event-pairing-succeeded "on /v1/events" "no pairing-succeeded event for $PERIPHERAL" \
    wait_events events pairing-succeeded ".address == \"$PERIPHERAL\"" 1 10
http write-encrypted PUT "$DEV/characteristics/$ENCRYPTED/value" '{"value":"c0ffee"}'
check write-encrypted "c0ffee accepted (204)" "$(why)" [ "$STATUS" = 204 ]
http read-encrypted GET "$DEV/characteristics/$ENCRYPTED/value"
check read-encrypted "reads $(jq -r .value <<< "$BODY" 2> /dev/null)" "$(why)" jqb '.value == "c0ffee"'
http unpair DELETE "$DEV/pair"
check unpair "204" "$(why)" [ "$STATUS" = 204 ]
# The bond went with the device: BlueZ no longer lists it.
http unpaired-device GET "$DEV"
check unpaired-forgotten "404 until heard again" "$(why)" [ "$STATUS" = 404 ]

# -------------------------------------------------------------- peripheral --
# The gateway publishes a service and an advertisement on hci0; on the real
# bluetoothd, the gateway's own central role on the other adapter (hci1)
# discovers it, connects, reads, writes and subscribes, and every request
# shows on /v1/peripheral/events.
PAPP_SERVICE=0000fff0-0000-1000-8000-00805f9b34fb
ME=$BASE/v1/devices/$CENTRAL
stream peripheral "$BASE/v1/peripheral/events"
PERIPHERAL_PID=$STREAM_PID
stream_open peripheral 10 || true
http publish POST "$BASE/v1/peripheral/applications" \
    '{"adapter":"hci0","services":[{"uuid":"fff0","characteristics":[{"uuid":"fff1","flags":["read","write"],"value":"2a"},{"uuid":"fff2","flags":["read","notify"],"value":"00"}]}]}'
APP=$(jq -r '.id // empty' <<< "$BODY" 2> /dev/null)
check peripheral-publish "$APP registered on hci0" "$(why)" jqb '.registered == true'

http gateway-info GET "$BASE/v1"
SIMULATED=false
jqb '.bluez.simulated == true' && SIMULATED=true
if ! $SIMULATED; then
    # hci1 knows hci0 from the pairing above, with a bond hci0 no longer
    # has (unpairing removed it on hci0's side only) and hci0's GATT
    # database as it was then, without fff0: forget that first, as a user
    # would, or hci1's connect uses the stale keys, and the device's UUIDs
    # stay those of the old database instead of the advertised ones.
    http central-forget DELETE "$ME?adapter=hci1"
    # hci1 scans before hci0 starts advertising: the emulated controllers
    # deliver an advertising report when a scan starts or an advertisement
    # is enabled, and the kernel drops a report that arrives while its
    # discovery is still starting, so the report at the scan's own start is
    # often lost; the one sent when the advertisement is enabled reaches a
    # scan that bluetoothd already reports as running.
    stream central-scan "$BASE/v1/scan?adapter=hci1&service=fff0"
    CENTRAL_SCAN=$STREAM_PID
    scanning=false
    for _ in $(seq 50); do
        http central-adapter GET "$BASE/v1/adapters/hci1"
        if jqb '.discovering == true'; then scanning=true; break; fi
        sleep 0.2
    done
    check central-scanning "hci1 discovering" "$(why)" $scanning
fi
http advertise POST "$BASE/v1/peripheral/advertisements" \
    '{"adapter":"hci0","local_name":"blegateway","service_uuids":["fff0"],"discoverable":true}'
ADV=$(jq -r '.id // empty' <<< "$BODY" 2> /dev/null)
check peripheral-advertise "$ADV, $(jq -r .data_length <<< "$BODY" 2> /dev/null) bytes" "$(why)" jqb '.registered == true'

if $SIMULATED; then
    echo "(the simulator does not carry radio traffic between its adapters: the hci1 central steps run on the real bluetoothd only)"
else
    # What proves the advertisement was heard is fff0 among the device's
    # UUIDs, which only the gateway's advertisement carries, and its name,
    # which only its scan response carries.
    is_gateway=".device.address == \"$CENTRAL\" and (.device.service_uuids | index(\"$PAPP_SERVICE\")) != null"
    found=$(wait_events central-scan discovered "$is_gateway" 1 15 | head -1)
    check central-discovers "hci1 hears $CENTRAL advertising fff0 as $(jq -r .device.name <<< "$found" 2> /dev/null)" \
        "no discovered event with fff0 for $CENTRAL on hci1 in 15 s" [ -n "$found" ]
    check central-discovers-name "blegateway, from the scan response" "$(jq -c .device.name <<< "$found" 2> /dev/null)" \
        jq -e '.device.name == "blegateway"' <<< "$found"
    close_stream "$CENTRAL_SCAN"
    http central-connect POST "$ME/connect?adapter=hci1"
    check central-connect "hci1 -> hci0" "$(why)" jqb '.connected == true'
    http central-read GET "$ME/characteristics/fff1/value?adapter=hci1&service=$PAPP_SERVICE"
    check central-read "fff1 reads $(jq -r .value <<< "$BODY" 2> /dev/null)" "$(why)" jqb '.value == "2a"'
    check peripheral-read "read on /v1/peripheral/events" "no read event" \
        wait_events peripheral read '.characteristic == "0000fff1-0000-1000-8000-00805f9b34fb"' 1 10
    # The first request of a central is when the gateway learns who it is.
    check peripheral-central-connected "central-connected: hci1 ($PERIPHERAL) on /v1/peripheral/events" \
        "no central-connected event for $PERIPHERAL" \
        wait_events peripheral central-connected ".central == \"$PERIPHERAL\" and .application == \"$APP\"" 1 10
    http central-write PUT "$ME/characteristics/fff1/value?adapter=hci1&service=$PAPP_SERVICE" '{"value":"07"}'
    check central-write "204" "$(why)" [ "$STATUS" = 204 ]
    check peripheral-written "written 07 on /v1/peripheral/events" "no written event" \
        wait_events peripheral written '.value == "07"' 1 10
    http central-read-back GET "$ME/characteristics/fff1/value?adapter=hci1&service=$PAPP_SERVICE"
    check central-read-back "fff1 reads $(jq -r .value <<< "$BODY" 2> /dev/null) after the write" "$(why)" jqb '.value == "07"'
    stream central-notify "$BASE/v1/devices/$CENTRAL/characteristics/fff2/notifications?adapter=hci1&service=$PAPP_SERVICE"
    CENTRAL_NOTIFY=$STREAM_PID
    check peripheral-subscribed "subscribed on /v1/peripheral/events" "no subscribed event" \
        wait_events peripheral subscribed '.characteristic == "0000fff2-0000-1000-8000-00805f9b34fb"' 1 15
    http notify PUT "$BASE/v1/peripheral/applications/$APP/characteristics/fff2/value" '{"value":"63"}'
    check peripheral-notify "notified" "$(why)" jqb '.notified == true'
    check central-notified "hci1 received 63" "no notification 63 on hci1's stream" \
        wait_events central-notify notification '.value == "63"' 1 15
    close_stream "$CENTRAL_NOTIFY"
    check peripheral-unsubscribed "unsubscribed on /v1/peripheral/events" "no unsubscribed event" \
        wait_events peripheral unsubscribed '.characteristic == "0000fff2-0000-1000-8000-00805f9b34fb"' 1 15
    http central-disconnect POST "$ME/disconnect?adapter=hci1"
    check peripheral-central-disconnected "central-disconnected: hci1 on /v1/peripheral/events" \
        "no central-disconnected event for $PERIPHERAL" \
        wait_events peripheral central-disconnected ".central == \"$PERIPHERAL\" and .application == \"$APP\"" 1 15
fi
http unadvertise DELETE "$BASE/v1/peripheral/advertisements/$ADV"
check peripheral-unadvertise "" "$(why)" [ "$STATUS" = 204 ]
http unpublish DELETE "$BASE/v1/peripheral/applications/$APP"
check peripheral-unpublish "" "$(why)" [ "$STATUS" = 204 ]
close_stream "$PERIPHERAL_PID"

# ---------------------------------------------------------------- clients --
# The clients as their users run them, through this gateway's API only: the
# `blegateway` client commands (the Core Bluetooth library underneath) and a
# Bleak script through blegateway.bleak (E2E_CLIENT and E2E_PYTHON, set by
# Tests/e2e/run.sh; skipped when not set).
if [ -n "${E2E_CLIENT:-}" ]; then
    # client NAME ARGS...: runs `blegateway ARGS --url BASE`; CLIENT_OUT,
    # CLIENT_CODE and CLIENT_ERR (its last line of stderr) are set.
    client() {
        local name=$1
        shift
        CLIENT_OUT=$("$E2E_CLIENT" "$@" --url "$BASE" 2> "$OUT/client-$name.err")
        CLIENT_CODE=$?
        CLIENT_ERR=$(tail -1 "$OUT/client-$name.err")
    }
    contains() { [[ $1 == *"$2"* ]]; }
    client scan scan --service 180d --duration 5
    check client-scan "blegateway scan --service 180d lists it" "exit $CLIENT_CODE: $CLIENT_OUT $CLIENT_ERR" contains "$CLIENT_OUT" "$PERIPHERAL"
    client connect connect "$PERIPHERAL"
    check client-connect "blegateway connect" "exit $CLIENT_CODE: $CLIENT_ERR" [ "$CLIENT_CODE" = 0 ]
    client gatt gatt "$PERIPHERAL"
    check client-gatt "blegateway gatt: 180D with 2A37" "exit $CLIENT_CODE: $CLIENT_OUT $CLIENT_ERR" \
        contains "$CLIENT_OUT" "characteristic 2A37"
    # Two notifications, then head closes the pipe and the command ends.
    notified=$(timeout 30 "$E2E_CLIENT" notify "$PERIPHERAL" 2a37 --url "$BASE" 2> "$OUT/client-notify.err" | head -n 2)
    values=$(grep -cE '^[0-9a-f]{4,}$' <<< "$notified")
    check client-notify "blegateway notify: $(tr '\n' ' ' <<< "$notified")" "got '$notified': $(tail -1 "$OUT/client-notify.err")" \
        [ "$values" = 2 ]
    client read read "$PERIPHERAL" 2a38
    check client-read "blegateway read: 2a38 is $CLIENT_OUT" "exit $CLIENT_CODE: $CLIENT_ERR" [ "$CLIENT_OUT" = 01 ]
    client write write "$PERIPHERAL" 2a39 02
    check client-att-error "blegateway write 02: exit 6, $CLIENT_ERR" "exit $CLIENT_CODE: $CLIENT_ERR" [ "$CLIENT_CODE" = 6 ]
    client disconnect disconnect "$PERIPHERAL"
    check client-disconnect "blegateway disconnect" "exit $CLIENT_CODE: $CLIENT_ERR" [ "$CLIENT_CODE" = 0 ]
fi
if [ -n "${E2E_PYTHON:-}" ]; then
    while IFS= read -r line; do
        echo "$line"
        case $line in FAIL*) failures=$((failures + 1)) ;; esac
    done < <("$E2E_PYTHON" "$(dirname "$0")/bleak-check.py" "$BASE" "$PERIPHERAL" 2> "$OUT/bleak.err"; echo "exit $?" > "$OUT/bleak.exit")
    grep -q '^exit 0$' "$OUT/bleak.exit" 2> /dev/null || { [ -s "$OUT/bleak.err" ] && tail -3 "$OUT/bleak.err"; }
fi

# ---------------------------------------------------------- passive scan --
# Last, since it restarts bluetoothd with -E for good: a passive scan through
# its advertisement monitor finds the peripheral by its manufacturer data
# (company 0xffff) while bluetoothd does not discover.
if [ "${E2E_FAULTS:-0}" = 1 ] && [ -n "${E2E_RUN:-}" ]; then
    t=$(date +%s%N)
    if fault restart-bluetoothd-experimental; then
        pass bluetoothd-experimental "restarted with -E in $(elapsed "$t")"
        wait_until 30 eval 'http adapter-after-E GET "$BASE/v1/adapters/$ADAPTER"; jqb ".powered == true"'
        t=$(date +%s%N)
        stream passive "$BASE/v1/scan?mode=passive&pattern=0:ff:ffff"
        PASSIVE=$STREAM_PID
        if wait_events passive discovered "$is_peripheral" 1 20 > /dev/null; then
            pass passive-monitor "discovered through the monitor in $(elapsed "$t")"
        else
            fail passive-monitor "no discovered event for $PERIPHERAL in 20 s: $(head -c 300 "$OUT/passive.sse")"
        fi
        http passive-adapter GET "$BASE/v1/adapters/$ADAPTER"
        check passive-not-discovering "hci0 not discovering" "$(why)" jqb '.discovering == false'
        close_stream "$PASSIVE"
    else
        fail bluetoothd-experimental "$FAULT_WHY"
    fi
fi

close_stream "$EVENTS_PID"
echo "checks done in $(elapsed): $failures failed; responses and streams in $OUT"
[ "$failures" = 0 ]
