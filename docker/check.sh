#!/usr/bin/env bash
# Checks docker/ without a Docker engine (see docker/README.md):
#   1. hadolint on the Dockerfile
#   2. compose.yaml against the Compose Specification schema, and its promises
#   3. the runtime stage provides every library the release binary needs
#   4. the D-Bus policy lets uid 10001 (and only it) call org.bluez
# Needs the debug build of bluez-sim (make test builds it) and root for 4.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=docker/host-bus.sh
. docker/host-bus.sh
# `make docker-check` puts the checkout's virtual environment (.venv/, with
# hadolint and check-jsonschema) first on the PATH.
export PATH="/opt/swift/usr/bin:$PWD/.venv/bin:$PATH"
failed=0
step() { echo "== $*"; }
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failed=1; }

for tool in hadolint check-jsonschema; do
  command -v "$tool" >/dev/null || { echo "docker/check.sh: $tool is missing: run it through 'make docker-check'" >&2; exit 2; }
done

step "hadolint"
if hadolint docker/Dockerfile; then pass "hadolint docker/Dockerfile"; else fail "hadolint docker/Dockerfile"; fi

step "compose.yaml"
if check-jsonschema --builtin-schema vendor.compose-spec docker/compose.yaml; then
  pass "compose.yaml matches the Compose Specification"
else
  fail "compose.yaml does not match the Compose Specification"
fi
if python3 - docker/compose.yaml <<'PY'
import sys, yaml
compose = yaml.safe_load(open(sys.argv[1]))
gateway, demo = compose["services"]["gateway"], compose["services"]["demo"]
problems = []
if "/run/dbus:/run/dbus" not in gateway.get("volumes", []):
    problems.append("gateway does not mount the host's system bus directory (a restarted dbus-daemon's new socket shows only there)")
if "blegateway" not in str(gateway.get("healthcheck", {}).get("test", [])):
    problems.append("gateway has no health check through `blegateway health`")
if gateway.get("env_file") != ".env" or "env_file" in demo:
    problems.append("the gateway does not take its key and settings from docker/.env, or the demo needs that file too")
if gateway.get("restart") not in ("always", "unless-stopped", "on-failure"):
    problems.append("gateway has no restart policy")
if "demo" not in demo.get("profiles", []) or "--simulate" not in demo.get("command", []):
    problems.append("the demo profile does not run --simulate")
# Compose interpolates the whole file whatever the profile: a required
# variable (${X:?...}) would stop the demo, which needs no key; and
# podman-compose 1.0 leaves ${X:-} (an empty default) as it is.
text = open(sys.argv[1]).read()
if ":?" in text or ":-}" in text:
    problems.append("a required variable (${...:?}) or an empty default (${...:-}) in compose.yaml")
if "BLEGATEWAY_API_KEY" not in " ".join(gateway.get("entrypoint", [])):
    problems.append("the gateway does not refuse to start without a key")
for name, service in compose["services"].items():
    if service.get("build", {}).get("dockerfile") != "docker/Dockerfile":
        problems.append(f"{name} does not build docker/Dockerfile")
for problem in problems: print(problem)
sys.exit(1 if problems else 0)
PY
then pass "compose.yaml mounts the bus, takes the key from docker/.env (refusing to start without), restarts, has a demo that needs no key"; else fail "compose.yaml promises"; fi

step "runtime libraries of the release binary"
# `make release`: the flags the container builds with, and one compilation
# shared with the benchmarks' (other flags would rebuild everything).
if make --no-print-directory release >/tmp/blegateway-release-build.log 2>&1; then
  binary="$(swift build -c release --show-bin-path)/blegateway"
  if python3 docker/check-runtime-libraries.py "$binary" docker/Dockerfile; then
    pass "every library the release binary needs is in the runtime stage"
  else
    fail "the runtime stage misses libraries"
  fi
else
  tail -20 /tmp/blegateway-release-build.log
  fail "the release build failed"
fi

step "D-Bus policy"
# A malformed policy file is skipped by dbus-daemon without a word.
if python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" docker/dbus/blegateway.conf; then
  pass "the policy file is well-formed XML"
else
  fail "the policy file is not well-formed XML (dbus-daemon would ignore it)"
fi
sim="$(swift build --show-bin-path)/bluez-sim"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "skipped: needs root and setpriv"
elif [ ! -x "$sim" ]; then
  fail "no $sim: build first (make test)"
else
  dir=$(mktemp -d /tmp/blegateway-policy-XXXXXX)
  chmod 755 "$dir"
  mkdir "$dir/system.d"
  # dbus-daemon drops connections from a uid with no passwd entry (it must
  # resolve the uid's groups to apply its policy), so the host needs a user
  # with the container's uid, as docker/README.md says: make one as
  # documented, for the length of the check.
  made_user=""
  if ! getent passwd 10001 >/dev/null; then
    useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin blegateway && made_user=blegateway
  fi
  cleanup() {
    set +e
    jobs -p | xargs -r kill 2>/dev/null
    [ -f "$dir/pid" ] && kill "$(cat "$dir/pid")" 2>/dev/null
    rm -rf "$dir"
    [ -n "$made_user" ] && userdel "$made_user"
  }
  trap cleanup EXIT
  # A system bus that denies method calls by default (as Debian's
  # system.conf), with upstream BlueZ's rule (only root may call org.bluez).
  policy_bus() {  # policy_bus WITH_OUR_POLICY -> starts daemon and bluez-sim, sets $address
    rm -f "$dir/system.d/"*
    [ "$1" = yes ] && cp docker/dbus/blegateway.conf "$dir/system.d/"
    host_bus_config "$dir/bus" "$dir/system.d" > "$dir/bus.conf"
    address=$(dbus-daemon --config-file="$dir/bus.conf" --fork --print-address=1 --print-pid=3 3>"$dir/pid" 2>/dev/null | head -1)
    "$sim" --bus "$address" >"$dir/sim.log" 2>&1 &
    for _ in $(seq 50); do
      busctl --address="$address" status org.bluez >/dev/null 2>&1 && break
      sleep 0.1
    done
  }
  call_as() {  # call_as UID -> exit status of a GetManagedObjects call to org.bluez
    setpriv --reuid="$1" --regid="$1" --clear-groups \
      busctl --address="$address" call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects >/dev/null 2>"$dir/err"
  }
  stop_bus() { kill %% 2>/dev/null || true; kill "$(cat "$dir/pid")" 2>/dev/null || true; wait 2>/dev/null || true; }

  refused() {  # refused UID WHAT: the call fails by policy, not for another reason
    if call_as "$1"; then fail "$2 was let in"
    elif grep -qi "access.denied" "$dir/err"; then pass "$2 is refused (access denied)"
    else fail "$2 failed for another reason: $(cat "$dir/err")"; fi
  }
  policy_bus yes
  if call_as 10001; then pass "uid 10001 calls org.bluez with the policy"; else fail "uid 10001 refused with the policy: $(cat "$dir/err")"; fi
  refused "$(id -u nobody)" "another user (nobody)"
  stop_bus
  policy_bus no
  refused 10001 "uid 10001 without the policy"
  stop_bus
fi

if [ "$failed" = 0 ]; then echo "docker checks: all passed"; else echo "docker checks: FAILED"; fi
exit "$failed"
