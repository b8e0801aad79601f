#!/usr/bin/env bash
# ls -lR of a tree by a daemon that has just started, as after a reboot or a daemon restart: the
# Android policy's owner app walks its own tree (Download/, made through the mount by tar x) on a
# fresh scopedfsd, with facts records off (every file's head read again: the behaviour before
# records) and on (facts taken from trusted.scopedfs.facts), and native walks the lower tree, all
# in the same run; the order of the two daemons alternates from run to run. Each walk follows
# `echo 3 > drop_caches`. Prints the medians, their ratios to native and the daemon's counts
# (content_reads, facts_from_records), and what writing the records costs a tar x by the same
# daemons. Needs root and /dev/fuse.
#
# Usage: tools/bench/restart_walk.sh [--runs=N] [--tar=FILE]
#   --tar   the tree (default: the 3,000-entry slice of drivers/ run.sh --quick makes, else a
#           made-up tree of 3,000 files)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
source tools/bench/lib.sh

RUNS=5 TAR=""
for arg in "$@"; do
  case "$arg" in
    --runs=*) RUNS=${arg#--runs=} ;;
    --tar=*) TAR=${arg#--tar=} ;;
    *) echo "usage: $0 [--runs=N] [--tar=FILE]" >&2; exit 2 ;;
  esac
done
if [[ -z "${SCOPEDFSD:-}" || -z "${SCOPEDFSCTL:-}" ]]; then
  bazel build -c opt //daemon:scopedfsd //tools:scopedfsctl >&2
  BIN=$(bazel info -c opt bazel-bin 2>/dev/null)
  SCOPEDFSD=$BIN/daemon/scopedfsd SCOPEDFSCTL=$BIN/tools/scopedfsctl
fi
work=$(mktemp -d /tmp/scopedfs-restart-walk.XXXXXX)
trap 'bench_cleanup; rm -rf "$work"' EXIT
if [[ -z "$TAR" ]]; then
  TAR=$BENCH_CACHE/drivers-slice.tar
  [[ -s "$TAR" ]] || TAR=$(bench_tiny_tar "$work" 3000)
fi
chmod 755 "$work"
lower=$work/lower mnt=$work/mnt sock=$work/ctl log=$work/daemon.log
bench_mount_tmpfs "$lower" 4g
mkdir -p "$lower/Download"
cp "$TAR" "$work/tree.tar" && chmod 644 "$work/tree.tar"
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

start() {
  bench_start_scopedfsd "$SCOPEDFSD" "$lower" "$mnt" "$BENCH_ANDROID" true "$sock" "$log" \
    >/dev/null || { tail -3 "$log" >&2; exit 1; }
  PID=$BENCH_LAST_PID
}
# start_with <true|false>: a daemon with --facts_records=<...>, which bench_start_scopedfsd does
# not pass: a two-line wrapper appends it.
start_with() {
  local records=$1 wrapper=$work/scopedfsd-records-$1
  printf '#!/bin/sh\nexec %q "$@" --facts_records=%s\n' "$SCOPEDFSD" "$records" >"$wrapper"
  chmod 755 "$wrapper"
  local real=$SCOPEDFSD
  SCOPEDFSD=$wrapper
  start
  SCOPEDFSD=$real
}
stop() { bench_stop "$PID" "$mnt"; }
counter() { "$SCOPEDFSCTL" --socket="$sock" stats --json | tr ',{}' '\n\n\n' | sed -n "s/^\"$1\":\([0-9]*\).*/\1/p"; }
seconds() {
  local t0 t1
  t0=$(bench_now)
  bench_as "$@" >/dev/null 2>&1
  t1=$(bench_now)
  echo "$t1 - $t0" | bc
}

# The tree, made by the owner app through the mount, then walked once: the facts are learned
# (and recorded) as any first walk learns them.
start_with true
bench_as "$BENCH_OWNER_UID" mkdir "$mnt/Download/tree"
bench_as "$BENCH_OWNER_UID" tar -x --no-same-owner -f "$work/tree.tar" -C "$mnt/Download/tree"
files=$(find "$lower/Download/tree" ! -type d | wc -l)
bench_as "$BENCH_OWNER_UID" ls -lR "$mnt/Download/tree" >/dev/null
written=$(counter facts_records_written)
stop
echo "tree: $files files ($TAR); records written by the first walk: $written" >&2

declare -A T READS FROM X
for ((run = 1; run <= RUNS; run++)); do
  order="false true"
  ((run % 2 == 0)) && order="true false"
  for records in $order; do
    start_with "$records"
    drop_caches
    t=$(seconds "$BENCH_OWNER_UID" ls -lR "$mnt/Download/tree")
    T[$records]+="$t "
    READS[$records]=$(counter content_reads)
    FROM[$records]=$(counter facts_from_records)
    # What writing the records costs a tar x (each file's head is read and recorded once at its
    # first lookup, and tar's utimensat drops the record again), into a directory of its own.
    bench_as "$BENCH_OWNER_UID" mkdir "$mnt/Download/x"
    X[$records]+="$(seconds "$BENCH_OWNER_UID" tar -x --no-same-owner -f "$work/tree.tar" -C "$mnt/Download/x") "
    stop
    rm -rf "$lower/Download/x"
    echo "run $run: records $records: ls -lR $t s" >&2
  done
  drop_caches
  t=$(seconds 0 ls -lR "$lower/Download/tree")
  T[native]+="$t "
  mkdir "$lower/Download/x"
  X[native]+="$(seconds 0 tar -x --no-same-owner -f "$work/tree.tar" -C "$lower/Download/x") "
  rm -rf "$lower/Download/x"
  echo "run $run: native ls -lR $t s" >&2
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
native=$(echo "${T[native]}" | median)
printf 'ls -lR cold after a daemon restart, android policy, owner app, %s files, median of %s runs\n' "$files" "$RUNS"
printf '%-22s %8s %8s %14s %18s\n' "" seconds "x native" content_reads facts_from_records
printf '%-22s %8.3f %8s %14s %18s\n' native "$native" 1.00 - -
for records in false true; do
  m=$(echo "${T[$records]}" | median)
  label="records off"
  [[ "$records" == true ]] && label="records on"
  printf '%-22s %8.3f %8.2f %14s %18s\n' "scopedfs, $label" "$m" "$(echo "$m / $native" | bc -l)" \
    "${READS[$records]}" "${FROM[$records]}"
done
native_x=$(echo "${X[native]}" | median)
printf '\ntar x into a fresh directory (the same daemons, after the walk), median of %s runs\n' "$RUNS"
printf '%-22s %8.3f %8.2f\n' native "$native_x" 1.00
for records in false true; do
  m=$(echo "${X[$records]}" | median)
  label="records off"
  [[ "$records" == true ]] && label="records on"
  printf '%-22s %8.3f %8.2f\n' "scopedfs, $label" "$m" "$(echo "$m / $native_x" | bc -l)"
done
