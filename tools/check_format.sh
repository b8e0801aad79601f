#!/usr/bin/env bash
# The formatting test: every C++ file git tracks (or would track) in the source tree must be as
# Debian's clang-format leaves it, under the repository's .clang-format. Prints the files that are
# not, with the diff clang-format would make; `tools/check_format.sh --fix` rewrites them instead.
# As a Bazel test it finds the source tree through the .clang-format it is given as data (the
# runfiles hold symlinks into the tree), and it is tagged "external" so it always reruns.
set -euo pipefail
fix=false
[[ "${1:-}" == "--fix" ]] && fix=true
if [[ -n "${TEST_SRCDIR:-}" ]]; then
  root=$(dirname "$(readlink -f "$TEST_SRCDIR/${TEST_WORKSPACE:-scopedfs}/.clang-format")")
else
  root=$(cd "$(dirname "$0")/.." && pwd)
fi
cd "$root"
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (tools/setup.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h' | grep -v '^bazel-')
((${#files[@]} > 0)) || { echo "check_format: no C++ files found under $root" >&2; exit 1; }
if $fix; then
  clang-format -i --style=file "${files[@]}"
  echo "check_format: formatted ${#files[@]} files"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! diff -u "$f" <(clang-format --style=file "$f") >/tmp/check_format.$$ 2>&1; then
    echo "not formatted: $f"
    head -40 /tmp/check_format.$$
    bad=$((bad + 1))
  fi
done
rm -f /tmp/check_format.$$
echo "check_format: ${#files[@]} files, $bad not formatted"
((bad == 0))
