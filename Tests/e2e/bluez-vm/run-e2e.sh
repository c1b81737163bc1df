#!/bin/bash
# run-e2e.sh — real BlueZ end to end in a QEMU guest, on a host that has no
# AF_BLUETOOTH and no /dev/vhci.
#
# The project's own copy of the bluez-vm rig (../shared/bluez-vm), for the
# fleet's end-to-end run (Tests/e2e/fleet.sh): with --controllers N, btvirt
# emulates N LE controllers on its one radio (hci0 … hciN-1; hci1 stays the
# peripheral), so that two gateways, each on its own adapter, serve one
# peripheral on the real bluetoothd. Otherwise the same as the shared rig.
#
# It boots Debian 12's stock kernel (linux-image-amd64) under qemu-system-x86_64
# with the host's own root filesystem shared read-only over virtio-9p, then
# inside the guest: system dbus-daemon, hci_vhci, btvirt (two emulated LE
# controllers that share one emulated radio), bluetoothd. hci1 becomes a
# peripheral running BlueZ's example-gatt-server + example-advertisement; a
# central-side checker drives hci0 over org.bluez D-Bus (discover, connect,
# resolve services, read, notify, write, disconnect) and prints PASS/FAIL per
# step. Afterwards an optional program runs inside the guest (--guest-cmd) and
# an optional program runs on the host against its forwarded TCP port
# (--host-cmd). By default a small HTTP server in the guest, reached from the
# host through qemu's user-mode hostfwd on 127.0.0.1, shows that path.
#
# Everything lives under $BLUEZ_VM_DIR, default /tmp/bluez-vm (cache/ = kernel + initramfs,
# runs/<id>/ = logs of one run, runs/latest -> the newest). Every wait is
# bounded, and a watchdog bounds the whole script (--timeout, default 300 s,
# package install included). A normal run takes about 35 s under TCG.
#
# KVM: used only when the host has real vmx/svm; on a PVM host (kvm_pvm, as in
# some nested virtual machines) a stock kernel cannot run under /dev/kvm, so TCG.
#
# Exit status: 0 when every step passed, 1 when a step failed, 2 on setup error.
set -uo pipefail

E2E_DIR=${BLUEZ_VM_DIR:-/tmp/bluez-vm}
CACHE=$E2E_DIR/cache
ACCEL=auto
GUEST_CMD=""
HOST_CMD=""
GUEST_PORT=8080
BUS_PORT=""
HOST_PORT=18080
HOLD=60
SCRIPT_TIMEOUT=300
RUN_CHECKER=1
BLUETOOTHD_ARGS=""
QUIET=0
MEM=1024
SMP=2
SHARES=()
FAULT_STALL_BTVIRT=0
CONTROLLERS=2

usage() {
  cat <<EOF
usage: $0 [options]
  --accel auto|kvm|tcg   accelerator (auto: kvm only on a host with vmx/svm and
                         a usable /dev/kvm that is not PVM, else tcg; a kvm boot
                         that shows no sign of life in 25 s is retried on tcg)
  --guest-cmd CMD        run CMD (bash -c) inside the guest once BlueZ, the
                         peripheral and the checker are done; the host's files
                         are visible at the same paths (read-only, /tmp hidden)
  --host-cmd CMD         run CMD on the host once the guest is ready; it gets
                         E2E_HTTP_URL=http://127.0.0.1:HOST_PORT and E2E_RUN
  --guest-port N         guest TCP port forwarded to the host (default $GUEST_PORT)
  --host-port N          host port, bound to 127.0.0.1 only (default $HOST_PORT;
                         the next free one is taken when it is busy)
  --bus-port N           also expose the guest's system bus to the host as
                         tcp:host=127.0.0.1,port=N (ANONYMOUS auth, no fd
                         passing); --host-cmd then gets DBUS_SYSTEM_BUS_ADDRESS
                         set to it, so a host-built program can run natively
  --share DIR            also mount host DIR read-write at the same path in the
                         guest (repeatable; needed for paths under /tmp)
  --hold N               seconds the guest keeps running for --host-cmd (default $HOLD)
  --no-checker           skip the built-in central checker
  --bluetoothd-args S    extra bluetoothd arguments, e.g. "-E"
  --controllers N        emulated LE controllers on the one radio (2 to 8,
                         default 2); hci1 is the peripheral, the others idle
  --timeout N            hard wall-clock limit for the whole script, package
                         install included (default $SCRIPT_TIMEOUT s)
  --mem MB / --smp N     guest size (default $MEM MB / $SMP vCPUs)
  --quiet                do not stream the guest console
  --fault-stall-btvirt   self-test: stall btvirt 3 s during HCI init so hci0's
                         init times out, to exercise the btvirt restart path
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --accel) ACCEL=$2; shift 2 ;;
    --guest-cmd) GUEST_CMD=$2; shift 2 ;;
    --host-cmd) HOST_CMD=$2; shift 2 ;;
    --guest-port) GUEST_PORT=$2; shift 2 ;;
    --bus-port) BUS_PORT=$2; shift 2 ;;
    --host-port) HOST_PORT=$2; shift 2 ;;
    --share) SHARES+=("$(readlink -f "$2")"); shift 2 ;;
    --hold) HOLD=$2; shift 2 ;;
    --no-checker) RUN_CHECKER=0; shift ;;
    --bluetoothd-args) BLUETOOTHD_ARGS=$2; shift 2 ;;
    --controllers) CONTROLLERS=$2; shift 2 ;;
    --timeout) SCRIPT_TIMEOUT=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --smp) SMP=$2; shift 2 ;;
    --quiet) QUIET=1; shift ;;
    --fault-stall-btvirt) FAULT_STALL_BTVIRT=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
  esac
done

case "$CONTROLLERS" in [2-8]) ;; *) echo "--controllers must be 2 to 8" >&2; exit 2 ;; esac
T_SCRIPT=$(date +%s.%N)
S0=$(date +%s)
# hard bound on the whole script: a watchdog sends us TERM at the limit; the
# EXIT trap then stops qemu (by its PID) and the console tail.
bash -c 'sleep "$1" & s=$!; trap "kill $s 2>/dev/null; wait $s; exit 0" TERM; wait $s && { echo "[host] watchdog: $1 s limit reached" >&2; kill -TERM "$2"; }' _ "$SCRIPT_TIMEOUT" $$ &
WATCHDOG_PID=$!
QPID=""; TAILPID=""
cleanup() {
  [ -n "${WATCHDOG_PID:-}" ] && kill "$WATCHDOG_PID" 2>/dev/null
  [ -n "$TAILPID" ] && kill "$TAILPID" 2>/dev/null
  if [ -n "$QPID" ] && kill -0 "$QPID" 2>/dev/null; then
    kill "$QPID" 2>/dev/null; sleep 2; kill -9 "$QPID" 2>/dev/null
  fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.2f", b-a}'; }
say() { echo "[host $(since "$T_SCRIPT")s] $*"; }
die() { echo "[host] FATAL: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "must run as root"
mkdir -p "$CACHE" "$E2E_DIR/runs"

# ---------------------------------------------------------------- packages --
PKGS=(qemu-system-x86 bluez bluez-test-tools bluez-test-scripts busybox-static
      python3 python3-dbus python3-gi dbus kmod iproute2 curl gzip)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! timeout 100 apt-get -o DPkg::Lock::Timeout=40 install -y --no-install-recommends "${missing[@]}" > "$CACHE/apt-install.log" 2>&1; then
    timeout 60 apt-get -o DPkg::Lock::Timeout=20 update > "$CACHE/apt-update.log" 2>&1
    timeout 100 apt-get -o DPkg::Lock::Timeout=40 install -y --no-install-recommends "${missing[@]}" > "$CACHE/apt-install.log" 2>&1 \
      || { tail -5 "$CACHE/apt-install.log" >&2; die "apt-get install failed"; }
  fi
fi

# ------------------------------------------------------------------ kernel --
# The guest kernel is Debian's stock linux-image-amd64, unpacked (not installed).
KDIR=$CACHE/kernel
VMLINUZ=$(ls "$KDIR"/boot/vmlinuz-* 2>/dev/null | head -1)
if [ -z "$VMLINUZ" ]; then
  say "fetching the Debian kernel package"
  KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  if [ -z "$KPKG" ]; then
    timeout 90 apt-get update > "$CACHE/apt-update.log" 2>&1
    KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  fi
  [ -n "$KPKG" ] || die "cannot resolve linux-image-amd64"
  mkdir -p "$CACHE/debs" && chmod 777 "$CACHE/debs"
  (cd "$CACHE/debs" && timeout 120 apt-get download "$KPKG" > "$CACHE/apt-download.log" 2>&1) || die "apt-get download $KPKG failed"
  rm -rf "$KDIR.tmp" && mkdir -p "$KDIR.tmp"
  dpkg -x "$CACHE"/debs/"$KPKG"_*.deb "$KDIR.tmp" || die "dpkg -x failed"
  KVER=$(ls "$KDIR.tmp/lib/modules" | head -1)
  depmod -b "$KDIR.tmp" "$KVER" || die "depmod failed"
  echo "$KPKG $(dpkg-deb -f "$CACHE"/debs/"$KPKG"_*.deb Version)" > "$KDIR.tmp/PACKAGE"
  rm -rf "$KDIR" && mv "$KDIR.tmp" "$KDIR" && rm -rf "$CACHE/debs"
  VMLINUZ=$(ls "$KDIR"/boot/vmlinuz-* | head -1)
fi
KVER=${VMLINUZ##*/vmlinuz-}
KMOD=$KDIR/lib/modules/$KVER/kernel
[ -f "$KDIR/lib/modules/$KVER/modules.dep" ] || depmod -b "$KDIR" "$KVER" || die "depmod failed"

# --------------------------------------------------------------- initramfs --
# Stage 1 (busybox): load virtio + 9p, mount the host root read-only, tmpfs on
# the writable places, the e2e folder read-write, then switch_root into stage 2
# (a bash script on the host filesystem, found through E2E_RUN from the kernel
# command line).
INITRD=$CACHE/initrd-$KVER.gz
IR=$CACHE/initramfs.$$
rm -rf "$IR"; mkdir -p "$IR/bin" "$IR/mods"
cp /bin/busybox "$IR/bin/busybox"
for f in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev \
         drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci fs/netfs/netfs \
         fs/fscache/fscache net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p; do
  m=$(ls "$KMOD/$f".ko* 2>/dev/null | head -1)
  [ -n "$m" ] || die "module $f not in $KVER"
  case "$m" in
    *.ko.xz) xz -dc "$m" > "$IR/mods/$(basename "$f").ko" ;;
    *.ko.zst) zstd -qdc "$m" > "$IR/mods/$(basename "$f").ko" ;;
    *) cp "$m" "$IR/mods/" ;;
  esac
done
cat > "$IR/init" <<'EOF'
#!/bin/busybox sh
PATH=/bin
bb=/bin/busybox
$bb mkdir -p /proc /sys /dev /newroot
$bb mount -t proc proc /proc
$bb mount -t sysfs sys /sys
$bb mount -t devtmpfs dev /dev
echo "STAGE1 uptime=$($bb cut -d' ' -f1 /proc/uptime)"
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p; do
  $bb insmod /mods/$m.ko || echo "insmod $m failed"
done
O="trans=virtio,version=9p2000.L,msize=512000"
i=0
until $bb mount -t 9p -o "$O,ro,cache=loose" hostroot /newroot; do
  i=$((i+1)); [ $i -gt 100 ] && { echo "FATAL: cannot mount hostroot"; $bb poweroff -f; }
  $bb sleep 0.1
done
for d in tmp run var/tmp var/lib/bluetooth var/log; do
  $bb mount -t tmpfs -o mode=0755 tmpfs /newroot/$d || echo "tmpfs on /$d failed"
done
$bb chmod 1777 /newroot/tmp /newroot/var/tmp
$bb mkdir -p "/newroot$E2E_DIR"
$bb mount -t 9p -o "$O,rw,cache=none" e2e "/newroot$E2E_DIR" || echo "mount of e2e share failed"
$bb mount --move /proc /newroot/proc
$bb mount --move /sys /newroot/sys
$bb mount --move /dev /newroot/dev
[ -x "/newroot$E2E_RUN/guest/init.sh" ] || { echo "FATAL: no $E2E_RUN/guest/init.sh"; $bb poweroff -f; }
exec $bb switch_root /newroot /bin/bash "$E2E_RUN/guest/init.sh"
EOF
chmod +x "$IR/init"
(cd "$IR" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1 > "$INITRD.$$") && mv "$INITRD.$$" "$INITRD" || die "initramfs build failed"
rm -rf "$IR"

# ------------------------------------------------------------------ run dir --
RUN_ID=$(date +%Y%m%d-%H%M%S)-$$
RUN=$E2E_DIR/runs/$RUN_ID
mkdir -p "$RUN/guest"
ln -sfn "$RUN_ID" "$E2E_DIR/runs/latest"
ls -1dt "$E2E_DIR"/runs/2* 2>/dev/null | tail -n +11 | xargs -r rm -rf   # keep 10 runs

port_busy() { ss -ltnH "sport = :$1" 2>/dev/null | grep -q .; }
for i in $(seq 0 20); do port_busy "$HOST_PORT" || break; HOST_PORT=$((HOST_PORT+1)); done
port_busy "$HOST_PORT" && die "no free host port"
[ -n "$BUS_PORT" ] && port_busy "$BUS_PORT" && die "host port $BUS_PORT (--bus-port) is busy"
[ -n "$BUS_PORT" ] && [ "$BUS_PORT" = "$HOST_PORT" ] && die "--bus-port equals the HTTP host port"

DEMO_HTTP=0
if [ -z "$GUEST_CMD" ] && [ -z "$HOST_CMD" ]; then
  # default demo: a web server in the guest, fetched by the host through hostfwd
  DEMO_HTTP=1
  # (content made inside the guest, in its private /tmp, so only the guest can serve it)
  GUEST_CMD="mkdir -p /tmp/www && uname -r > /tmp/www/kernel && busctl --system --list tree org.bluez > /tmp/www/bluez-objects.txt && exec python3 -m http.server $GUEST_PORT --bind 0.0.0.0 --directory /tmp/www"
  HOST_CMD="set -e; k=\$(curl -sS --max-time 15 \"\$E2E_HTTP_URL/kernel\"); echo \"guest kernel via HTTP: \$k\"; [ \"\$k\" = $KVER ]; curl -sS --max-time 15 \"\$E2E_HTTP_URL/bluez-objects.txt\" | tee \"\$E2E_RUN/bluez-objects-via-http.txt\" | grep -c /org/bluez/hci0/dev_ | sed 's/^/hci0 device objects via HTTP: /'"
fi

VM_TIMEOUT=$(( SCRIPT_TIMEOUT - ($(date +%s) - S0) - 10 ))
[ "$VM_TIMEOUT" -ge 60 ] || die "only ${VM_TIMEOUT}s left for the VM (setup was slow); raise --timeout"
GUEST_TIMEOUT=$((VM_TIMEOUT - 15))
{
  printf 'GUEST_TIMEOUT=%q\n' "$GUEST_TIMEOUT"
  printf 'GUEST_CMD=%q\n' "$GUEST_CMD"
  printf 'GUEST_PORT=%q\n' "$GUEST_PORT"
  printf 'BUS_TCP=%q\n' "$([ -n "$BUS_PORT" ] && echo 1 || echo 0)"
  printf 'WAIT_HOST=%q\n' "$([ -n "$HOST_CMD" ] && echo 1 || echo 0)"
  printf 'HOLD=%q\n' "$HOLD"
  printf 'RUN_CHECKER=%q\n' "$RUN_CHECKER"
  printf 'FAULT_STALL_BTVIRT=%q\n' "$FAULT_STALL_BTVIRT"
  printf 'BLUETOOTHD_ARGS=%q\n' "$BLUETOOTHD_ARGS"
  printf 'CONTROLLERS=%q\n' "$CONTROLLERS"
  printf 'KDIR=%q\n' "$KDIR"
  printf 'SHARES=%q\n' "$(i=0; for s in "${SHARES[@]+"${SHARES[@]}"}"; do printf 'sh%d:%s ' $i "$s"; i=$((i+1)); done)"
} > "$RUN/config.env"

# ------------------------------------------------------ guest-side scripts --
# The guest kernel's modules live in the unpacked package, not in /lib/modules;
# the kernel's request_module() uses this helper too (with an empty environment).
cat > "$RUN/guest/modprobe.sh" <<EOF
#!/bin/sh
echo "\$(cut -d' ' -f1 /proc/uptime) \$*" >> /run/modprobe-calls.log 2>/dev/null
# no module alias has a "(" (crypto templates such as "crypto-ecb(aes)" are
# built from loaded modules): answer those requests at once instead of
# running modprobe over 9p under TCG
case "\$*" in *"("*) exit 1 ;; esac
exec /sbin/modprobe -d "$KDIR" "\$@"
EOF
chmod +x "$RUN/guest/modprobe.sh"

cat > "$RUN/guest/init.sh" <<'EOF'
#!/bin/bash
# Stage 2: PID 1 inside the guest. Brings up dbus, btvirt, bluetoothd, the
# peripheral on hci1, runs the central checker on hci0, then the optional
# guest command, then powers off. Every wait is bounded.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root
RUN=$E2E_RUN; G=$RUN/guest
export E2E_RUN=$RUN
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "[guest $(up)s] $*"; echo "$(up) $*" >> "$RUN/guest-events.log"; }
poweroff_now() { log "power off"; sync; echo o > /proc/sysrq-trigger; sleep 10; }
waitfor() { # waitfor SECONDS CMD...: poll CMD every 0.2 s for SECONDS of wall
  # clock (each CMD must be bounded itself: timeout N / --reply-timeout)
  local end=$((SECONDS + $1)); shift
  while ((SECONDS < end)); do "$@" && return 0; sleep 0.2; done; "$@"; }
. "$RUN/config.env"
( sleep "$GUEST_TIMEOUT"; echo "[guest] watchdog: ${GUEST_TIMEOUT}s, powering off"; sync; echo o > /proc/sysrq-trigger ) &
log "stage2 start (kernel $(uname -r))"
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
hostname bluez-e2e
for s in $SHARES; do
  mkdir -p "${s#*:}" 2>/dev/null
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,rw,cache=none "${s%%:*}" "${s#*:}" && log "mounted share ${s#*:}" || log "share ${s#*:} FAILED"
done
echo "$G/modprobe.sh" > /proc/sys/kernel/modprobe
# crypto first (bluetooth's init asks for a DRBG; btvirt and SMP use AES-ECB,
# AES-CMAC, ECDH), so the kernel need not spawn modprobe for each of them
timeout 60 "$G/modprobe.sh" -a ctr sha512_generic sha3_generic jitterentropy_rng drbg ecb cmac ecdh_generic \
  af_alg algif_skcipher algif_hash bluetooth hci_vhci virtio_net || log "modprobe failed"
# Pre-instantiate the AF_ALG algorithms that btvirt's emulated controllers open
# (ecb(aes), cmac(aes)). Otherwise their first use makes the kernel run modprobe
# (over 9p, under TCG: ~0.3 s each) several times while hci0, already
# registered, waits for btvirt to answer its HCI_Reset (2 s kernel limit).
timeout 60 python3 -c '
import socket
for t, n in (("skcipher", "ecb(aes)"), ("hash", "cmac(aes)")):
    s = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0); s.bind((t, n)); s.close()
' || log "AF_ALG pre-warm failed"
log "modules loaded: $(lsmod | awk 'NR>1{print $1}' | grep -E '^(bluetooth|hci_vhci|cmac|ecdh_generic|virtio_net|af_alg|ecb)$' | tr '\n' ' ')"
ip link set lo up
if ip link show eth0 >/dev/null 2>&1; then
  ip addr add 10.0.2.15/24 dev eth0; ip link set eth0 up   # qemu user net; no default route
fi
{ uname -a; bluetoothd --version | sed 's/^/bluetoothd /'; dbus-daemon --version | head -1;
  python3 --version; dpkg-query -W bluez bluez-test-tools bluez-test-scripts dbus python3-dbus python3-gi; } > "$RUN/versions-guest.txt" 2>&1
mkdir -p /run/dbus
if [ "$BUS_TCP" = 1 ]; then
  # the system bus, plus a TCP listener that qemu forwards to the host (the
  # guest is isolated: restrict=on, only 127.0.0.1 on the host reaches it)
  cat > /run/dbus-system-tcp.conf <<'CONF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include>/usr/share/dbus-1/system.conf</include>
  <listen>tcp:host=0.0.0.0,port=7777,family=ipv4</listen>
  <auth>EXTERNAL</auth>
  <auth>ANONYMOUS</auth>
  <allow_anonymous/>
</busconfig>
CONF
  timeout 20 dbus-daemon --config-file=/run/dbus-system-tcp.conf --fork --print-pid > "$RUN/dbus.pid" || log "dbus-daemon FAILED"
else
  timeout 20 dbus-daemon --system --fork --print-pid > "$RUN/dbus.pid" || log "dbus-daemon FAILED"
fi
log "dbus-daemon up"
dbus-monitor --system "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'" > "$RUN/dbus-monitor.log" 2>&1 &
# btvirt: two LE-only emulated controllers on one emulated radio (via /dev/vhci).
# On a loaded host the kernel's HCI init can time out (dmesg: "hci0: Opcode
# 0x0c03 failed: -110": btvirt did not answer HCI_Reset within the kernel's 2 s)
# and that controller then never reaches mgmt/bluetoothd. A controller whose
# init completed has read its BD address, so wait for both addresses, else
# restart btvirt (up to 3 tries).
bdaddr() { timeout 5 hciconfig "$1" 2>/dev/null | sed -n 's/.*BD Address: \([0-9A-F:]*\).*/\1/p'; }
ctrl_ok() { local a; a=$(bdaddr "$1"); [ -n "$a" ] && [ "$a" != 00:00:00:00:00:00 ]; }
ctrl_ready() { local i; for ((i = 0; i < CONTROLLERS; i++)); do ctrl_ok "hci$i" || return 1; done; }
ctrl_list() { local i; for ((i = 0; i < CONTROLLERS; i++)); do printf 'hci%d=%s ' "$i" "$(bdaddr "hci$i")"; done; }
btvirt --help > /dev/null 2>&1; hciconfig --help > /dev/null 2>&1   # page them in
# HCI trace of everything (read it with: btmon -r runs/<id>/hci.btsnoop, or Wireshark)
btmon -w /tmp/hci.btsnoop > /dev/null 2>&1 &
BTMON_PID=$!
for try in 1 2 3; do
  nice -n -10 btvirt -L "-l$CONTROLLERS" >> "$RUN/btvirt.log" 2>&1 &
  BTVIRT_PID=$!
  if [ "$FAULT_STALL_BTVIRT" = 1 ] && [ "$try" = 1 ]; then   # self-test of this recovery
    waitfor 10 test -e /sys/class/bluetooth/hci0; kill -STOP "$BTVIRT_PID"; sleep 3; kill -CONT "$BTVIRT_PID"
    log "fault injected: btvirt stopped for 3 s right after hci0 appeared"
  fi
  waitfor 10 ctrl_ready && break
  log "controllers not ready (try $try): $(ctrl_list) $(dmesg | grep -i 'bluetooth: hci' | tail -2 | tr '\n' ';')"
  kill "$BTVIRT_PID"; wait "$BTVIRT_PID" 2>/dev/null; sleep 1
done
log "btvirt controllers: $(ctrl_list)"
bluetoothd -n -d $BLUETOOTHD_ARGS > "$RUN/bluetoothd.log" 2>&1 &
has_owner() { dbus-send --system --reply-timeout=3000 --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null | grep -q 'boolean true'; }
adapter_up() { dbus-send --system --reply-timeout=3000 --print-reply --dest=org.bluez "/org/bluez/$1" org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Address >/dev/null 2>&1; }
waitfor 30 has_owner org.bluez && log "org.bluez on the system bus" || log "org.bluez NOT on the bus"
waitfor 15 adapter_up hci1; waitfor 5 adapter_up hci0
log "adapters on D-Bus: hci0=$(adapter_up hci0 && echo yes || echo NO) hci1=$(adapter_up hci1 && echo yes || echo NO)"
timeout 10 busctl --system set-property org.bluez /org/bluez/hci1 org.bluez.Adapter1 Powered b true && log "hci1 powered (busctl)"
# peripheral on hci1: BlueZ's own examples with find_adapter() overridden
EX=/usr/share/doc/bluez-test-scripts/examples
for s in example-gatt-server example-advertisement; do
  sed "s|^if __name__ == '__main__':|import os\ndef find_adapter(bus):\n    return '/org/bluez/' + os.environ.get('PERIPH_HCI', 'hci1')\n\nif __name__ == '__main__':|" "$EX/$s" > "/tmp/$s.py"
done
PERIPH_HCI=hci1 python3 -u /tmp/example-gatt-server.py > "$RUN/periph-gatt-server.log" 2>&1 &
PERIPH_HCI=hci1 python3 -u /tmp/example-advertisement.py > "$RUN/periph-advertisement.log" 2>&1 &
periph_ready() { grep -q 'GATT application registered' "$RUN/periph-gatt-server.log" && grep -q 'Advertisement registered' "$RUN/periph-advertisement.log"; }
periph_failed() { grep -q 'Failed' "$RUN"/periph-*.log; }
waitfor 40 eval 'periph_ready || periph_failed'
log "peripheral: $(grep -h -E 'registered|Failed' "$RUN"/periph-*.log | tr '\n' ';')"
if [ "$RUN_CHECKER" = 1 ]; then
  log "central checker start"
  CENTRAL_HCI=hci0 PERIPH_HCI=hci1 E2E_RESULTS=$RUN/results.json timeout 150 python3 -u "$G/central_check.py" 2>&1 | tee "$RUN/checker.log"
  log "central checker done rc=${PIPESTATUS[0]}"
fi
if [ -n "$GUEST_CMD" ]; then
  log "guest command start: $GUEST_CMD"
  ( cd "$RUN" && exec env DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/dbus/system_bus_socket \
      CENTRAL_HCI=hci0 PERIPH_HCI=hci1 bash -c "$GUEST_CMD" ) > "$RUN/guest-cmd.log" 2>&1 &
  GPID=$!
  listening() { ss -ltnH "sport = :$GUEST_PORT" | grep -q .; }
  if [ "$WAIT_HOST" = 1 ]; then
    waitfor 30 eval 'listening || ! kill -0 $GPID 2>/dev/null'
    log "guest port $GUEST_PORT listening: $(listening && echo yes || echo no)"
  fi
fi
if [ "$WAIT_HOST" = 1 ]; then
  echo ready > "$RUN/guest-ready"
  log "ready; holding up to ${HOLD}s for the host command"
  waitfor "$HOLD" test -e "$RUN/host-done"
  log "host done: $(cat "$RUN/host-done" 2>/dev/null || echo 'no (hold expired)')"
elif [ -n "$GUEST_CMD" ]; then
  waitfor "$HOLD" eval '! kill -0 $GPID 2>/dev/null'
fi
if [ -n "${GPID:-}" ]; then
  kill -0 "$GPID" 2>/dev/null && { kill "$GPID"; sleep 1; kill -9 "$GPID" 2>/dev/null; }
  wait "$GPID" 2>/dev/null; log "guest command exit status $?"
fi
timeout 10 btmgmt info > "$RUN/btmgmt-info.txt" 2>&1
kill "$BTMON_PID" 2>/dev/null; sleep 0.5; cp /tmp/hci.btsnoop "$RUN/" 2>/dev/null
cp /run/modprobe-calls.log "$RUN/" 2>/dev/null; lsmod > "$RUN/lsmod.txt"
dmesg > "$RUN/dmesg.txt"
echo done > "$RUN/guest-done"
poweroff_now
EOF
chmod +x "$RUN/guest/init.sh"

cat > "$RUN/guest/central_check.py" <<'EOF'
#!/usr/bin/python3 -u
# Central-side end-to-end checker: drives org.bluez on the system bus as a
# BLE central (adapter hci0 by default) against a peripheral that advertises
# Heart Rate (0x180D) / Battery (0x180F) and serves BlueZ's example-gatt-server.
# Prints one "PASS|FAIL <step> ..." line per step and a closing
# "E2E: N passed, M failed" line. Every wait is bounded.
import json
import os
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = 'org.bluez'
OM = 'org.freedesktop.DBus.ObjectManager'
PROPS = 'org.freedesktop.DBus.Properties'
ADAPTER = 'org.bluez.Adapter1'
DEVICE = 'org.bluez.Device1'
GSVC = 'org.bluez.GattService1'
GCHR = 'org.bluez.GattCharacteristic1'
ADVMGR = 'org.bluez.LEAdvertisingManager1'

UUID_HR_SVC = '0000180d-0000-1000-8000-00805f9b34fb'
UUID_BAT_SVC = '0000180f-0000-1000-8000-00805f9b34fb'
UUID_TEST_SVC = '12345678-1234-5678-1234-56789abcdef0'
UUID_HR_MEAS = '00002a37-0000-1000-8000-00805f9b34fb'
UUID_BODY_LOC = '00002a38-0000-1000-8000-00805f9b34fb'
UUID_HR_CP = '00002a39-0000-1000-8000-00805f9b34fb'
UUID_BAT_LVL = '00002a19-0000-1000-8000-00805f9b34fb'
UUID_TEST_CHR = '12345678-1234-5678-1234-56789abcdef1'

CENTRAL = os.environ.get('CENTRAL_HCI', 'hci0')
PERIPH = os.environ.get('PERIPH_HCI', 'hci1')
RESULTS = os.environ.get('E2E_RESULTS', '')

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
ctx = GLib.MainContext.default()
GLib.timeout_add(50, lambda: True)  # wake the loop regularly while waiting

objects = {}       # path -> {iface: {prop: value}}
value_events = []  # (t, path, bytes) from PropertiesChanged(Value)
prop_true_at = {}  # (path, iface, prop) -> first time it turned true


def on_ifaces_added(path, ifaces):
    objects.setdefault(str(path), {}).update(
        {str(k): dict(v) for k, v in ifaces.items()})


def on_ifaces_removed(path, ifaces):
    o = objects.get(str(path), {})
    for i in ifaces:
        o.pop(str(i), None)


def on_props_changed(iface, changed, invalidated, path=None):
    o = objects.setdefault(str(path), {}).setdefault(str(iface), {})
    o.update(dict(changed))
    for k, v in changed.items():
        if isinstance(v, dbus.Boolean) and v:
            prop_true_at.setdefault((str(path), str(iface), str(k)),
                                    time.monotonic())
    if str(iface) == GCHR and 'Value' in changed:
        value_events.append((time.monotonic(), str(path),
                             bytes(int(b) for b in changed['Value'])))


bus.add_signal_receiver(on_ifaces_added, dbus_interface=OM,
                        signal_name='InterfacesAdded', bus_name=BLUEZ)
bus.add_signal_receiver(on_ifaces_removed, dbus_interface=OM,
                        signal_name='InterfacesRemoved', bus_name=BLUEZ)
bus.add_signal_receiver(on_props_changed, dbus_interface=PROPS,
                        signal_name='PropertiesChanged', bus_name=BLUEZ,
                        path_keyword='path')


def refresh():
    om = dbus.Interface(bus.get_object(BLUEZ, '/'), OM)
    for p, ifs in om.GetManagedObjects(timeout=10).items():
        objects[str(p)] = {str(k): dict(v) for k, v in ifs.items()}


def spin_until(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r = pred()
        if r:
            return r
        ctx.iteration(True)
    return pred()


results = []


def step(name, ok, detail='', t=None):
    line = '%s %-32s %s' % ('PASS' if ok else 'FAIL', name, detail)
    if t is not None:
        line += ' [%.2fs]' % t
    print(line, flush=True)
    results.append({'step': name, 'ok': bool(ok), 'detail': detail,
                    'seconds': None if t is None else round(t, 3)})
    return ok


def finish():
    npass = sum(1 for r in results if r['ok'])
    nfail = len(results) - npass
    print('E2E: %d passed, %d failed' % (npass, nfail), flush=True)
    if RESULTS:
        with open(RESULTS, 'w') as f:
            json.dump({'results': results, 'passed': npass,
                       'failed': nfail}, f, indent=1)
    sys.exit(0 if nfail == 0 and npass > 0 else 1)


def hexs(b):
    return bytes(int(x) for x in b).hex()


def iface(path, name):
    return dbus.Interface(bus.get_object(BLUEZ, path), name)


def chars_by_uuid(dev_path):
    out = {}
    for p, ifs in objects.items():
        if p.startswith(dev_path + '/') and GCHR in ifs:
            out.setdefault(str(ifs[GCHR]['UUID']).lower(), p)
    return out


try:
    # 1. both controllers are exported by bluetoothd
    t = time.monotonic()
    cpath, ppath = '/org/bluez/' + CENTRAL, '/org/bluez/' + PERIPH
    ok = spin_until(lambda: refresh() or (
        ADAPTER in objects.get(cpath, {}) and
        ADAPTER in objects.get(ppath, {})), 10)
    step('adapters-present', ok, '%s %s' % (cpath, ppath),
         time.monotonic() - t)
    if not ok:
        finish()
    periph_addr = str(objects[ppath][ADAPTER]['Address'])

    # 2. central adapter powered
    t = time.monotonic()
    cprops = iface(cpath, PROPS)
    cprops.Set(ADAPTER, 'Powered', dbus.Boolean(True), timeout=15)
    ok = spin_until(lambda: bool(objects[cpath][ADAPTER].get('Powered')) or
                    bool(cprops.Get(ADAPTER, 'Powered', timeout=5)), 10)
    step('central-powered', ok, 'addr=%s' % objects[cpath][ADAPTER]['Address'],
         time.monotonic() - t)

    # 3. peripheral is advertising (precondition, read on the peripheral side)
    t = time.monotonic()
    adv = iface(ppath, PROPS)
    ok = spin_until(lambda: int(adv.Get(ADVMGR, 'ActiveInstances',
                                        timeout=5)) >= 1, 30)
    step('peripheral-advertising', ok, 'addr=%s ActiveInstances>=1'
         % periph_addr, time.monotonic() - t)

    # 4. LE discovery finds the peripheral with its advertised data
    adapter = iface(cpath, ADAPTER)
    adapter.SetDiscoveryFilter({'Transport': 'le', 'DuplicateData': True},
                               timeout=10)
    t = time.monotonic()
    adapter.StartDiscovery(timeout=10)

    def found():
        for p, ifs in objects.items():
            d = ifs.get(DEVICE)
            if not d or not p.startswith(cpath + '/'):
                continue
            uuids = [str(u).lower() for u in d.get('UUIDs', [])]
            if str(d.get('Address')) == periph_addr or UUID_HR_SVC in uuids:
                return p
        return None
    # btvirt's emulated radio sends ONE advertising report per scan-enable /
    # adv-enable (not periodic); a missed one shows up at bluetoothd's next LE
    # scan cycle (~10.24 s), so allow several cycles.
    dev = spin_until(found, 40)
    t_disc = time.monotonic() - t
    step('discovery-finds-peripheral', dev, 'path=%s' % dev, t_disc)
    if not dev:
        adapter.StopDiscovery(timeout=10)
        finish()
    # give the scan response (local name) a moment to arrive
    spin_until(lambda: 'Name' in objects[dev][DEVICE] and
               'ManufacturerData' in objects[dev][DEVICE], 10)
    d = objects[dev][DEVICE]
    uuids = sorted(str(u).lower() for u in d.get('UUIDs', []))
    md = {int(k): hexs(v) for k, v in d.get('ManufacturerData', {}).items()}
    sd = {str(k): hexs(v) for k, v in d.get('ServiceData', {}).items()}
    detail = 'name=%r rssi=%s uuids=%s mfr=%s svcdata=%s' % (
        str(d.get('Name', '')), d.get('RSSI'), uuids, md, sd)
    ok = (UUID_HR_SVC in uuids and UUID_BAT_SVC in uuids and
          md.get(0xffff, '').startswith('00010203'))
    step('advertising-data', ok, detail)
    try:
        adapter.StopDiscovery(timeout=10)
    except dbus.DBusException as e:
        print('note: StopDiscovery: %s' % e)

    # 5. connect and resolve services
    t = time.monotonic()
    dv = iface(dev, DEVICE)
    err = ''
    for attempt in range(3):
        try:
            dv.Connect(timeout=30)
            err = ''
            break
        except dbus.DBusException as e:
            err = str(e)
            print('note: Connect attempt %d: %s' % (attempt + 1, err))
            spin_until(lambda: False, 1)
    t_conn = time.monotonic() - t
    # Connected is read back with Get and also watched via PropertiesChanged:
    # bluetoothd 5.66 skips the Connected signal when the ATT channel comes up
    # before mgmt's Device Connected event (att_connect_cb sets
    # le_state.connected first; device_add_connection then logs "already
    # connected" and returns without emitting it). Clients must not rely on
    # that signal alone.
    ok = not err and spin_until(lambda: bool(iface(dev, PROPS).Get(
        DEVICE, 'Connected', timeout=5)), 10)
    sig = spin_until(lambda: objects[dev][DEVICE].get('Connected'), 2)
    if ok:
        err = 'Connect() returned after %.2fs; Connected via Get=true, ' \
              'PropertiesChanged(Connected) %s' % (
                  t_conn, 'seen' if sig else 'NOT emitted (bluetoothd race)')
        objects[dev][DEVICE]['Connected'] = True
    step('connect', ok, err, t_conn)
    if not ok:
        finish()
    ok = spin_until(lambda: objects[dev][DEVICE].get('ServicesResolved'), 30)
    t_res = prop_true_at.get((dev, DEVICE, 'ServicesResolved'),
                             time.monotonic()) - t
    step('services-resolved', ok, '(signal time, counted from the Connect '
         'call)', t_res)
    refresh()

    # 6. GATT database as seen by the central
    svcs = sorted(str(ifs[GSVC]['UUID']).lower() for p, ifs in objects.items()
                  if p.startswith(dev + '/') and GSVC in ifs)
    chars = chars_by_uuid(dev)
    ok = all(u in svcs for u in (UUID_HR_SVC, UUID_BAT_SVC, UUID_TEST_SVC))
    ok = ok and all(u in chars for u in (UUID_HR_MEAS, UUID_BAT_LVL,
                                         UUID_HR_CP, UUID_TEST_CHR))
    step('gatt-objects', ok, '%d services %s, %d characteristics'
         % (len(svcs), [s[4:8] if s.endswith('-0000-1000-8000-00805f9b34fb')
                        else s for s in svcs], len(chars)))
    if not ok:
        finish()

    # 7. ReadValue on Battery Level
    t = time.monotonic()
    try:
        v = iface(chars[UUID_BAT_LVL], GCHR).ReadValue({}, timeout=15)
        ok = len(v) == 1 and 0 <= int(v[0]) <= 100
        step('read-battery-level', ok, 'value=%d%%' % int(v[0]),
             time.monotonic() - t)
    except dbus.DBusException as e:
        step('read-battery-level', False, str(e), time.monotonic() - t)

    # 8. ReadValue on Body Sensor Location
    t = time.monotonic()
    try:
        v = iface(chars[UUID_BODY_LOC], GCHR).ReadValue({}, timeout=15)
        step('read-body-sensor-location', len(v) == 1, 'value=%s' % hexs(v),
             time.monotonic() - t)
    except (dbus.DBusException, KeyError) as e:
        step('read-body-sensor-location', False, str(e), time.monotonic() - t)

    # 9. StartNotify on Heart Rate Measurement; expect >=3 Value updates
    hr = chars[UUID_HR_MEAS]
    t = time.monotonic()
    n0 = len(value_events)
    try:
        iface(hr, GCHR).StartNotify(timeout=15)
        ok = spin_until(lambda: objects[hr][GCHR].get('Notifying'), 10)
        got = spin_until(lambda: len([e for e in value_events[n0:]
                                      if e[1] == hr]) >= 3, 15)
        evs = [e for e in value_events[n0:] if e[1] == hr]
        first = evs[0][0] - t if evs else None
        step('notify-heart-rate', ok and got,
             '%d notifications, first after %s s, values=%s' % (
                 len(evs), '%.2f' % first if first else None,
                 [e[2].hex() for e in evs[:5]]), time.monotonic() - t)
        iface(hr, GCHR).StopNotify(timeout=15)
    except dbus.DBusException as e:
        step('notify-heart-rate', False, str(e), time.monotonic() - t)

    # 10. WriteValue on a writable characteristic + read back
    t = time.monotonic()
    payload = [0xde, 0xad, 0xbe, 0xef, int(time.time()) & 0xff]
    try:
        tc = iface(chars[UUID_TEST_CHR], GCHR)
        tc.WriteValue(dbus.Array(payload, signature='y'), {'type': 'request'},
                      timeout=15)
        back = tc.ReadValue({}, timeout=15)
        ok = [int(b) for b in back] == payload
        step('write-read-test-characteristic', ok, 'wrote=%s read=%s'
             % (bytes(payload).hex(), hexs(back)), time.monotonic() - t)
    except dbus.DBusException as e:
        step('write-read-test-characteristic', False, str(e),
             time.monotonic() - t)

    # 11. WriteValue on HR Control Point: 0x01 accepted, 0x02 -> ATT error
    t = time.monotonic()
    try:
        cp = iface(chars[UUID_HR_CP], GCHR)
        cp.WriteValue(dbus.Array([1], signature='y'), {}, timeout=15)
        try:
            cp.WriteValue(dbus.Array([2], signature='y'), {}, timeout=15)
            rej = 'no error'
        except dbus.DBusException as e:
            rej = e.get_dbus_name() + ': ' + str(e.get_dbus_message())
        step('write-hr-control-point', rej != 'no error',
             '0x01 accepted; 0x02 -> %s' % rej, time.monotonic() - t)
    except dbus.DBusException as e:
        step('write-hr-control-point', False, str(e), time.monotonic() - t)

    # 12. Disconnect
    t = time.monotonic()
    try:
        dv.Disconnect(timeout=15)
        ok = spin_until(lambda: not objects[dev][DEVICE].get('Connected'), 10)
        step('disconnect', ok, '', time.monotonic() - t)
    except dbus.DBusException as e:
        step('disconnect', False, str(e), time.monotonic() - t)
except Exception as e:  # any unexpected error is a failed step
    import traceback
    traceback.print_exc()
    step('unexpected-exception', False, repr(e))
finish()
EOF
chmod +x "$RUN/guest/central_check.py"

# ---------------------------------------------------------------- the VM --
{
  echo "host: $(uname -sr)"
  qemu-system-x86_64 --version | head -1
  echo "guest kernel: $KVER (package: $(cat "$KDIR/PACKAGE" 2>/dev/null))"
  dpkg-query -W qemu-system-x86 bluez bluez-test-tools bluez-test-scripts busybox-static dbus python3-dbus python3-gi
} > "$RUN/versions-host.txt" 2>&1


pick_accel() {
  case "$ACCEL" in
    tcg|kvm) echo "$ACCEL" ;;
    *) if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && [ ! -d /sys/module/kvm_pvm ]; then echo kvm; else echo tcg; fi ;;
  esac
}

start_vm() { # start_vm kvm|tcg
  local acc=$1 accopts
  if [ "$acc" = kvm ]; then accopts=(-accel kvm -cpu host); else accopts=(-accel tcg,thread=multi -cpu max); fi
  local extra=() i=0
  for s in "${SHARES[@]+"${SHARES[@]}"}"; do
    extra+=(-fsdev "local,id=sh$i,path=$s,security_model=none" -device "virtio-9p-pci,fsdev=sh$i,mount_tag=sh$i")
    i=$((i+1))
  done
  : > "$RUN/console.log"
  qemu-system-x86_64 -name bluez-e2e "${accopts[@]}" -m "$MEM" -smp "$SMP" \
    -nodefaults -no-user-config -display none -no-reboot \
    -chardev "file,id=con,path=$RUN/console.log" -serial chardev:con \
    -fsdev local,id=fsroot,path=/,readonly=on,security_model=none,multidevs=remap \
    -device virtio-9p-pci,fsdev=fsroot,mount_tag=hostroot \
    -fsdev "local,id=fse2e,path=$E2E_DIR,security_model=none" \
    -device virtio-9p-pci,fsdev=fse2e,mount_tag=e2e \
    -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$HOST_PORT-:$GUEST_PORT${BUS_PORT:+,hostfwd=tcp:127.0.0.1:$BUS_PORT-:7777}" \
    -device virtio-net-pci,netdev=n0,romfile= \
    "${extra[@]+"${extra[@]}"}" \
    -kernel "$VMLINUZ" -initrd "$INITRD" \
    -append "console=ttyS0 quiet panic=-1 E2E_RUN=$RUN E2E_DIR=$E2E_DIR" \
    < /dev/null > "$RUN/qemu.log" 2>&1 &
  QPID=$!
}

ACC=$(pick_accel)
DEADLINE=$(( $(date +%s) + VM_TIMEOUT ))
T_BOOT=$(now)
say "run dir $RUN; booting kernel $KVER with $ACC (host 127.0.0.1:$HOST_PORT -> guest :$GUEST_PORT${BUS_PORT:+; system bus at tcp:host=127.0.0.1,port=$BUS_PORT})"
start_vm "$ACC"
if [ "$QUIET" = 0 ]; then tail -n +1 -f "$RUN/console.log" 2>/dev/null & TAILPID=$!; fi
# boot watchdog: no STAGE1 line within 25 s -> (kvm) retry with tcg, (tcg) fail
for i in $(seq 125); do grep -q STAGE1 "$RUN/console.log" && break; kill -0 "$QPID" 2>/dev/null || break; sleep 0.2; done
if ! grep -q STAGE1 "$RUN/console.log"; then
  kill "$QPID" 2>/dev/null; sleep 1; kill -9 "$QPID" 2>/dev/null; wait "$QPID" 2>/dev/null
  if [ "$ACC" = kvm ]; then
    say "no sign of life under kvm (qemu: $(tail -1 "$RUN/qemu.log")); retrying with tcg"
    ACC=tcg; T_BOOT=$(now); start_vm tcg
    for i in $(seq 150); do grep -q STAGE1 "$RUN/console.log" && break; kill -0 "$QPID" 2>/dev/null || break; sleep 0.2; done
  fi
fi
T_STAGE1=$(since "$T_BOOT")
grep -q STAGE1 "$RUN/console.log" || { cat "$RUN/qemu.log" >&2; die "guest did not boot"; }

HOST_RC=""
if [ -n "$HOST_CMD" ]; then
  while [ "$(date +%s)" -lt "$DEADLINE" ] && kill -0 "$QPID" 2>/dev/null && [ ! -e "$RUN/guest-ready" ]; do sleep 0.2; done
  if [ -e "$RUN/guest-ready" ]; then
    T_READY=$(since "$T_BOOT")
    say "guest ready after ${T_READY}s; host command: $HOST_CMD"
    left=$(( DEADLINE - $(date +%s) - 10 )); [ "$left" -gt "$HOLD" ] && left=$HOLD; [ "$left" -lt 5 ] && left=5
    busenv=()
    [ -n "$BUS_PORT" ] && busenv=(DBUS_SYSTEM_BUS_ADDRESS="tcp:host=127.0.0.1,port=$BUS_PORT")
    env "${busenv[@]+"${busenv[@]}"}" E2E_HTTP_URL="http://127.0.0.1:$HOST_PORT" E2E_RUN="$RUN" \
      timeout "$left" bash -c "$HOST_CMD" > "$RUN/host-cmd.log" 2>&1
    HOST_RC=$?
    sed 's/^/[host-cmd] /' "$RUN/host-cmd.log" | tail -20
    echo "rc=$HOST_RC" > "$RUN/host-done"
  else
    HOST_RC=guest-not-ready
  fi
fi
while [ "$(date +%s)" -lt "$DEADLINE" ] && kill -0 "$QPID" 2>/dev/null; do sleep 0.2; done
VM_EXIT=clean
if kill -0 "$QPID" 2>/dev/null; then
  VM_EXIT=killed; say "VM still running at the deadline; killing qemu"
  kill "$QPID"; sleep 2; kill -9 "$QPID" 2>/dev/null
fi
wait "$QPID" 2>/dev/null
T_TOTAL=$(since "$T_BOOT")
sleep 0.3; [ -n "$TAILPID" ] && kill "$TAILPID" 2>/dev/null; TAILPID=""

# ----------------------------------------------------------------- summary --
pass=0; fail=0
res() { if [ "$1" = 1 ]; then pass=$((pass+1)); echo "PASS $2"; else fail=$((fail+1)); echo "FAIL $2"; fi; }
echo
echo "================ summary (run $RUN_ID, accel $ACC) ================"
ev() { awk -v k="$1" 'index($0,k){print $1; exit}' "$RUN/guest-events.log" 2>/dev/null; }
echo "timings (guest uptime s): stage2=$(ev 'stage2 start') bluez-on-bus=$(ev 'org.bluez on the system bus') peripheral-ready=$(ev 'peripheral:') checker-start=$(ev 'central checker start') checker-done=$(ev 'central checker done')"
echo "timings (host wall s): vm-start->stage1=$T_STAGE1 vm-start->qemu-exit=$T_TOTAL script-total=$(since "$T_SCRIPT")"
res "$([ -e "$RUN/guest-done" ] && echo 1 || echo 0)" "vm-boot-and-run (guest reached the end of its script)"
if [ "$RUN_CHECKER" = 1 ]; then
  if [ -s "$RUN/checker.log" ]; then
    while read -r st rest; do res "$([ "$st" = PASS ] && echo 1 || echo 0)" "$rest"; done < <(grep -E '^(PASS|FAIL) ' "$RUN/checker.log")
  else
    res 0 "central-checker (no output; see $RUN/console.log)"
  fi
fi
if [ -n "$HOST_CMD" ]; then
  if [ "$DEMO_HTTP" = 1 ]; then
    res "$([ "$HOST_RC" = 0 ] && echo 1 || echo 0)" "host-http-via-hostfwd (curl 127.0.0.1:$HOST_PORT -> guest :$GUEST_PORT web server, rc=$HOST_RC)"
  else
    # PASS/FAIL lines printed by the host command count as steps of their own
    while read -r st rest; do res "$([ "$st" = PASS ] && echo 1 || echo 0)" "host: $rest"; done \
      < <(grep -E '^(PASS|FAIL) ' "$RUN/host-cmd.log" 2>/dev/null)
    res "$([ "$HOST_RC" = 0 ] && echo 1 || echo 0)" "host-cmd (rc=$HOST_RC)"
  fi
fi
res "$([ "$VM_EXIT" = clean ] && echo 1 || echo 0)" "vm-shutdown ($VM_EXIT, ${T_TOTAL}s after start)"
echo "logs: $RUN"
echo "E2E: $pass passed, $fail failed"
[ "$fail" = 0 ]
