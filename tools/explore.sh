#!/usr/bin/env bash
# The exploring tester's long run (tests/explore_mount_test.cc): many seeds, or one seed, or a
# file of steps a failure printed, under one or both Android policies, on tmpfs and ext4 lower
# trees. A failing seed prints its shrunk steps and the command that replays them.
#   tools/explore.sh --seeds=1000                 seeds 1..1000, every policy and lower
#   tools/explore.sh --seeds=200 --first=5000 --lower=ext4 --policy=android
#   tools/explore.sh --seed=42 --steps=300        one seed, longer
#   tools/explore.sh --replay=FILE --policy=android-strict --lower=ext4
#   --transport=dev|uring (default: the daemon's own), --max-failures=N (default 3),
#   --shrink-runs=N (replays spent shrinking each failure, default 80).
# Extra arguments after -- go to bazel test.
set -euo pipefail
cd "$(dirname "$0")/.."

first=1 count="" seed="" steps="" policy="" lower="" replay="" transport="" max_failures=3
shrink_runs=80
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds=*) count=${1#*=} ;;
    --first=*) first=${1#*=} ;;
    --seed=*) seed=${1#*=} ;;
    --steps=*) steps=${1#*=} ;;
    --policy=*) policy=${1#*=} ;;
    --lower=*) lower=${1#*=} ;;
    --replay=*) replay=$(realpath "${1#*=}") ;;
    --transport=*) transport=${1#*=} ;;
    --max-failures=*) max_failures=${1#*=} ;;
    --shrink-runs=*) shrink_runs=${1#*=} ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "explore: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done

env=(--test_env=SCOPEDFS_EXPLORE_MAX_FAILURES="$max_failures"
  --test_env=SCOPEDFS_EXPLORE_SHRINK_RUNS="$shrink_runs")
[[ -n $count ]] && env+=(--test_env=SCOPEDFS_EXPLORE_SEEDS="$first:$count")
[[ -n $seed ]] && env+=(--test_env=SCOPEDFS_EXPLORE_SEEDS="$seed")
[[ -n $steps ]] && env+=(--test_env=SCOPEDFS_EXPLORE_STEPS="$steps")
[[ -n $policy ]] && env+=(--test_env=SCOPEDFS_EXPLORE_POLICY="$policy")
[[ -n $lower ]] && env+=(--test_env=SCOPEDFS_EXPLORE_LOWER="$lower")
[[ -n $replay ]] && env+=(--test_env=SCOPEDFS_EXPLORE_REPLAY="$replay")
if [[ -n $transport ]]; then
  env+=(--test_env=SCOPEDFS_TEST_TRANSPORT="$transport")
  [[ $transport == uring ]] && env+=(--test_env=SCOPEDFS_TEST_ENABLE_URING=Y)
fi
exec bazel test //tests:explore_mount_test --test_filter='Lowers/*' "${env[@]}" \
  --test_timeout=86400 --nocache_test_results --test_output=errors "${extra[@]}"
