#!/usr/bin/env bash
# The cost of one round trip over each of scopedfsd's transports (--transport=dev: /dev/fuse;
# --transport=uring: FUSE over io_uring), measured in the same run: a stat (a LOOKUP, as the
# daemon runs with --entry_cache_seconds=0), a create+close of a new file, and a 4 KiB O_DIRECT
# read (a READ each, as the daemon runs with --passthrough=false). Both daemons serve a tmpfs of
# their own with the permissive policy; the caller is root. Rounds alternate dev and uring, and
# each figure is the median over the rounds, in microseconds per operation, with uring/dev.
# The kernel offers io_uring only while /sys/module/fuse/parameters/enable_uring is Y: this
# script sets it for the run and puts the previous value back, whatever happens.
# Usage: tools/bench/transport.sh [ROUNDS (5)] [SECONDS per figure (2)]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
seconds=${2:-2}
[[ $(id -u) -eq 0 ]] || { echo "transport.sh: needs root (mounts)" >&2; exit 1; }
param=/sys/module/fuse/parameters/enable_uring
[[ -w $param ]] || { echo "transport.sh: $param missing or not writable" >&2; exit 1; }

if [[ -z "${SCOPEDFSD:-}" ]]; then
  bazel build -c opt //daemon:scopedfsd //tools/bench:metaops >/dev/null 2>&1 ||
    bazel build -c opt //daemon:scopedfsd //tools/bench:metaops
  BIN=$(bazel info -c opt bazel-bin 2>/dev/null)
  SCOPEDFSD=$BIN/daemon/scopedfsd METAOPS=$BIN/tools/bench/metaops
fi

work=$(mktemp -d /tmp/sfs-transport.XXXXXX)
old=$(cat "$param")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  for t in dev uring; do
    umount -l "$work/mnt_$t" 2>/dev/null || true
    umount -l "$work/lower_$t" 2>/dev/null || true
  done
  rm -rf "$work"
  echo "$old" >"$param"
}
trap cleanup EXIT
echo Y >"$param"

for t in dev uring; do
  mkdir -p "$work/lower_$t" "$work/mnt_$t"
  mount -t tmpfs -o size=256m tmpfs "$work/lower_$t"
  mkdir -p "$work/lower_$t/s" "$work/lower_$t/r"
  head -c 1048576 /dev/urandom >"$work/lower_$t/r/m0"
  "$SCOPEDFSD" --source="$work/lower_$t" --mountpoint="$work/mnt_$t" \
    --policy=policy/configs/permissive.textproto --apps=policy/configs/apps.textproto \
    --transport="$t" --passthrough=false --entry_cache_seconds=0 --audit_log=none \
    >"$work/$t.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do grep -q "serving " "$work/$t.log" && break; sleep 0.1; done
  grep -q "serving " "$work/$t.log" || { cat "$work/$t.log" >&2; exit 1; }
  grep "transport:" "$work/$t.log" | sed "s/^/$t: /"
  "$METAOPS" create "$work/mnt_$t/s" 100
done

declare -A figures
for ((round = 1; round <= rounds; round++)); do
  for t in dev uring; do
    mkdir -p "$work/mnt_$t/c$round"
    figures[$t.stat]+="$("$METAOPS" stat "$work/mnt_$t/s" 100 "$seconds" 2>/dev/null) "
    figures[$t.create]+="$("$METAOPS" createclose "$work/mnt_$t/c$round" 1000000 "$seconds" \
      2>/dev/null) "
    figures[$t.read]+="$("$METAOPS" read4k "$work/mnt_$t/r" 1000000 "$seconds" 2>/dev/null) "
  done
done

median_us() {  # ops/s figures -> median microseconds per op
  tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.1f", 1e6/m}'
}
printf "%-22s %10s %10s %12s\n" "µs per operation" "dev" "uring" "uring/dev"
for op in stat create read; do
  dev=$(echo "${figures[dev.$op]}" | median_us)
  uring=$(echo "${figures[uring.$op]}" | median_us)
  label=$op
  [[ $op == create ]] && label="create+close"
  [[ $op == read ]] && label="4 KiB read (O_DIRECT)"
  printf "%-22s %10s %10s %12s\n" "$label" "$dev" "$uring" "$(echo "scale=2; $uring / $dev" | bc)"
done
echo "($rounds rounds of $seconds s each, medians; $(nproc) CPUs; $(uname -r))"
