#!/bin/sh
# Builds librdmanio-shm.so into OUT_DIR/META-INF/native/linux-ARCH/, where the shm fabric finds it in core's jar.
# Usage: build.sh OUT_DIR JAVA_HOME. Without gcc or the JDK's JNI headers it says so and builds nothing: the shm
# fabric then shares plain files (see docs/shm-fabric.md, "Sealed memory").
set -eu
out="$1"
jdk="$2"
src="$(dirname "$0")/rdmanio_shm.c"
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) arch=x86_64 ;;
    Linux-aarch64) arch=aarch64 ;;
    *) echo "rdmanio-core: SKIPPED librdmanio-shm: $(uname -s) $(uname -m) is not a supported platform"; exit 0 ;;
esac
if ! command -v gcc >/dev/null 2>&1; then
    echo "rdmanio-core: SKIPPED librdmanio-shm: no gcc (apt-get install gcc); the shm fabric will share unsealed files"
    exit 0
fi
if [ ! -f "$jdk/include/jni.h" ]; then
    echo "rdmanio-core: SKIPPED librdmanio-shm: no JNI headers under $jdk/include (a JDK, not a JRE, must run Maven)"
    exit 0
fi
dir="$out/META-INF/native/linux-$arch"
mkdir -p "$dir"
if [ -f "$dir/librdmanio-shm.so" ] && [ "$dir/librdmanio-shm.so" -nt "$src" ]; then
    exit 0
fi
gcc -O2 -fPIC -shared -Wall -Wextra -Werror -fvisibility=default -I"$jdk/include" -I"$jdk/include/linux" \
    -o "$dir/librdmanio-shm.so" "$src"
