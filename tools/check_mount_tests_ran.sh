#!/usr/bin/env bash
# After tools/test.sh: fails if any test that needs a FUSE mount (tagged requires-fuse) skipped a
# case, or left no log, in either of its passes: through /dev/fuse ("dev") and over FUSE over
# io_uring ("uring"). On a machine without root or /dev/fuse those tests skip with a visible
# reason and pass, which is right for a developer's laptop and wrong for CI: there, a lost
# /dev/fuse (or a kernel that will not serve io_uring) must not turn every mount test into
# "PASSED". .ci/run calls this after the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
passes=$(bazel info output_base 2>/dev/null)/scopedfs-test-passes
mapfile -t targets < <(bazel query 'attr(tags, "requires-fuse", tests(//...))' 2>/dev/null)
((${#targets[@]} > 0)) || { echo "check_mount_tests_ran: no requires-fuse tests found" >&2; exit 1; }
bad=0
for pass in dev uring; do
  for t in "${targets[@]}"; do
    rel=${t#//}
    log="$passes/$pass/${rel/://}/test.log"
    if [[ ! -f "$log" ]]; then
      echo "check_mount_tests_ran: $t has no test log in the $pass pass ($log): did it run?"
      bad=$((bad + 1))
    elif grep -Eq '^\[  SKIPPED \]|^SKIPPED: ' "$log"; then
      echo "check_mount_tests_ran: $t skipped in the $pass pass:"
      grep -E -B2 '^\[  SKIPPED \]|^SKIPPED: ' "$log" | head -8 | sed 's/^/    /'
      bad=$((bad + 1))
    fi
  done
done
# The lower-dependent ones ran a third time, on an ext4 lower.
mapfile -t ext4_targets < <(bazel query 'attr(tags, "lower-dependent", tests(//...))' 2>/dev/null)
((${#ext4_targets[@]} > 0)) || { echo "check_mount_tests_ran: no lower-dependent tests found" >&2; exit 1; }
for t in "${ext4_targets[@]}"; do
  rel=${t#//}
  log="$passes/ext4/${rel/://}/test.log"
  if [[ ! -f "$log" ]]; then
    echo "check_mount_tests_ran: $t has no test log in the ext4 pass ($log): did it run?"
    bad=$((bad + 1))
  elif grep -Eq '^\[  SKIPPED \]|^SKIPPED: ' "$log"; then
    echo "check_mount_tests_ran: $t skipped in the ext4 pass"
    bad=$((bad + 1))
  fi
done
if ((bad > 0)); then
  echo "check_mount_tests_ran: $bad of 2 x ${#targets[@]} mount test runs did not run every case"
  exit 1
fi
echo "check_mount_tests_ran: all ${#targets[@]} mount tests ran every case, through /dev/fuse" \
  "and over io_uring, and the ${#ext4_targets[@]} lower-dependent ones on an ext4 lower too"
