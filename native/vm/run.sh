#!/usr/bin/env bash
# Runs one command as root inside the soft-RoCE test VM and returns its output and exit status.
#
#   native/vm/run.sh [-C DIR] -- CMD [ARG...]
#
# The VM is qemu under pure software emulation (TCG, no KVM) booting the Debian kernel built
# by setup.sh. Inside it: the rdma_rxe module with an rxe device "rxe0" on eth0 (10.0.2.15,
# qemu user networking), the host's project directory mounted read-write at the same path
# (9p), the Maven repository (~/.m2 of the JVM's user.home) mounted read-only at the same path when it exists, and memlock unlimited.
# CMD runs in the current directory (or DIR), which must be inside the shared directory.
# The root disk is a copy-on-write snapshot: nothing written outside the shares survives.
#
# Environment:
#   RDMANIO_VM_CACHE    image directory (default $HOME/.cache/rdmanio/vm)
#   RDMANIO_VM_SHARE    host directory to share (default: the git top level of DIR, else DIR)
#   RDMANIO_VM_TIMEOUT  seconds for the whole run, boot included (default 900)
#   RDMANIO_VM_CPUS     virtual CPUs (default 1)
#   RDMANIO_VM_MEM      memory in MiB (default 2048)
#   RDMANIO_VM_VERBOSE  1 = show the boot console on stderr instead of only logging it
#   RDMANIO_VM_LOG      boot console log file (default $RDMANIO_VM_CACHE/last-boot.log)
#   RDMANIO_VM_M2       how ~/.m2 is shared: ro (default), rw, or off
#   RDMANIO_VM_TIMING   file that receives the wall time and the guest's boot/ready/done uptimes
#
# CMD gets no stdin; pass environment with `env NAME=VALUE CMD...`. The VM has the JDK 17 and
# Maven (use `mvn -o`: the repository is read-only unless RDMANIO_VM_M2=rw).
#
# Exit status: CMD's status; 124 when the timeout expired; 125 when the VM failed to run CMD.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache="${RDMANIO_VM_CACHE:-$HOME/.cache/rdmanio/vm}"
timeout_s="${RDMANIO_VM_TIMEOUT:-900}"
cpus="${RDMANIO_VM_CPUS:-1}"
mem="${RDMANIO_VM_MEM:-2048}"
verbose="${RDMANIO_VM_VERBOSE:-0}"
boot_log="${RDMANIO_VM_LOG:-$cache/last-boot.log}"
m2_mode="${RDMANIO_VM_M2:-ro}"
# Maven's repository lives under the JVM's user.home, which comes from the password database, not $HOME.
user_home="$(getent passwd "$(id -u)" | cut -d: -f6)"
m2_dir="${RDMANIO_VM_M2_DIR:-${user_home:-$HOME}/.m2}"

die() { printf 'rdmanio-vm: %s\n' "$*" >&2; exit 125; }

workdir=$PWD
while (($#)); do
  case "$1" in
    -C) [[ $# -ge 2 ]] || die "-C needs a directory"; workdir=$(cd "$2" && pwd); shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unexpected argument '$1' (usage: run.sh [-C DIR] -- CMD [ARG...])" ;;
  esac
done
(($#)) || die "no command given (usage: run.sh [-C DIR] -- CMD [ARG...])"
[[ "$timeout_s" =~ ^[0-9]+$ && "$timeout_s" -ge 30 ]] || die "RDMANIO_VM_TIMEOUT must be >= 30 seconds"
[[ "$m2_mode" =~ ^(ro|rw|off)$ ]] || die "RDMANIO_VM_M2 must be ro, rw or off"

share="${RDMANIO_VM_SHARE:-$(git -C "$workdir" rev-parse --show-toplevel 2>/dev/null || printf '%s' "$workdir")}"
share=$(cd "$share" && pwd)
case "$workdir/" in
  "$share"/*) ;;
  *) die "working directory $workdir is not inside the shared directory $share" ;;
esac

# Builds the image on first use and after the recipe changed; otherwise returns at once.
RDMANIO_VM_CACHE="$cache" "$here/setup.sh" >&2 || die "preparing the VM image failed (native/vm/setup.sh)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run native/vm/setup.sh"

rundir=$(mktemp -d "${TMPDIR:-/tmp}/rdmanio-vm.XXXXXX")
qemu_pid=""
tails=()
cleanup() {
  [[ -n "$qemu_pid" ]] && kill "$qemu_pid" 2>/dev/null || true
  local t
  for t in "${tails[@]}"; do kill "$t" 2>/dev/null || true; done
  rm -rf "$rundir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The command, quoted for bash, run from the working directory.
{
  printf 'cd %q || exit 125\n' "$workdir"
  printf 'exec'
  printf ' %q' "$@"
  printf '\n'
} >"$rundir/cmd.sh"

# 9p shares: tag, guest path, options.
{
  printf 'rdmanio-share %s rw\n' "$share"
  if [[ -d "$m2_dir" && "$m2_mode" != off ]]; then
    case "$m2_dir/" in
      "$share"/*) ;;
      *) printf 'rdmanio-m2 %s %s\n' "$m2_dir" "$m2_mode" ;;
    esac
  fi
} >"$rundir/mounts"

# Leave the guest room to report before the host gives up on it.
guest_timeout=$((timeout_s - 20))

cat >"$rundir/guest.sh" <<EOF
#!/bin/bash
# Runs inside the VM as a child of PID 1 (see /sbin/rdmanio-init in the image).
run=/run/rdmanio
uptime_s() { cut -d' ' -f1 /proc/uptime; }
note() { echo "rdmanio-vm guest: \$*" >/dev/console; }
echo "boot \$(uptime_s)" >"\$run/timing"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
hostname rdmanio-vm
while read -r tag path mode; do
  mkdir -p "\$path"
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,\$mode "\$tag" "\$path" \
    || { note "cannot mount \$tag at \$path"; echo 125 >"\$run/rc"; exit 0; }
done <"\$run/mounts"
modprobe virtio_net
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
modprobe ib_uverbs; modprobe rdma_ucm; modprobe rdma_rxe
rdma link add rxe0 type rxe netdev eth0 || { note "cannot create rxe0"; echo 125 >"\$run/rc"; exit 0; }
for i in \$(seq 50); do [ -e /dev/infiniband/uverbs0 ] && [ -e /dev/infiniband/rdma_cm ] && break; sleep 0.1; done
ulimit -l unlimited
ulimit -n 65536
echo "ready \$(uptime_s)" >>"\$run/timing"
timeout -k 5 $guest_timeout bash "\$run/cmd.sh" >"\$run/stdout" 2>"\$run/stderr" </dev/null
rc=\$?
echo "done \$(uptime_s)" >>"\$run/timing"
sync
echo "\$rc" >"\$run/rc"
EOF
chmod 755 "$rundir/guest.sh"
: >"$rundir/stdout"
: >"$rundir/stderr"

if [[ $(id -u) -eq 0 ]]; then secmodel=passthrough; else secmodel=none; fi
mkdir -p "$(dirname "$boot_log")"
qemu_args=(
  -accel tcg,thread=multi -cpu max -smp "$cpus" -m "$mem"
  -nodefaults -nographic -no-reboot
  -kernel "$cache/vmlinuz" -initrd "$cache/initrd.img"
  -append "root=/dev/vda rw console=ttyS0 init=/sbin/rdmanio-init quiet loglevel=3 panic=-1 mitigations=off net.ifnames=0 random.trust_cpu=on"
  -drive "file=$cache/rootfs.img,if=virtio,format=raw,snapshot=on"
  -netdev user,id=net0 -device virtio-net-pci,netdev=net0,romfile=
  -virtfs "local,path=$rundir,mount_tag=rdmanio-run,security_model=$secmodel"
  -virtfs "local,path=$share,mount_tag=rdmanio-share,security_model=$secmodel"
)
if grep -q '^rdmanio-m2 ' "$rundir/mounts"; then
  m2_opts="local,path=$m2_dir,mount_tag=rdmanio-m2,security_model=$secmodel"
  [[ "$m2_mode" == ro ]] && m2_opts+=",readonly=on"
  qemu_args+=(-virtfs "$m2_opts")
fi
# Each run logs into its own directory and publishes the log when done, so concurrent runs
# never interleave their consoles.
if [[ "$verbose" == 1 ]]; then
  qemu_args+=(-serial stdio)
else
  qemu_args+=(-serial "file:$rundir/boot.log")
fi

start_ns=$(date +%s%N)
if [[ "$verbose" == 1 ]]; then
  timeout -k 5 "$timeout_s" qemu-system-x86_64 "${qemu_args[@]}" </dev/null >&2 &
else
  timeout -k 5 "$timeout_s" qemu-system-x86_64 "${qemu_args[@]}" </dev/null >"$rundir/qemu.log" 2>&1 &
fi
qemu_pid=$!
# Stream CMD's output while it runs; tail exits once qemu has.
tail -n +1 -s 0.2 -f --pid="$qemu_pid" "$rundir/stdout" &
tails+=($!)
tail -n +1 -s 0.2 -f --pid="$qemu_pid" "$rundir/stderr" >&2 &
tails+=($!)
set +e
wait "$qemu_pid"
qemu_rc=$?
set -e
qemu_pid=""
for t in "${tails[@]}"; do wait "$t" 2>/dev/null || true; done
tails=()
end_ns=$(date +%s%N)
if [[ "$verbose" != 1 ]]; then
  { cat "$rundir/boot.log" "$rundir/qemu.log" 2>/dev/null || true; } >"$boot_log.$$"
  mv -f "$boot_log.$$" "$boot_log"
fi

if [[ -n "${RDMANIO_VM_TIMING:-}" ]]; then
  {
    printf 'wall %s\n' "$(awk -v a="$start_ns" -v b="$end_ns" 'BEGIN{printf "%.1f", (b-a)/1e9}')"
    cat "$rundir/timing" 2>/dev/null
  } >"$RDMANIO_VM_TIMING"
fi

if [[ -s "$rundir/rc" ]]; then
  exit "$(cat "$rundir/rc")"
fi
if [[ $qemu_rc -eq 124 || $qemu_rc -eq 137 ]]; then
  printf 'rdmanio-vm: timed out after %ss (RDMANIO_VM_TIMEOUT); boot log: %s\n' "$timeout_s" "$boot_log" >&2
  exit 124
fi
printf 'rdmanio-vm: the VM stopped without running the command (qemu status %s); boot log: %s\n' \
  "$qemu_rc" "$boot_log" >&2
tail -20 "$boot_log" >&2 2>/dev/null || true
exit 125
