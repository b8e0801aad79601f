#!/usr/bin/env bash
# The test command: installs what the build needs (Debian packages only), then runs every test.
# Extra arguments go to `bazel test`, e.g. tools/test.sh --config=asan
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
bazel test //... "$@"
