#!/usr/bin/env bash
# The test command: installs what the build needs (Debian packages only), runs every test with
# the daemons serving through /dev/fuse, then runs the mount tests (tagged requires-fuse) a second
# time over FUSE over io_uring (--transport=uring, through SCOPEDFS_TEST_TRANSPORT), and those
# tagged lower-dependent a third time on an ext4 loop lower (SCOPEDFS_TEST_LOWER=ext4), then boots
# the emulated device (tools/emulator/run.sh; SCOPEDFS_EMULATOR=0 skips it). The kernel
# offers io_uring only while /sys/module/fuse/parameters/enable_uring is Y: the first pass runs
# with it N and the second with it Y, and the value found at the start is put back at the end,
# whatever happens (the daemon itself never changes it). Then the unit tests run again under
# ThreadSanitizer (SCOPEDFS_TSAN=0 skips that pass; tests tagged no-tsan sit it out). Each pass's
# logs are kept for tools/check_mount_tests_ran.sh, which checks that every one ran every case.
# Last, three mutants of the mutation check, a different three each day, must each make a test
# fail (tools/mutants/run.sh; SCOPEDFS_MUTANTS=0 skips them).
# Extra arguments go to both `bazel test` runs, e.g. tools/test.sh --config=asan
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh

param=/sys/module/fuse/parameters/enable_uring
passes=$(bazel info output_base 2>/dev/null)/scopedfs-test-passes
rm -rf "$passes"
mkdir -p "$passes"

# Copies the logs of the tests named by array $2 from the run that just ended into $passes/$1;
# the remaining arguments are that run's build options (for bazel info).
keep_logs() {
  local logs rel
  local -n kept=$2
  logs=$(bazel info "${@:3}" bazel-testlogs 2>/dev/null)
  for t in "${kept[@]}"; do
    rel=${t#//}
    rel=${rel/://}
    if [[ -f "$logs/$rel/test.log" ]]; then
      mkdir -p "$passes/$1/$rel"
      cp "$logs/$rel/test.log" "$passes/$1/$rel/test.log"
    fi
  done
}

set_uring() {  # Y or N; false when the kernel has no such switch or we may not set it
  [[ -w $param ]] && echo "$1" >"$param" 2>/dev/null
}

# The emulated device's guest root (mmdebstrap, a few minutes on a fresh machine, then cached)
# is built beside the first pass; its library list comes from the binaries, built first.
emulator_prepare=""
if [ "${SCOPEDFS_EMULATOR:-1}" != 0 ]; then
  bazel build //daemon:scopedfsd //tools:scopedfsctl //tools/emulator:vold_mount \
    //tools/emulator:answer_probe
  # Its exit status goes to a file: bash 5.2 can lose a finished background job's status by the
  # time it is waited for ("wait: pid N is not a child of this shell", seen once in CI).
  (
    rc=0
    tools/emulator/run.sh --prepare --bin_dir="$(bazel info bazel-bin 2>/dev/null)" \
      >"$passes/emulator-prepare.log" 2>&1 || rc=$?
    echo "$rc" >"$passes/emulator-prepare.status"
  ) &
  emulator_prepare=$!
fi

mapfile -t mount_tests < <(bazel query 'attr(tags, "requires-fuse", tests(//...))' 2>/dev/null)
mapfile -t all_tests < <(bazel query 'tests(//...) except attr(tags, "manual", tests(//...))' \
  2>/dev/null)
mapfile -t tsan_tests < <(bazel query 'tests(//...) except attr(tags, "manual|requires-fuse|no-tsan",
  tests(//...))' 2>/dev/null)
old=""
if [[ -r $param ]]; then
  old=$(cat "$param")
  trap 'echo "$old" >"$param" 2>/dev/null || echo "test: could not put $param back to $old" >&2' EXIT
fi

# SCOPEDFS_TEST_ENABLE_URING only keys the cached results by the kernel's setting.
status=0
if set_uring N; then
  bazel test //... --test_env=SCOPEDFS_TEST_ENABLE_URING=N "$@" || status=$?
else
  echo "test: cannot set $param: the first pass runs with the kernel's setting (${old:-none})" >&2
  bazel test //... --test_env=SCOPEDFS_TEST_ENABLE_URING="${old:-none}" "$@" || status=$?
fi
keep_logs dev all_tests "$@"

if ! set_uring Y; then
  echo "test: cannot set $param to Y (no FUSE over io_uring in this kernel, or not root):" \
    "the mount tests were not run over io_uring" >&2
  exit $((status != 0 ? status : 1))
fi
echo "test: the mount tests again, over io_uring ($param=Y)"
bazel test "${mount_tests[@]}" --test_env=SCOPEDFS_TEST_TRANSPORT=uring \
  --test_env=SCOPEDFS_TEST_ENABLE_URING=Y "$@" || status=$?
keep_logs uring mount_tests "$@"

# The mount tests whose behaviour depends on the lower filesystem (tagged lower-dependent) once
# more, on an ext4 loop lower: ext4 hands a freed inode number to the next file at once, tmpfs
# never does. Through /dev/fuse, with enable_uring still Y (the daemon's default transport then
# is io_uring where offered, so this pass serves over it too).
mapfile -t ext4_tests < <(bazel query 'attr(tags, "lower-dependent", tests(//...))' 2>/dev/null)
echo "test: the ${#ext4_tests[@]} lower-dependent mount tests again, on an ext4 lower"
bazel test "${ext4_tests[@]}" --test_env=SCOPEDFS_TEST_LOWER=ext4 \
  --test_env=SCOPEDFS_TEST_ENABLE_URING=Y "$@" || status=$?
keep_logs ext4 ext4_tests "$@"

# The emulated device (tools/emulator/run.sh, docs/emulator.md): a Debian 6.12 guest under QEMU
# boots the binaries the first pass built, installed by tools/install.sh, on the Android-exact
# userdata image, and checks vold's mount, the demo's matrix, Android's answers and ext4's
# Unicode folding on the casefolded lower, a SIGKILL, a reboot and e2fsck.
# The guest's root is built once (mmdebstrap, a few minutes) and cached in /var/tmp;
# SCOPEDFS_EMULATOR=0 skips this pass.
if [ "${SCOPEDFS_EMULATOR:-1}" != 0 ]; then
  echo "test: the emulated device (tools/emulator/run.sh)"
  wait "$emulator_prepare" 2>/dev/null || true
  # A status lost by bash (above) leaves the file to say it; the preparation is bounded itself.
  for _ in $(seq 3600); do
    [[ -s "$passes/emulator-prepare.status" ]] && break
    sleep 1
  done
  if [[ "$(cat "$passes/emulator-prepare.status" 2>/dev/null)" != 0 ]]; then
    cat "$passes/emulator-prepare.log" >&2
    echo "test: could not prepare the emulated device's base system" >&2
    status=1
  fi
  tools/emulator/run.sh --bin_dir="$(bazel info bazel-bin 2>/dev/null)" || status=$?
fi

# The unit tests (those that need no FUSE mount) again under ThreadSanitizer, with enable_uring
# back as it was. Same output base (--config=tsan builds under its own platform suffix);
# --build_tests_only builds no mount test or binary the filtered tests do not need.
# SCOPEDFS_TSAN=0 skips this pass.
if [ "${SCOPEDFS_TSAN:-1}" != 0 ]; then
  echo "test: the unit tests again, under ThreadSanitizer"
  bazel test --config=tsan --build_tests_only --test_tag_filters=-requires-fuse,-no-tsan //... ||
    status=$?
  keep_logs tsan tsan_tests --config=tsan
fi

# Three mutants of the mutation check (a window that moves by three each day, so every mutant
# comes round), applied in this checkout so that what the passes above built is reused; each
# file is put back as it was. The whole list runs with tools/mutants/run.sh (docs/testing.md).
# SCOPEDFS_MUTANTS=0 skips this.
if [ "${SCOPEDFS_MUTANTS:-1}" != 0 ]; then
  echo "test: three mutants of the mutation check, each of which a test must catch"
  tools/mutants/run.sh --in_place --rotate=3 || status=$?
fi
exit "$status"
