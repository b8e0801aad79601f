#!/usr/bin/env bash
# Throughput of scopedfsd against the native filesystem, measured in one run so the ratios are
# comparable on a noisy machine: fio 4 KiB synchronous reads and writes, sequential and random, on
#   native       the lower directory itself
#   passthrough  scopedfsd with kernel passthrough (the default)
#   fuse         scopedfsd --passthrough=false (every read and write goes through the daemon)
# The app is a real uid (the file's owner, com.example.notes) acting through the mount.
# Usage: tools/bench/fio_bench.sh [runtime_seconds_per_job]   (needs root and /dev/fuse)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNTIME=${1:-5}
SIZE=256M
APP_UID=10067

command -v fio >/dev/null || { apt-get install -y -qq fio >/dev/null; }
bazel build -c opt //daemon:scopedfsd >/dev/null 2>&1
DAEMON=bazel-out/k8-opt/bin/daemon/scopedfsd

work=$(mktemp -d /tmp/scopedfs-bench.XXXXXX)
daemon_pid=""
cleanup() {
  if [[ -n "$daemon_pid" ]]; then kill -TERM "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
  umount -l "$work/mnt" 2>/dev/null || true
  umount -l "$work/lower" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
mkdir -p "$work/lower" "$work/mnt"
mount -t tmpfs -o size=1g tmpfs "$work/lower"
mkdir -p "$work/lower/Download"
chown "$APP_UID:$APP_UID" "$work/lower/Download"   # native runs as the same uid

start_daemon() {  # start_daemon <passthrough true|false>
  "$DAEMON" --source="$work/lower" --mountpoint="$work/mnt" \
    --policy=policy/configs/android.textproto --apps=policy/configs/apps.textproto \
    --passthrough="$1" 2>"$work/daemon.log" &
  daemon_pid=$!
  for _ in $(seq 100); do grep -q " $work/mnt " /proc/self/mounts && return 0; sleep 0.05; done
  cat "$work/daemon.log"; exit 1
}
stop_daemon() {
  kill -TERM "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=""
}

run_fio() {  # run_fio <dir> <rw> -> MB/s
  setpriv --reuid=$APP_UID --regid=$APP_UID --clear-groups \
    fio --name=bench --directory="$1" --filename=bench.dat --rw="$2" --bs=4k --size=$SIZE \
      --ioengine=psync --direct=0 --time_based --runtime="$RUNTIME" --ramp_time=1 \
      --output-format=terse --terse-version=3 2>/dev/null |
    awk -F';' -v rw="$2" '{ if (rw ~ /write/) print $48/1024; else print $7/1024 }'
}

# The file is created through the mount by its owning app, so it carries the owner xattr.
prepare() {  # prepare <dir>
  setpriv --reuid=$APP_UID --regid=$APP_UID --clear-groups \
    dd if=/dev/zero of="$1/bench.dat" bs=1M count=256 status=none
}

declare -A result
modes=(native passthrough fuse)
for mode in "${modes[@]}"; do
  case "$mode" in
    native) dir="$work/lower/Download" ;;
    passthrough) start_daemon true; dir="$work/mnt/Download" ;;
    fuse) start_daemon false; dir="$work/mnt/Download" ;;
  esac
  rm -f "$work/lower/Download/bench.dat"
  prepare "$dir"
  for rw in read write randread randwrite; do
    result[$mode,$rw]=$(run_fio "$dir" "$rw")
  done
  [[ "$mode" != native ]] && stop_daemon
done

printf '\nfio 4 KiB psync, %s per job, file %s on tmpfs, app uid %s (%s cores)\n\n' "${RUNTIME}s" "$SIZE" "$APP_UID" "$(nproc)"
printf '%-10s %12s %12s %12s %14s %14s\n' job native_MB/s pt_MB/s fuse_MB/s pt/native fuse/native
for rw in read write randread randwrite; do
  n=${result[native,$rw]}; p=${result[passthrough,$rw]}; f=${result[fuse,$rw]}
  awk -v rw="$rw" -v n="$n" -v p="$p" -v f="$f" 'BEGIN { printf "%-10s %12.0f %12.0f %12.0f %13.2fx %13.2fx\n", rw, n, p, f, p/n, f/n }'
done
