#!/bin/sh
# Bazel's workspace status (--workspace_status_command in .bazelrc): the commit and whether the
# tree had local changes, which --stamp links into every binary (base/build_stamp.cc) for
# --version. Outside a git checkout both are "unknown".
rev=$(git rev-parse --short=12 HEAD 2>/dev/null) || rev=unknown
if [ "$rev" = unknown ]; then
  status=unknown
elif [ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  status=clean
else
  status=modified
fi
echo "BUILD_SCM_REVISION $rev"
echo "BUILD_SCM_STATUS $status"
