#!/usr/bin/env bash
# Reading a photo with location through scopedfsd, measured in one run so the ratios are
# comparable on a noisy machine. One 256 MiB JPEG (exiftool GPS, camera app's file) is read
# sequentially with fio (128 KiB psync, whole file) as:
#   native          the lower file itself (tmpfs)
#   redacted cold   com.example.social (no ACCESS_MEDIA_LOCATION), first read after the kernel's
#                   caches were dropped: every byte comes from the daemon, location filled
#   redacted warm   the same app again: served from the redacted inode's page cache
#   passthrough     com.example.gallery (ACCESS_MEDIA_LOCATION): raw view, kernel passthrough
#   plain fuse      com.example.gallery through a second daemon started --passthrough=false,
#                   first read after dropping caches (its opens never keep the cache)
#   clean cold/warm a JPEG of the same size without location, read by com.example.social: since
#                   the security issue (finding 7) a reader who would be redacted reads every
#                   photo mediated, so location written later is filled too; this is its cost
#                   (before, it was passthrough)
# Each reading is repeated and the median reported. Usage: redact_bench.sh [repeats] (root).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPEATS=${1:-5}
SIZE_MB=256
OWNER=10065 REDACTED=10062 ENTITLED=10061

command -v fio >/dev/null || { apt-get install -y -qq fio >/dev/null; }
bazel build -c opt //daemon:scopedfsd //tests:media_samples >/dev/null 2>&1
DAEMON=bazel-out/k8-opt/bin/daemon/scopedfsd
SAMPLE=bazel-out/k8-opt/bin/tests/media/gps.jpg
CLEAN_SAMPLE=bazel-out/k8-opt/bin/tests/media/clean.jpg

work=$(mktemp -d /tmp/scopedfs-redact-bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  umount -l "$work/pt" 2>/dev/null || true
  umount -l "$work/fuse" 2>/dev/null || true
  umount -l "$work/lower" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
mkdir -p "$work/lower" "$work/pt" "$work/fuse"
mount -t tmpfs -o size=1g tmpfs "$work/lower"
mkdir -p "$work/lower/DCIM/Camera"
file="$work/lower/DCIM/Camera/big.jpg"
# The sample's metadata (Exif GPS + XMP) up front, then filler: the parsers stop at the image
# data, so the redaction plan is the sample's whatever the size.
cp "$SAMPLE" "$file"
head -c $((SIZE_MB * 1024 * 1024 - $(stat -c %s "$SAMPLE"))) /dev/urandom >>"$file"
chmod 644 "$file"
setfattr -n trusted.scopedfs.owner -v "$OWNER" "$file"
clean="$work/lower/DCIM/Camera/clean.jpg"
cp "$CLEAN_SAMPLE" "$clean"
head -c $((SIZE_MB * 1024 * 1024 - $(stat -c %s "$CLEAN_SAMPLE"))) /dev/urandom >>"$clean"
chmod 644 "$clean"
setfattr -n trusted.scopedfs.owner -v "$OWNER" "$clean"

start_daemon() {  # start_daemon <mountpoint> <passthrough>
  "$DAEMON" --source="$work/lower" --mountpoint="$1" \
    --policy=policy/configs/android.textproto --apps=policy/configs/apps.textproto \
    --passthrough="$2" 2>>"$work/daemon.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q " $1 " /proc/self/mounts && return 0; sleep 0.05; done
  cat "$work/daemon.log"; exit 1
}
start_daemon "$work/pt" true
start_daemon "$work/fuse" false

read_mbps() {  # read_mbps <uid> <path> -> MB/s of one sequential pass
  setpriv --reuid="$1" --regid="$1" --clear-groups \
    fio --name=r --filename="$2" --rw=read --bs=128k --size=${SIZE_MB}M --ioengine=psync \
      --invalidate=0 --output-format=terse --terse-version=3 2>/dev/null |
    awk -F';' '{ print $7 / 1024 }'
}
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# Sanity: the redacted reader really gets another copy than the entitled one.
# (md5sum opens the file itself: a shell redirect would open it as root.)
raw_sum=$(setpriv --reuid=$ENTITLED --regid=$ENTITLED --clear-groups md5sum "$work/pt/DCIM/Camera/big.jpg" | cut -c1-32)
red_sum=$(setpriv --reuid=$REDACTED --regid=$REDACTED --clear-groups md5sum "$work/pt/DCIM/Camera/big.jpg" | cut -c1-32)
low_sum=$(md5sum <"$file" | cut -c1-32)
[[ "$raw_sum" == "$low_sum" && "$red_sum" != "$low_sum" ]] || { echo "views are wrong: raw $raw_sum redacted $red_sum lower $low_sum" >&2; exit 1; }

declare -A runs
for _ in $(seq "$REPEATS"); do
  runs[native]+=" $(read_mbps 0 "$file")"
  drop; runs[cold]+=" $(read_mbps $REDACTED "$work/pt/DCIM/Camera/big.jpg")"
  runs[warm]+=" $(read_mbps $REDACTED "$work/pt/DCIM/Camera/big.jpg")"
  runs[passthrough]+=" $(read_mbps $ENTITLED "$work/pt/DCIM/Camera/big.jpg")"
  drop; runs[fuse]+=" $(read_mbps $ENTITLED "$work/fuse/DCIM/Camera/big.jpg")"
  drop; runs[clean_cold]+=" $(read_mbps $REDACTED "$work/pt/DCIM/Camera/clean.jpg")"
  runs[clean_warm]+=" $(read_mbps $REDACTED "$work/pt/DCIM/Camera/clean.jpg")"
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

printf '\nfio sequential read, 128 KiB psync, %s MiB JPEG with Exif+XMP GPS on tmpfs, median of %s (%s cores)\n\n' \
  "$SIZE_MB" "$REPEATS" "$(nproc)"
native=$(median <<<"${runs[native]}"); fuse=$(median <<<"${runs[fuse]}")
printf '%-15s %10s %10s %12s   %s\n' reading MB/s x_native x_plain_fuse runs
for k in native cold warm passthrough fuse clean_cold clean_warm; do
  m=$(median <<<"${runs[$k]}")
  label=$k; [[ $k == cold ]] && label="redacted cold"; [[ $k == warm ]] && label="redacted warm"
  [[ $k == fuse ]] && label="plain fuse"
  [[ $k == clean_cold ]] && label="clean cold"; [[ $k == clean_warm ]] && label="clean warm"
  awk -v l="$label" -v m="$m" -v n="$native" -v f="$fuse" -v r="${runs[$k]}" \
    'BEGIN { printf "%-15s %10.0f %9.2fx %11.2fx  %s\n", l, m, m / n, m / f, r }'
done
