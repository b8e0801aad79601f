#!/usr/bin/env bash
# The test command: installs what the build needs (Debian packages only), then runs every test,
# then the unit tests (those that need no FUSE mount) again under ThreadSanitizer.
# Extra arguments go to the first `bazel test`, e.g. tools/test.sh --config=asan.
# SCOPEDFS_TSAN=0 skips the ThreadSanitizer pass.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel test //... "$@"
if [ "${SCOPEDFS_TSAN:-1}" != 0 ]; then
  # Same output base (--config=tsan builds under its own platform suffix); --build_tests_only
  # builds no mount test or binary the filtered tests do not need.
  bazel test --config=tsan --build_tests_only --test_tag_filters=-requires-fuse //...
fi
