#!/usr/bin/env bash
# CI smoke test of the benchmark suite: runs tools/bench/run.sh --tiny (a 300-file tree, 4 MiB
# fio files, one run) and checks only that every contender produced, for every workload, a figure
# or a stated reason (failed or n/a). Real figures never come from here. Skips visibly without
# root or /dev/fuse.
set -euo pipefail
if [[ $(id -u) -ne 0 || ! -c /dev/fuse ]]; then
  echo "SKIPPED: bench_smoke_test needs root and /dev/fuse (uid $(id -u), /dev/fuse $([[ -c /dev/fuse ]] && echo present || echo missing))"
  exit 0
fi
for tool in fio setpriv setfattr bc python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (tools/setup.sh installs it)"; exit 1; }
done

R=${TEST_SRCDIR:?}/${TEST_WORKSPACE:?}
out=${TEST_TMPDIR:?}/bench-out
export SCOPEDFSD=$R/daemon/scopedfsd SCOPEDFSCTL=$R/tools/scopedfsctl METAOPS=$R/tools/bench/metaops
export ENGINE_BENCH=$R/policy/engine_benchmark GPS_JPEG=$R/tests/media/gps.jpg
export BENCH_CACHE=$TEST_TMPDIR/cache
# A work directory of this run's own: another benchmark may be running on the machine.
export BENCH_WORK_PREFIX=scopedfs-bench-smoke-$$

start=$(date +%s)
rc=0
"$R/tools/bench/run.sh" --tiny --out="$out" 2>"$TEST_TMPDIR/run.log" || rc=$?
echo "run.sh --tiny took $(($(date +%s) - start)) s"
if ((rc != 0)); then
  echo "FAIL: run.sh --tiny exited $rc"
  tail -20 "$TEST_TMPDIR/run.log"
  exit 1
fi

results=$out/results.tsv
contenders=(native ceiling ceiling_uring permissive permissive_noattr permissive_nosys permissive_android permissive_app
  permissive_android_app android_owner android_strict permissive_uring android_owner_uring redacted nopassthrough
  gallery_location gallery_redacted gallery_location_uring gallery_redacted_uring bindfs mergerfs)
workloads=("fio read 4k" "fio randread 4k" "fio write 4k" "fio randwrite 4k" "fio read 1m"
  "fio randread 1m" "fio write 1m" "fio randwrite 1m" "photo read cold" "photo read warm"
  "open+close rate" "stat rate" "tar x" "files seen" "ls -lR cold" "ls -lR warm" "find -size"
  "grep -r" "du -s" "rm -rf" "gallery cold" "gallery warm")
bad=0
check() {  # check <contender> <workload>: one line, OK with numbers or FAILED/NA with a reason
  local line status payload v
  line=$(awk -F'\t' -v c="$1" -v w="$2" '$1 == c && $2 == w' "$results")
  if [[ -z "$line" || $(wc -l <<<"$line") -ne 1 ]]; then
    echo "FAIL: $1 / $2: expected one result line, got: '${line}'"
    bad=1
    return
  fi
  status=$(cut -f4 <<<"$line")
  payload=$(cut -f5- <<<"$line")
  case "$status" in
    OK)
      for v in $payload; do
        [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "FAIL: $1 / $2: '$v' is not a figure"; bad=1; }
      done
      [[ -n "$payload" ]] || { echo "FAIL: $1 / $2: OK without a figure"; bad=1; }
      ;;
    FAILED | NA)
      [[ -n "${payload// /}" ]] || { echo "FAIL: $1 / $2: $status without a reason"; bad=1; }
      echo "note: $1 / $2: $status: $payload"
      ;;
    *) echo "FAIL: $1 / $2: unknown status '$status'"; bad=1 ;;
  esac
}
for c in "${contenders[@]}"; do
  for w in "${workloads[@]}"; do check "$c" "$w"; done
done
check policy_engine "decision (mix)"
[[ -s "$out/BENCHMARKS.md" ]] || { echo "FAIL: no BENCHMARKS.md was written"; bad=1; }
# The semantics A/B: the table is written, with a row per tree step and caller.
grep -q '^## Cost of POSIX semantics' "$out/BENCHMARKS.md" || { echo "FAIL: no 'Cost of POSIX semantics' section"; bad=1; }
for caller in "root" "app uid 10067"; do
  [[ $(grep -c "^| [a-z -]* | $caller | " "$out/BENCHMARKS.md") -ge 7 ]] ||
    { echo "FAIL: the A/B table lacks rows for $caller"; bad=1; }
done
grep -q '^## Against the FUSE ceiling' "$out/BENCHMARKS.md" || { echo "FAIL: no 'Against the FUSE ceiling' section"; bad=1; }
grep -q '^## Targets for metadata' "$out/BENCHMARKS.md" || { echo "FAIL: no 'Targets for metadata' section"; bad=1; }
[[ $(grep -c '^| \(ls -lR\|find\|du\|grep\|tar\|rm\|open+close\)' "$out/BENCHMARKS.md") -ge 8 ]] ||
  { echo "FAIL: the metadata targets table lacks rows"; bad=1; }
# The per-run dump sits beside the raw data, linked from the summary.
[[ -s "$out/details.md" ]] || { echo "FAIL: no details.md was written beside the results"; bad=1; }
grep -q '(details.md)' "$out/BENCHMARKS.md" || { echo "FAIL: BENCHMARKS.md does not link details.md"; bad=1; }
grep -q '^## Every figure' "$out/details.md" || { echo "FAIL: details.md has no 'Every figure' section"; bad=1; }
if grep -q " /tmp/$BENCH_WORK_PREFIX\\." /proc/self/mounts; then
  echo "FAIL: run.sh left a mount behind:"
  grep " /tmp/$BENCH_WORK_PREFIX\\." /proc/self/mounts
  bad=1
fi

# The targets run (--only=targets): its contenders only, the targets table first, and a
# system-wide profile of missed rows (BENCH_PROFILE_MAX keeps the smoke run to two), each linked
# from the table to its heading in details.md.
tout=${TEST_TMPDIR}/bench-targets
start=$(date +%s)
rc=0
BENCH_PROFILE_MAX=2 "$R/tools/bench/run.sh" --tiny --only=targets --profile --out="$tout" 2>"$TEST_TMPDIR/run-targets.log" || rc=$?
echo "run.sh --tiny --only=targets --profile took $(($(date +%s) - start)) s"
if ((rc != 0)); then
  echo "FAIL: run.sh --tiny --only=targets exited $rc"
  tail -20 "$TEST_TMPDIR/run-targets.log"
  exit 1
fi
results=$tout/results.tsv
for c in native ceiling permissive permissive_uring android_owner android_owner_uring android_device_uring bindfs mergerfs; do
  for w in "fio read 4k" "fio randread 4k" "fio write 4k" "fio randwrite 4k" "open+close rate" "tar x" \
    "files seen" "ls -lR cold" "ls -lR warm" "find -size" "grep -r" "du -s" "rm -rf"; do check "$c" "$w"; done
done
for c in permissive_noattr redacted nopassthrough; do
  ! grep -q "^$c	" "$results" || { echo "FAIL: --only=targets ran $c"; bad=1; }
done
! grep -q "photo read" "$results" || { echo "FAIL: --only=targets ran the photo reads"; bad=1; }
[[ "$(grep -m1 '^## ' "$tout/BENCHMARKS.md")" == "## Targets for metadata" ]] ||
  { echo "FAIL: the targets table is not the first section of BENCHMARKS.md"; bad=1; }
[[ $(grep -c '^| \(ls -lR\|find\|du\|grep\|tar\|rm\|open+close\|fio\)' "$tout/BENCHMARKS.md") -ge 12 ]] ||
  { echo "FAIL: the targets table lacks rows"; bad=1; }
# Every profile summary has samples, and every link from the table names a heading of details.md.
n=$(grep -c . "$tout/profiles.tsv" || true)
if [[ "$n" != 2 ]]; then
  echo "FAIL: expected 2 profiles (BENCH_PROFILE_MAX=2), got $n"
  bad=1
fi
if grep -q '"samples": 0' "$tout/profiles.tsv"; then
  echo "FAIL: a profile has no samples:"; grep '"samples": 0' "$tout/profiles.tsv"; bad=1
fi
links=$(grep -o '(details.md#[^)]*)' "$tout/BENCHMARKS.md" | sed 's/(details.md#//; s/)$//' | sort -u)
[[ $(wc -w <<<"$links") == 2 ]] || { echo "FAIL: expected 2 profile links in the table, got: $links"; bad=1; }
for id in $links; do
  python3 - "$tout/details.md" "$id" <<'PY' || bad=1
import re, sys
ids = set()
for line in open(sys.argv[1]):
    m = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
    if m:
        ids.add("".join(ch for ch in m.group(1).lower() if ch.isalnum() or ch in " -_").replace(" ", "-"))
if sys.argv[2] not in ids:
    print("FAIL: BENCHMARKS.md links details.md#%s, which has no such heading" % sys.argv[2])
    sys.exit(1)
PY
done
grep -q '^| [0-9.]*% | [0-9.]*% | ' "$tout/details.md" || { echo "FAIL: details.md has no profile shares"; bad=1; }
if grep -q " /tmp/$BENCH_WORK_PREFIX\\." /proc/self/mounts; then
  echo "FAIL: run.sh --only=targets left a mount behind"
  bad=1
fi
((bad == 0)) || exit 1
echo "PASS: every contender produced a figure or a stated reason for every workload; the targets run wrote its table and linked profiles"
