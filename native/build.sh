#!/usr/bin/env bash
# Builds libdisni into native/target/native/linux-ARCH/libdisni.so (ARCH: x86_64, aarch64), installing rdma-core's
# development packages and cmake first when they are missing (Debian; needs root for that).
#
# Usage: native/build.sh [--no-install]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
install=1
[[ "${1:-}" == "--no-install" ]] && install=0

needed=()
[[ -f /usr/include/infiniband/verbs.h ]] || needed+=(libibverbs-dev)
[[ -f /usr/include/rdma/rdma_cma.h ]] || needed+=(librdmacm-dev)
command -v cmake >/dev/null || needed+=(cmake)
command -v cc >/dev/null || needed+=(gcc)
if ((${#needed[@]})); then
  if ((install == 0)); then
    echo "libdisni: missing ${needed[*]}" >&2
    exit 1
  fi
  [[ $(id -u) -eq 0 ]] || { echo "libdisni: need root to install ${needed[*]}" >&2; exit 1; }
  echo "libdisni: installing ${needed[*]}" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${needed[@]}"; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${needed[@]}"
  fi
fi

cmake -S "$here" -B "$here/target/cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$here/target/cmake" -- -j"$(nproc)"
echo "libdisni: built $here/target/native/linux-$(uname -m)/libdisni.so" >&2
