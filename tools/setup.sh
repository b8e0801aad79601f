#!/usr/bin/env bash
# Installs every Debian package scopedfs needs to build, test and benchmark.
# Idempotent: packages already present are skipped, and apt is only touched when something is missing.
# Safe on a bare bookworm image (needs root or sudo).
set -euo pipefail

PACKAGES=(
  # build
  bazel-bootstrap bazel-skylib bazel-platforms bazel-rules-java
  g++ pkg-config protobuf-compiler
  # libraries bound by WORKSPACE
  libfuse3-dev libabsl-dev libprotobuf-dev libgtest-dev libgmock-dev
  libselinux1-dev libbenchmark-dev libsystemd-dev libseccomp-dev liburing-dev
  # runtime: fusermount3 for unmounting; attr (setfattr/getfattr) for the demo and tests, acl
  # (setfacl) for xattr_mount_test; systemd-analyze, which gives the unit's system-call sets to
  # the service sandbox test; man
  fuse3 attr acl systemd man-db
  # the device-image builder: mke2fs -d, debugfs, tune2fs; its Android profile labels inodes
  # with selabel_lookup (selinux-utils) and writes ACLs with python3
  e2fsprogs selinux-utils python3
  # tools/service/sepolicy_test: m4 expands the module as AOSP's build does, checkpolicy and
  # secilc compile it against a minimal base policy
  m4 checkpolicy secilc
  # tests: jq reads `scopedfsctl stats --json` in tools/scopedfsctl_test.sh; clang-format checks
  # the tree against .clang-format
  jq clang-format
  # media samples and the location oracle test: exiftool, ffmpeg/ffprobe, ImageMagick
  libimage-exiftool-perl ffmpeg imagemagick
  # tools/fuzz.sh: clang with libFuzzer and the sanitizer runtimes; llvm-symbolizer for stacks
  clang libclang-rt-14-dev llvm-14
  # tools/bench/run.sh's smoke test: fio, the two peer FUSE filesystems, gnuplot for the chart,
  # bc and util-linux's setpriv (the full run adds linux-source-6.1 and linux-perf itself)
  fio bindfs mergerfs gnuplot-nox bc util-linux
  # tools/xfstests/run.sh: what xfstests' README lists to build and run the suite (which Debian
  # does not package: the script is given a checkout)
  acl automake dbench dump gawk gcc indent make libtool libtool-bin libacl1-dev libaio-dev
  libattr1-dev libcap-dev libgdbm-dev libgdbm-compat-dev uuid-dev uuid-runtime xfslibs-dev
  xfsprogs psmisc quota sqlite3
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
