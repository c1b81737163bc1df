# Sourced by Tests/e2e/run.sh and Tests/e2e/fleet.sh: runs the bluez-vm rig
# and finds the run's logs.
#
# run_rig NAME RIG ARGS...: runs RIG with ARGS (as root: the rig boots a VM
# and installs packages), its output shown and kept in $rig_output, and sets
# $status to its exit status and $run_dir to the run's logs. A guest kernel
# that did not boot (under software emulation on a busy host it can panic
# setting up its timer before any of our code runs) is booted once more; a
# check that fails is never retried.

rig_output=$(mktemp)
trap 'rm -f "$rig_output"' EXIT

run_rig() {
    local name=$1 rig=$2 attempt
    shift 2
    local as_root=()
    [ "$(id -u)" = 0 ] || as_root=(sudo --preserve-env=BLUEZ_VM_DIR)
    for attempt in 1 2; do
        status=0
        "${as_root[@]}" "$rig" "$@" 2>&1 | tee "$rig_output" || status=$?
        if [ "$status" = 2 ] && [ "$attempt" = 1 ] && grep -q "guest did not boot" "$rig_output"; then
            echo "$name: the guest did not boot; booting it once more"
            continue
        fi
        break
    done
    run_dir=$(sed -n 's/^logs: //p' "$rig_output" | tail -1)
    [ -n "$run_dir" ] || run_dir="${BLUEZ_VM_DIR:-/tmp/bluez-vm}/runs/latest"
}
