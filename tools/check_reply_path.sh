#!/usr/bin/env bash
# The reply-path test: the daemon answers the kernel only through OpRequest
# (daemon/ops/op_request.cc), which sends each request one reply and passes the audit on the way.
# A fuse_reply_* call anywhere else in daemon/ is a reply that could come twice, not at all, or
# without its audit decision; this test names each one. As a Bazel test it finds the source tree
# through the .clang-format it is given as data (as //tools:format_test does); tagged "external".
set -euo pipefail
if [[ -n "${TEST_SRCDIR:-}" ]]; then
  root=$(dirname "$(readlink -f "$TEST_SRCDIR/${TEST_WORKSPACE:-scopedfs}/.clang-format")")
else
  root=$(cd "$(dirname "$0")/.." && pwd)
fi
cd "$root"
[[ -f daemon/ops/op_request.cc ]] || { echo "check_reply_path: no daemon/ops/op_request.cc under $root" >&2; exit 1; }
grep -q 'fuse_reply_' daemon/ops/op_request.cc || { echo "check_reply_path: op_request.cc sends no reply: the check is looking at the wrong file" >&2; exit 1; }
if found=$(grep -rn --include='*.cc' --include='*.h' -E '\bfuse_reply_[a-z_]+\s*\(' daemon \
    | grep -v '^daemon/ops/op_request\.cc:' | grep -v '_test\.cc:'); then
  echo "check_reply_path: replies sent past OpRequest (daemon/ops/op_request.h says why not):"
  echo "$found"
  exit 1
fi
echo "check_reply_path: every reply in daemon/ goes through daemon/ops/op_request.cc"
