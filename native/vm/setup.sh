#!/usr/bin/env bash
# Builds the soft-RoCE test VM: a Debian 12 root filesystem (ext4 image) with rdma-core,
# the perftest tools and a JDK, plus the Debian kernel and initramfs that boot it.
#
# Everything comes from Debian packages through the host's apt sources. The result lives in
# $RDMANIO_VM_CACHE (default $HOME/.cache/rdmanio/vm) and is reused until the recipe below
# (package list, image layout version) changes.
#
# Usage: native/vm/setup.sh [--force]
set -euo pipefail

# Bump when the image layout changes in a way the package list does not show.
readonly IMAGE_VERSION=5
readonly SUITE=bookworm
readonly GUEST_PACKAGES=(
  linux-image-amd64 initramfs-tools kmod udev
  rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
  openjdk-17-jdk-headless maven
  iproute2 iputils-ping procps coreutils util-linux
  libasan8 libubsan1
)
readonly HOST_PACKAGES=(qemu-system-x86 qemu-utils debootstrap e2fsprogs)

cache="${RDMANIO_VM_CACHE:-$HOME/.cache/rdmanio/vm}"
force=0
[[ "${1:-}" == "--force" ]] && force=1

log() { printf 'rdmanio-vm setup: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }


recipe() {
  printf 'version=%s\nsuite=%s\nmirror=%s\npackages=%s\n' \
    "$IMAGE_VERSION" "$SUITE" "$(mirror)" "${GUEST_PACKAGES[*]}"
}

# The Debian mirror the host itself installs from, so the guest sees exactly the same archive.
mirror() {
  local m=""
  if [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
    m=$(awk '/^URIs:/ && $2 ~ /\/debian$/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [[ -z "$m" && -r /etc/apt/sources.list ]]; then
    m=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list)
  fi
  printf '%s' "${m:-http://deb.debian.org/debian}"
}

ensure_host_packages() {
  local missing=()
  local p
  for p in "${HOST_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "installing host packages: ${missing[*]}"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; then
      apt-get update -q
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
  fi
}

stamp="$cache/recipe.sha256"
want=$(recipe | sha256sum | cut -d' ' -f1)

up_to_date() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" \
     && -f "$cache/rootfs.img" && -f "$cache/vmlinuz" && -f "$cache/initrd.img" ]]
}

if ((force == 0)) && up_to_date; then
  command -v qemu-system-x86_64 >/dev/null || ensure_host_packages
  exit 0
fi

[[ $(id -u) -eq 0 ]] || die "must run as root to build the image (debootstrap, chroot)"
ensure_host_packages
mkdir -p "$cache"

# One build at a time per cache directory; a build that waited may find the work done.
exec 9>"$cache/.lock"
flock 9
if ((force == 0)) && up_to_date; then
  exit 0
fi

work="$cache/build.$$"
rootfs="$work/rootfs"
cleanup() {
  local m
  for m in dev/pts dev proc sys; do
    mountpoint -q "$rootfs/$m" 2>/dev/null && umount -l "$rootfs/$m" || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$rootfs"

log "debootstrap $SUITE from $(mirror) (minbase)"
debootstrap --variant=minbase "$SUITE" "$rootfs" "$(mirror)" >"$work/debootstrap.log" 2>&1 \
  || { tail -30 "$work/debootstrap.log" >&2; die "debootstrap failed (log above)"; }

cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/" 2>/dev/null || true
mount -t proc proc "$rootfs/proc"
mount -t sysfs sys "$rootfs/sys"
mount --bind /dev "$rootfs/dev"
mount --bind /dev/pts "$rootfs/dev/pts"

# The initramfs only needs to find the virtio disk; a short explicit module list keeps it
# small so it unpacks fast under TCG (and does not depend on the build host's devices).
mkdir -p "$rootfs/etc/initramfs-tools/conf.d"
printf 'MODULES=list\n' >"$rootfs/etc/initramfs-tools/conf.d/rdmanio"
printf 'virtio_pci\nvirtio_blk\next4\ncrc32c_generic\n' >>"$rootfs/etc/initramfs-tools/modules"

log "installing guest packages: ${GUEST_PACKAGES[*]}"
chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
  apt-get -q -o Acquire::Retries=3 update >"$work/apt.log" 2>&1 \
  || { tail -30 "$work/apt.log" >&2; die "apt-get update in the guest root failed"; }
chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${GUEST_PACKAGES[@]}" >>"$work/apt.log" 2>&1 \
  || { tail -40 "$work/apt.log" >&2; die "apt-get install in the guest root failed"; }
chroot "$rootfs" apt-get clean

kver=$(basename "$(ls -d "$rootfs"/lib/modules/* | sort -V | tail -1)")

for m in dev/pts dev proc sys; do umount -l "$rootfs/$m"; done

# Guest identity and the boot-time hook that hands control to the run directory.
printf 'rdmanio-vm\n' >"$rootfs/etc/hostname"
printf '127.0.0.1 localhost\n10.0.2.15 rdmanio-vm\n::1 localhost ip6-localhost\n' >"$rootfs/etc/hosts"
cat >"$rootfs/sbin/rdmanio-init" <<'EOF'
#!/bin/sh
# PID 1 of the test VM: mount the run directory shared by the host and run its script.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
# The initramfs hands over /proc, /sys and /dev already mounted; mount whatever is not.
ensure_mount() { mountpoint -q "$3" || mount -t "$1" "$2" "$3"; }
ensure_mount proc proc /proc
ensure_mount sysfs sys /sys
ensure_mount devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm /run /tmp
ensure_mount devpts devpts /dev/pts
ensure_mount tmpfs tmpfs /dev/shm
ensure_mount tmpfs tmpfs /run
ensure_mount tmpfs tmpfs /tmp
modprobe 9pnet_virtio 2>/dev/null; modprobe 9p 2>/dev/null
mkdir -p /run/rdmanio
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 rdmanio-run /run/rdmanio \
    && [ -x /run/rdmanio/guest.sh ]; then
  /run/rdmanio/guest.sh
else
  echo "rdmanio-init: no run directory shared by the host" >&2
fi
sync
echo o >/proc/sysrq-trigger
sleep 5
EOF
chmod 755 "$rootfs/sbin/rdmanio-init"

kernel=$(ls "$rootfs"/boot/vmlinuz-* | sort -V | tail -1)
initrd=$(ls "$rootfs"/boot/initrd.img-* | sort -V | tail -1)
[[ -f "$kernel" && -f "$initrd" ]] || die "kernel or initramfs missing in the guest root"

size_mb=$(( $(du -sm "$rootfs" | cut -f1) * 13 / 10 + 256 ))
log "writing ext4 image (${size_mb} MiB)"
truncate -s "${size_mb}M" "$work/rootfs.img"
mkfs.ext4 -q -F -L rdmanio-root -d "$rootfs" "$work/rootfs.img"

cp "$kernel" "$work/vmlinuz"
cp "$initrd" "$work/initrd.img"
mv -f "$work/rootfs.img" "$cache/rootfs.img"
mv -f "$work/vmlinuz" "$cache/vmlinuz"
mv -f "$work/initrd.img" "$cache/initrd.img"
printf '%s\n' "$kver" >"$cache/kernel.version"
printf '%s\n' "$want" >"$stamp"
log "image ready in $cache (kernel $kver)"
