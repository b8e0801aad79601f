#!/usr/bin/env bash
# The daemon's own cost per request, steadier than wall-clock ratios on a shared machine: the
# owner app (com.example.notes) runs run.sh's tree steps (tar x, find, ls -lR cold and warm,
# find -size, grep -r, du -s, rm -rf) on a tmpfs lower tree under the Android policy, on a mount
# only one user's apps reach, over io_uring; for each step it prints the daemon's CPU time (user
# and system, all its threads, from /proc/PID/stat), the FUSE requests it served (scopedfsctl
# stats) and the system calls it made (perf stat's raw_syscalls:sys_enter), each per request.
# docs/performance.md ("What the daemon spends per request") has its figures.
#
# Usage: tools/bench/daemon_cpu.sh <scopedfsd> <scopedfsctl> <tar> [<out dir>]
#   <tar>: a tree to extract, e.g. run.sh's cache of drivers-15k.tar (/tmp/scopedfs-bench-cache).
# Needs root, /dev/fuse, FUSE over io_uring (it sets /sys/module/fuse/parameters/enable_uring to Y
# and puts it back) and perf. Stops only the daemon it started and unmounts only its own mounts.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/bench/lib.sh
(($# >= 3)) || { echo "usage: $0 <scopedfsd> <scopedfsctl> <tar> [<out dir>]" >&2; exit 2; }
DAEMON=$1 CTL=$2 TAR=$3
[[ $(id -u) -eq 0 && -c /dev/fuse ]] || { echo "daemon_cpu: needs root and /dev/fuse" >&2; exit 77; }
work=$(mktemp -d /tmp/scopedfs-daemon-cpu.XXXXXX)
chmod 755 "$work"
OUT=${4:-$work}
mkdir -p "$OUT"
lower=$work/lower mnt=$work/mnt
URING_WAS=$(cat /sys/module/fuse/parameters/enable_uring)
PID=""
on_exit() {
  if [[ -n "$PID" ]]; then kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  bench_cleanup
  echo "$URING_WAS" >/sys/module/fuse/parameters/enable_uring
  rm -rf "$lower" "$mnt"
  [[ "$OUT" == "$work" ]] || rm -rf "$work"
}
trap on_exit EXIT
bench_mount_tmpfs "$lower" 2g
mkdir -p "$lower/Download"
echo Y >/sys/module/fuse/parameters/enable_uring
BENCH_ONE_USER=1 BENCH_TRANSPORT=uring bench_start_scopedfsd "$DAEMON" "$lower" "$mnt" "$BENCH_ANDROID" true \
  "$work/ctl" "$OUT/daemon.log"
PID=$BENCH_LAST_PID
ticks() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }
requests() { "$CTL" --socket="$work/ctl" stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["requests"])'; }
HZ=$(getconf CLK_TCK)
t=$mnt/Download/tree
bench_as "$BENCH_OWNER_UID" mkdir "$t"
printf '%-12s %8s %9s %14s %14s\n' step requests "cpu (s)" "cpu/request" "syscalls/req"
step() {  # step <name> <cmd...>: runs cmd as the owner app
  local name=$1 c0 r0 c1 r1 n sys perf_pid
  shift
  [[ "$name" == "ls -lR cold" ]] && { sync; echo 3 >/proc/sys/vm/drop_caches; }
  perf stat -x, -e raw_syscalls:sys_enter -p "$PID" -o "$work/perf.txt" 2>/dev/null &
  perf_pid=$!
  sleep 0.3
  c0=$(ticks) r0=$(requests)
  bench_as "$BENCH_OWNER_UID" "$@" >/dev/null 2>&1 || true
  c1=$(ticks) r1=$(requests)
  kill -INT "$perf_pid"
  wait "$perf_pid" || true
  sys=$(awk -F, '/sys_enter/ { print $1 }' "$work/perf.txt")
  n=$((r1 - r0))
  printf '%-12s %8d %9.2f %11.1f µs %14.2f\n' "$name" "$n" "$(echo "($c1 - $c0) / $HZ" | bc -l)" \
    "$(echo "($c1 - $c0) * 1000000 / $HZ / $n" | bc -l)" "$(echo "${sys:-0} / $n" | bc -l)"
}
step "tar x" tar -x --no-same-owner -f "$TAR" -C "$t"
step "find" find "$t" ! -type d
step "ls -lR cold" ls -lR "$t"
step "ls -lR warm" ls -lR "$t"
step "find -size" find "$t" -size +16k
step "grep -r" grep -r -c -F kmalloc "$t"
step "du -s" du -s "$t"
step "rm -rf" rm -rf "$t"
