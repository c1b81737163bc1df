#!/usr/bin/env bash
# Builds the image (docker/Dockerfile) and runs it for real (docker/README.md,
# "What CI checks"):
#   1. --simulate inside the container answers the README walkthrough's
#      requests (health, adapters, scan, connect, services, read), as uid
#      10001 with a read-only root, no capabilities and no new privileges;
#      the image's HEALTHCHECK runs and passes
#   2. a bus from outside, configured like a host's system bus (deny by
#      default, upstream BlueZ's root-only rule for org.bluez) plus
#      docker/dbus/blegateway.conf, with bluez-sim on it as root like
#      bluetoothd, mounted as /run/dbus (as compose.yaml does): the
#      container scans, connects and reads through it
#   3. the same bus without the policy: the container stops at once with an
#      error that names docker/dbus/blegateway.conf
#   4. docker/compose.yaml with podman-compose (when both are here): the
#      demo profile runs without a key; the gateway refuses to start
#      without one in .env and starts with it
# Prints one PASS or FAIL line per step and the figures (build time, image
# size, start time). Exit status 0 when all passed or when containers cannot
# run here (said plainly), 1 when a step failed, 2 when it could not set up.
#
# --no-build runs the checks on IMAGE as it is; --build-only builds IMAGE,
# prints its size and stops (make bench's `image` phase).
# Environment: CONTAINER_TOOLS (default ../shared/container: podman.sh and
# base-images.sh, for machines that reach no image registry), CONTAINER_ENGINE
# (default: CONTAINER_TOOLS/podman.sh, else docker or podman), IMAGE (default
# blegateway:check), SWIFT (default swift; builds bluez-sim when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=docker/host-bus.sh
. docker/host-bus.sh
ROOT=$PWD
SWIFT=${SWIFT:-swift}
IMAGE=${IMAGE:-blegateway:check}
TOOLS=${CONTAINER_TOOLS:-$ROOT/../shared/container}
failed=0
step() { echo "== $*"; }
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failed=1; }
skip() { echo "containers cannot run here: skipped, .ci/run runs them on the host ($*)"; exit 0; }

# A chroot (CI's clean root) has no mount namespace of its own for runc to
# pivot into; say so rather than fail obscurely.
if command -v ischroot > /dev/null && ischroot; then skip "this is a chroot"; fi
if [ -r /proc/1/root ] && [ "$(stat -Lc %d:%i /)" != "$(stat -Lc %d:%i /proc/1/root/. 2> /dev/null || stat -Lc %d:%i /)" ]; then
  skip "this is a chroot"
fi
[ "$(id -u)" = 0 ] || skip "needs root: rootful podman, a private system bus, a host user for uid 10001"

if [ -n "${CONTAINER_ENGINE:-}" ]; then engine=("$CONTAINER_ENGINE")
elif [ -x "$TOOLS/podman.sh" ]; then engine=("$TOOLS/podman.sh")
elif command -v docker > /dev/null && docker info > /dev/null 2>&1; then engine=(docker)
elif command -v podman > /dev/null; then engine=(podman)
else skip "no container engine (docker or podman)"; fi
ctr() { "${engine[@]}" "$@"; }

# Base images made locally where no registry is reachable (once per machine).
build_options=()
if [ -x "$TOOLS/base-images.sh" ]; then
  if ! ctr image inspect docker.io/library/swift:6.3-bookworm > /dev/null 2>&1 \
    || ! ctr image inspect docker.io/library/debian:bookworm-slim > /dev/null 2>&1; then
    step "base images ($TOOLS/base-images.sh, once per machine)"
    start=$(date +%s)
    "$TOOLS/base-images.sh" > /tmp/blegateway-base-images.log 2>&1 \
      || { tail -20 /tmp/blegateway-base-images.log; echo "container-check: base-images.sh failed" >&2; exit 2; }
    echo "base images made in $(($(date +%s) - start)) s"
  fi
  build_options+=(--pull=never)
  # This machine's copies of the Swift packages, which git finds through
  # /etc/gitconfig's url rewrites.
  [ -d /opt/swift-packages ] && build_options+=(-v /opt/swift-packages:/opt/swift-packages:ro)
  [ -f /etc/gitconfig ] && build_options+=(-v /etc/gitconfig:/etc/gitconfig:ro)
fi
[ "${engine[0]}" = docker ] || build_options+=(--format docker)   # keeps HEALTHCHECK

step "build $IMAGE"
start=$(date +%s)
if [ "${1:-}" = --no-build ]; then
  echo "not built (--no-build): $IMAGE as it is"
elif ! ctr build "${build_options[@]}" -f docker/Dockerfile -t "$IMAGE" . > /tmp/blegateway-image-build.log 2>&1; then
  tail -30 /tmp/blegateway-image-build.log
  echo "container-check: the image did not build (log: /tmp/blegateway-image-build.log)" >&2
  exit 2
fi
size=$(ctr image inspect --format '{{.Size}}' "$IMAGE")
echo "image $IMAGE built in $(($(date +%s) - start)) s; $((size / 1000000)) MB ($size bytes)"
[ "${1:-}" = --build-only ] && exit 0
if [ -n "$(ctr image inspect --format '{{.Config.Healthcheck}}' "$IMAGE" | grep -v '^<nil>$\|^$')" ]; then
  pass "the image keeps its HEALTHCHECK"
else
  fail "the image has no HEALTHCHECK (build it in docker format)"
fi

dir=$(mktemp -d /tmp/blegateway-container-XXXXXX)
chmod 755 "$dir"
containers=()
made_user=""
daemon_pid=""
sim_pid=""
cleanup() {
  set +e
  for name in "${containers[@]+"${containers[@]}"}"; do ctr rm -f "$name" > /dev/null 2>&1; done
  [ -n "$sim_pid" ] && kill "$sim_pid" 2> /dev/null && wait "$sim_pid" 2> /dev/null
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2> /dev/null
  [ -n "$made_user" ] && userdel "$made_user"
  rm -rf "$dir"
}
trap cleanup EXIT

uid_in() { ctr exec "$1" cat /proc/self/status | awk '/^Uid:/ {print $2}'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The container's security settings, as compose.yaml gives them.
hardened=(--read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges)
# The root filesystem is read-only as compose.yaml runs it; where compose.yaml
# mounts a volume for the state, the checks keep it in the container's /tmp.
state=(--state-dir /tmp/blegateway-state)
# Without CAP_SYS_RESOURCE, runc cannot set podman's default limits of open
# files and processes where the host caps them: the host's own, then.
case "${engine[0]}" in *podman*) hardened+=(--ulimit host) ;; esac

# wait_healthy URL CONTAINER: until /health answers 200, the container stops, or 60 s pass.
wait_healthy() {
  for _ in $(seq 600); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/health")" = 200 ] && return 0
    [ "$(ctr inspect --format '{{.State.Running}}' "$2" 2> /dev/null)" = true ] || return 1
    sleep 0.1
  done
  return 1
}

# walkthrough URL WHAT: the README's requests against the heart-rate strap.
walkthrough() {
  local url=$1 what=$2 device=C4:7C:8D:6A:3E:01 body
  body=$(curl -s "$url/v1/adapters")
  if jq -e 'map(.name) | index("hci0")' <<< "$body" > /dev/null 2>&1; then pass "$what: GET /v1/adapters lists hci0"
  else fail "$what: GET /v1/adapters: $body"; fi
  body=$(curl -s --max-time 30 -H 'Content-Type: application/json' -d '{"duration_ms":3000}' "$url/v1/scan")
  if jq -e --arg d "$device" '.devices | map(.address) | index($d)' <<< "$body" > /dev/null 2>&1; then
    pass "$what: POST /v1/scan finds $device"
  else fail "$what: POST /v1/scan: $body"; fi
  body=$(curl -s --max-time 60 -X POST "$url/v1/devices/$device/connect")
  if jq -e '.connected == true' <<< "$body" > /dev/null 2>&1; then pass "$what: POST connect"
  else fail "$what: POST connect: $body"; fi
  body=$(curl -s "$url/v1/devices/$device/services")
  if jq -e 'map(.uuid) | map(select(startswith("0000180d"))) | length == 1' <<< "$body" > /dev/null 2>&1; then
    pass "$what: GET services has Heart Rate"
  else fail "$what: GET services: $body"; fi
  body=$(curl -s "$url/v1/devices/$device/characteristics/2a38/value")
  if jq -e '.value == "01"' <<< "$body" > /dev/null 2>&1; then pass "$what: GET 2a38 value reads 01"
  else fail "$what: GET 2a38 value: $body"; fi
}

step "--simulate inside the container"
port=$(free_port)
name=blegateway-check-sim-$$
containers+=("$name")
start_ns=$(date +%s%N)
ctr run -d --name "$name" "${hardened[@]}" "$IMAGE" --simulate --listen "127.0.0.1:$port" > /dev/null 2>> "$dir/engine.log"
if wait_healthy "http://127.0.0.1:$port" "$name"; then
  echo "started: /health answered 200 $((($(date +%s%N) - start_ns) / 1000000)) ms after '${engine[*]##*/} run'"
  uid=$(uid_in "$name")
  if [ "$uid" = 10001 ]; then pass "--simulate: /health answers 200, the gateway runs as uid 10001"
  else fail "--simulate: the gateway runs as uid '$uid', not 10001"; fi
  walkthrough "http://127.0.0.1:$port" "--simulate"
  if ctr exec "$name" blegateway health --url "http://127.0.0.1:$port" > "$dir/health.txt" 2>&1; then
    pass "blegateway health inside the container: $(cat "$dir/health.txt")"
  else fail "blegateway health inside the container: $(cat "$dir/health.txt")"; fi
else
  fail "--simulate: the gateway never answered /health; its log:"
  ctr logs "$name" 2>&1 | tail -20
fi
ctr rm -f "$name" > /dev/null 2>&1

step "the image's HEALTHCHECK, with the image's own command line"
# In a network namespace of its own, so that the default 0.0.0.0:8080,
# which the HEALTHCHECK asks, is free whatever the host runs.
name=blegateway-check-health-$$
containers+=("$name")
start_ns=$(date +%s%N)
ctr run -d --name "$name" --network none "${hardened[@]}" "$IMAGE" --simulate > /dev/null 2>> "$dir/engine.log"
healthy=""
for _ in $(seq 300); do
  if ctr healthcheck run "$name" > "$dir/hc.txt" 2>&1; then healthy=yes; break; fi
  [ "$(ctr inspect --format '{{.State.Running}}' "$name" 2> /dev/null)" = true ] || break
  sleep 0.2
done
if [ -n "$healthy" ]; then
  pass "the engine's health check passes ($(ctr inspect --format '{{.State.Health.Status}}' "$name" 2> /dev/null || true)), $((($(date +%s%N) - start_ns) / 1000000)) ms after start"
else
  fail "healthcheck run: $(cat "$dir/hc.txt" 2> /dev/null)"
  ctr logs "$name" 2>&1 | tail -10
fi
ctr rm -f "$name" > /dev/null 2>&1

step "a host-like system bus from outside, through docker/dbus/blegateway.conf"
sim="$("$SWIFT" build --show-bin-path)/bluez-sim"
if [ ! -x "$sim" ]; then
  echo "building bluez-sim (the simulated bluetoothd)"
  "$SWIFT" build --product bluez-sim > /tmp/blegateway-bluez-sim-build.log 2>&1 \
    || { tail -20 /tmp/blegateway-bluez-sim-build.log; echo "container-check: bluez-sim did not build" >&2; exit 2; }
fi
# dbus-daemon drops a client whose uid has no passwd entry, so the host
# needs a user with the container's uid, as docker/README.md says.
if ! getent passwd 10001 > /dev/null; then
  useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin blegateway && made_user=blegateway
fi
mkdir -p "$dir/run/dbus" "$dir/system.d"
chmod 755 "$dir/run" "$dir/run/dbus"
# A system bus as a host has it (docker/host-bus.sh).
host_bus_config "$dir/run/dbus/system_bus_socket" "$dir/system.d" > "$dir/bus.conf"
start_bus() {  # start_bus WITH_POLICY: dbus-daemon and bluez-sim, as root
  rm -f "$dir/system.d/"*
  [ "$1" = yes ] && cp docker/dbus/blegateway.conf "$dir/system.d/"
  dbus-daemon --config-file="$dir/bus.conf" --fork --print-pid=3 3> "$dir/pid" > /dev/null
  daemon_pid=$(cat "$dir/pid")
  "$sim" --bus "unix:path=$dir/run/dbus/system_bus_socket" > "$dir/sim.log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 100); do
    busctl --address="unix:path=$dir/run/dbus/system_bus_socket" status org.bluez > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "container-check: bluez-sim did not appear on the bus: $(tail -5 "$dir/sim.log")" >&2
  exit 2
}
stop_bus() {
  kill "$sim_pid" 2> /dev/null; wait "$sim_pid" 2> /dev/null || true; sim_pid=""
  kill "$daemon_pid" 2> /dev/null || true; daemon_pid=""
}

start_bus yes
port=$(free_port)
name=blegateway-check-bus-$$
containers+=("$name")
# The image's user (10001) and its default bus address,
# /run/dbus/system_bus_socket, through the directory mount of compose.yaml.
ctr run -d --name "$name" "${hardened[@]}" -v "$dir/run/dbus:/run/dbus" "$IMAGE" --listen "127.0.0.1:$port" "${state[@]}" > /dev/null 2>> "$dir/engine.log"
if wait_healthy "http://127.0.0.1:$port" "$name"; then
  pass "uid $(uid_in "$name") reaches bluez-sim through the mounted socket: /health answers 200"
  walkthrough "http://127.0.0.1:$port" "host bus"
  # `docker stop` (compose: stop_grace_period 15s): SIGTERM to the gateway,
  # PID 1 of the container, which ends what it started and exits 0.
  ctr stop -t 15 "$name" > /dev/null 2>> "$dir/engine.log"
  code=$(ctr inspect --format '{{.State.ExitCode}}' "$name" 2> /dev/null)
  if [ "$code" = 0 ] && ctr logs "$name" 2>&1 | grep -q 'blegateway\] stopped'; then
    pass "stop: the gateway ends on SIGTERM as PID 1 and exits 0"
  else fail "stop: exit code '$code'; $(ctr logs "$name" 2>&1 | tail -2 | tr '\n' ' ')"; fi
else
  fail "through the host bus: /health never answered 200 ($(curl -s "http://127.0.0.1:$port/health")); the gateway's log:"
  ctr logs "$name" 2>&1 | tail -20
fi
ctr rm -f "$name" > /dev/null 2>&1
stop_bus

step "the same bus without docker/dbus/blegateway.conf"
start_bus no
name=blegateway-check-nopolicy-$$
containers+=("$name")
set +e
timeout 60 "${engine[@]}" run --name "$name" "${hardened[@]}" -v "$dir/run/dbus:/run/dbus" "$IMAGE" \
  --listen "127.0.0.1:$(free_port)" "${state[@]}" > "$dir/nopolicy.log" 2>&1
status=$?
set -e
if [ "$status" != 0 ] && [ "$status" != 124 ] && grep -q 'docker/dbus/blegateway.conf' "$dir/nopolicy.log"; then
  pass "without the policy the gateway stops (exit $status) naming it: $(grep -o 'the bus.s policy refuses[^:]*' "$dir/nopolicy.log" | head -1)"
else
  fail "without the policy: exit $status, and no error naming docker/dbus/blegateway.conf:"
  tail -5 "$dir/nopolicy.log"
fi
ctr rm -f "$name" > /dev/null 2>&1
stop_bus

step "docker/compose.yaml with podman-compose, as docker/README.md says to use it"
if ! command -v podman-compose > /dev/null || [[ "${engine[0]}" != *podman* ]]; then
  echo "no podman-compose with podman here: compose.yaml is checked by docker/check.sh only"
else
  # A user's docker/ directory: compose.yaml and the .env it reads, with
  # the image built above and free ports rather than 8080 and 8081.
  # (Debian's podman-compose 1.0 knows no profiles: services are named.)
  project="$dir/compose"
  mkdir -p "$project"
  cp docker/compose.yaml "$project/compose.yaml"
  demo_port=$(free_port)
  compose_project=blegateway-check-$$
  compose() {
    (cd "$project" && podman-compose --podman-path "${engine[0]}" -p "$compose_project" -f compose.yaml "$@") \
      >> "$dir/compose.log" 2>&1 || { echo "podman-compose $*:"; tail -20 "$dir/compose.log"; return 1; }
  }
  containers+=("${compose_project}_demo_1" "${compose_project}_gateway_1")
  # wait_log CONTAINER PATTERN: until its log has PATTERN, or 60 s pass.
  wait_log() {
    for _ in $(seq 300); do
      ctr logs "$1" 2>&1 | grep -q "$2" && return 0
      sleep 0.2
    done
    return 1
  }
  printf 'BLEGATEWAY_IMAGE=%s\nBLEGATEWAY_PORT=%s\nBLEGATEWAY_DEMO_PORT=%s\n' "$IMAGE" "$(free_port)" "$demo_port" \
    > "$project/.env"
  # The demo needs no .env of its own: run it before there is one.
  mv "$project/.env" "$project/ports"
  (set -a; . "$project/ports"; set +a; compose up -d --no-build demo) || true
  mv "$project/ports" "$project/.env"
  if wait_healthy "http://127.0.0.1:$demo_port" "${compose_project}_demo_1"; then
    pass "compose: the demo service runs without a key: /health answers 200"
  else
    fail "compose: the demo service did not answer:"; tail -20 "$dir/compose.log"
  fi
  compose down -v || true
  compose up -d --no-build gateway || true
  if wait_log "${compose_project}_gateway_1" 'no API key: put BLEGATEWAY_API_KEY'; then
    pass "compose: without a key in .env the gateway stops and says where the key goes"
  else
    fail "compose: without a key the gateway did not refuse: $(ctr logs "${compose_project}_gateway_1" 2>&1 | tail -3 | tr '\n' ' ')"
  fi
  compose down -v || true
  # The keyless gateway restarts over and over (restart: unless-stopped),
  # and a container caught restarting can outlive `down`: make sure it is
  # gone, so the next `up` makes a new one that reads the new .env.
  ctr rm -f "${compose_project}_gateway_1" > /dev/null 2>&1 || true
  echo "BLEGATEWAY_API_KEY=$(openssl rand -hex 16)" >> "$project/.env"
  compose up -d --no-build --force-recreate gateway || true
  wait_log "${compose_project}_gateway_1" '\[blegateway\]' || true
  logs=$(ctr logs "${compose_project}_gateway_1" 2>&1 | tail -20)
  if ! grep -q 'no API key' <<< "$logs" && grep -q '\[blegateway\]' <<< "$logs"; then
    pass "compose: with the key in .env the gateway starts: $(head -1 <<< "$logs" | cut -c1-120)"
  else
    fail "compose: with the key in .env: $logs"
  fi
  compose down -v || true
fi

if [ "$failed" = 0 ]; then echo "container checks: all passed"; else echo "container checks: FAILED"; fi
exit "$failed"
