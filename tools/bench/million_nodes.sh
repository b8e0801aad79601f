#!/usr/bin/env bash
# One measurement of a tree far larger than the daemon's fd limit: 1,000,000 files (1,000
# directories of 1,000) on tmpfs, served by scopedfsd with `ulimit -n 1024`, walked by `ls -lR`
# as root. Prints the files ls saw, the daemon's fd count and RSS after the walk, its node count,
# the memory per remembered node, and the walk's time next to the same walk on the lower tree.
# Usage: tools/bench/million_nodes.sh [files_per_dir] [dirs] (root; needs /dev/fuse).
set -euo pipefail
cd "$(dirname "$0")/../.."
PER_DIR=${1:-1000}
DIRS=${2:-1000}
bazel build -c opt //daemon:scopedfsd //tools:scopedfsctl >/dev/null 2>&1
DAEMON=bazel-out/k8-opt/bin/daemon/scopedfsd
CTL=bazel-out/k8-opt/bin/tools/scopedfsctl
work=$(mktemp -d /tmp/scopedfs-million.XXXXXX)
pid=""
cleanup() {
  [[ -n "$pid" ]] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  umount -l "$work/mnt" 2>/dev/null || true
  umount -l "$work/lower" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/lower" "$work/mnt"
mount -t tmpfs -o size=4g,nr_inodes=4m tmpfs "$work/lower"
mkdir -p "$work/lower/Download/m"
python3 - "$work/lower/Download/m" "$DIRS" "$PER_DIR" <<'PY'
import os, sys
root, dirs, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(dirs):
    p = os.path.join(root, "d%04d" % d)
    os.mkdir(p)
    for f in range(per):
        os.close(os.open(os.path.join(p, "f%04d" % f), os.O_CREAT | os.O_WRONLY, 0o644))
PY
total=$((DIRS * PER_DIR))
sync; echo 3 >/proc/sys/vm/drop_caches
t0=$(date +%s.%N); native=$(ls -lR "$work/lower/Download/m" | grep -c '^-'); t1=$(date +%s.%N)
(ulimit -n 1024; exec "$DAEMON" --source="$work/lower" --mountpoint="$work/mnt" \
   --policy=policy/configs/android.textproto --apps=policy/configs/apps.textproto \
   --control_socket="$work/ctl" 2>"$work/log") &
pid=$!
for _ in $(seq 100); do grep -q " $work/mnt " /proc/self/mounts && break; sleep 0.05; done
rss0=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
t2=$(date +%s.%N); seen=$(ls -lR "$work/mnt/Download/m" | grep -c '^-'); t3=$(date +%s.%N)
fds=$(ls /proc/$pid/fd | wc -l)
rss1=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
limit=$(awk '/Max open files/ {print $4}' /proc/$pid/limits)
nodes=$("$CTL" --socket="$work/ctl" stats --json | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["nodes"]))')
printf 'files %d | ls -lR saw %d natively, %d through scopedfsd\n' "$total" "$native" "$seen"
printf 'ls -lR cold: native %.1f s, scopedfsd %.1f s (%.1fx)\n' "$(echo "$t1 - $t0" | bc)" \
  "$(echo "$t3 - $t2" | bc)" "$(echo "($t3 - $t2) / ($t1 - $t0)" | bc -l)"
printf 'daemon: fd limit %s, fds after the walk %d, nodes %d, RSS %d MiB before and %d MiB after\n' \
  "$limit" "$fds" "$nodes" $((rss0 / 1024)) $((rss1 / 1024))
printf 'memory per remembered node: %d bytes\n' $(( (rss1 - rss0) * 1024 / (nodes > 0 ? nodes : 1) ))
[[ "$seen" == "$total" ]] || { echo "FAILED: files missing through the mount" >&2; exit 1; }
