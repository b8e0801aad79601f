#!/bin/bash
# Runs xfstests (the kernel's filesystem suite, from a checkout given on the command line) on a
# permissive scopedfs mount and natively on the same lower filesystem type (tmpfs, ext4 on a loop
# device), and writes the comparison: the tests the mount fails that native passes.
#
# Everything happens in a private mount namespace: the mount helper (mount.fuse.scopedfs) is
# installed on a tmpfs over /usr/local/sbin and the fsgqa users xfstests wants in bind-mounted
# copies of /etc/passwd and /etc/group, so nothing is installed on the machine. Each daemon the
# helper starts is recorded and stopped by its pid, and every mount and loop device made here is
# undone, also when a run fails or is interrupted.
set -euo pipefail

me=$(basename "$0")
usage() {
  cat <<EOF
usage: $me [-l tmpfs,ext4] [-m mount,native] [-o OUT_DIR] [-t auto|uring|dev] [-d SCOPEDFSD]
          XFSTESTS_DIR [CHECK_ARG...]
  Runs xfstests' ./check (default: -g generic/quick) from XFSTESTS_DIR, a built checkout of
  git://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git, on a permissive scopedfs mount and
  natively, over each lower filesystem type, and writes OUT_DIR/compare-<lower>.txt.
  -l  lower filesystem types to run on (default tmpfs,ext4)
  -m  mount: scopedfs over the lower; native: the lower itself (default mount,native)
  -o  where work trees, results and the comparison go (default /var/tmp/scopedfs-xfstests)
  -t  scopedfsd --transport (default auto)
  -d  the scopedfsd binary (default bazel-bin/daemon/scopedfsd of this repository)
  -c  only compare the results already in OUT_DIR
  CHECK_ARG...  instead of -g generic/quick, e.g. generic/215 generic/375
Stop a run with SIGTERM (or ^C) to run.sh: the test under way ends, check prints its summary, and
every mount, daemon and loop device is undone.
Tests listed as "exclude" in tools/xfstests/known_differences are not run; those listed as
"design" run and are marked as expected in the comparison.
EOF
}
fail() {
  echo "$me: $*" >&2
  exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lowers=tmpfs,ext4
modes=mount,native
out=/var/tmp/scopedfs-xfstests
transport=auto
daemon=$repo/bazel-bin/daemon/scopedfsd
compare_only=false
while getopts "l:m:o:t:d:ch" opt; do
  case $opt in
    l) lowers=$OPTARG ;;
    m) modes=$OPTARG ;;
    o) out=$OPTARG ;;
    t) transport=$OPTARG ;;
    d) daemon=$OPTARG ;;
    c) compare_only=true ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 64 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
  usage >&2
  fail "no xfstests checkout given: pass the path of a built xfstests-dev checkout (the" \
    "directory with ./check), e.g. $me /work/xfstests-src"
fi
# What xfstests' README lists to build and run the suite, from Debian's packages; installed here
# rather than by tools/setup.sh, since only this by-hand run needs them.
xfstests_packages=(acl automake dbench dump gawk gcc indent make libtool libtool-bin libacl1-dev
  libaio-dev libattr1-dev libcap-dev libgdbm-dev libgdbm-compat-dev uuid-dev uuid-runtime
  xfslibs-dev xfsprogs psmisc quota sqlite3)
missing=()
for p in "${xfstests_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "$me: installing xfstests' build and run dependencies: ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    fail "could not install ${missing[*]} (apt-get update first?)"
fi
xfstests=$(cd "$1" 2>/dev/null && pwd) || fail "xfstests checkout $1: no such directory"
shift
[ -x "$xfstests/check" ] && [ -d "$xfstests/tests/generic" ] ||
  fail "$xfstests is not an xfstests checkout (no ./check or tests/generic)"
[ -x "$xfstests/ltp/fsstress" ] ||
  fail "$xfstests is not built (no ltp/fsstress): run make in it (see its README)"
check_args=("$@")
# generic/ only: the tests of a filesystem's own directory (ext4/, tmpfs/) have no counterpart on
# the mount.
[ ${#check_args[@]} -gt 0 ] || check_args=(-g generic/quick)
for l in ${lowers//,/ }; do
  case $l in tmpfs | ext4) ;; *) fail "-l $l: lower types are tmpfs and ext4" ;; esac
done
for m in ${modes//,/ }; do
  case $m in mount | native) ;; *) fail "-m $m: modes are mount and native" ;; esac
done
known=$here/known_differences
mkdir -p "$out"
out=$(cd "$out" && pwd)

# --- the comparison (also run alone with -c) ---

# The generic/ tests of check's summary line "KEY: a b c" (Ran, Failures, Not run) in FILE, one a
# line: the only ones both sides can run. A run stopped before its summary is read test by test.
summary_tests() {
  if grep -q '^Ran: ' "$1"; then
    sed -n "s/^$2: //p" "$1" | tail -1 | tr ' ' '\n' | grep '^generic/' | sort -u || true
    return
  fi
  awk -v key="$2" '$1 ~ /^generic\/[0-9]+$/ && NF > 1 {
      status = /\[not run\]/ ? "Not run" : /\[expunged\]/ ? "" : \
        /\[failed|output mismatch/ ? "Failures" : "passed"
      if (status != "" && (key == "Ran" || key == status)) print $1
    }' "$1" | sort -u
}
known_reason() {
  awk -v t="$1" '$1 == t { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$known"
}

compare() {
  local lower=$1
  local m=$out/mount-$lower/check.out n=$out/native-$lower/check.out
  local report=$out/compare-$lower.txt
  [ -f "$m" ] && [ -f "$n" ] || return 0
  local tmp
  tmp=$(mktemp -d)
  summary_tests "$m" Ran >"$tmp/m.ran"
  summary_tests "$m" Failures >"$tmp/m.fail"
  summary_tests "$n" Ran >"$tmp/n.ran"
  summary_tests "$n" Failures >"$tmp/n.fail"
  summary_tests "$m" "Not run" >"$tmp/m.notrun"
  summary_tests "$n" "Not run" >"$tmp/n.notrun"
  # check's "Ran" counts the tests it tried, "Not run" ones included.
  sort -u "$tmp/n.fail" "$tmp/n.notrun" | comm -23 "$tmp/n.ran" - >"$tmp/n.pass"
  sort -u "$tmp/m.fail" "$tmp/m.notrun" | comm -23 "$tmp/m.ran" - >"$tmp/m.pass"
  {
    echo "xfstests on $lower: permissive scopedfs mount vs native $lower ($(date -u +%FT%TZ))"
    echo "mount:  ran $(wc -l <"$tmp/m.ran") (not run $(wc -l <"$tmp/m.notrun")," \
      "passed $(wc -l <"$tmp/m.pass")), failed $(wc -l <"$tmp/m.fail")"
    echo "native: ran $(wc -l <"$tmp/n.ran") (not run $(wc -l <"$tmp/n.notrun")," \
      "passed $(wc -l <"$tmp/n.pass")), failed $(wc -l <"$tmp/n.fail")"
    echo
    echo "Mount fails, native passes:"
    comm -12 "$tmp/m.fail" "$tmp/n.pass" | while read -r t; do
      reason=$(known_reason "$t")
      echo "  $t${reason:+  [known] $reason}"
    done
    echo "Both fail:"
    comm -12 "$tmp/m.fail" "$tmp/n.fail" | sed 's/^/  /'
    echo "Mount fails, not run natively:"
    comm -12 "$tmp/m.fail" "$tmp/n.notrun" | sed 's/^/  /'
    echo "Native fails, mount passes:"
    comm -12 "$tmp/n.fail" "$tmp/m.pass" | sed 's/^/  /'
    echo "Passed natively, not run on the mount:"
    comm -12 "$tmp/n.pass" "$tmp/m.notrun" | sed 's/^/  /'
  } >"$report"
  rm -rf "$tmp"
  cat "$report"
  echo "(saved in $report)"
}

if $compare_only; then
  for l in ${lowers//,/ }; do compare "$l"; done
  exit 0
fi

# --- from here on, inside a private mount namespace ---
if [ "${SCOPEDFS_XFSTESTS_NS:-}" != "$$" ]; then
  # unshare execs the shell in place, so $$ stays the same and marks the namespace as ours.
  exec unshare --mount --propagation private -- env SCOPEDFS_XFSTESTS_NS=$$ bash "$0" \
    -l "$lowers" -m "$modes" -o "$out" -t "$transport" -d "$daemon" "$xfstests" "${check_args[@]}"
fi

[ -x "$daemon" ] || fail "no scopedfsd at $daemon: bazel build //daemon:scopedfsd (or pass -d)"
# Per invocation (the pid survives the exec): runs with other -l/-m may share OUT_DIR at once.
state=$out/state-$$
loops=()
cleanup() {
  set +e
  # Every daemon the helper started, by pid (and only if that pid is still a scopedfsd).
  if [ -f "$state/daemons" ]; then
    while read -r pid mnt; do
      [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = scopedfsd ] || continue
      umount -l "$mnt" 2>/dev/null
      kill -TERM "$pid" 2>/dev/null
    done <"$state/daemons"
    while read -r pid _; do
      for _ in $(seq 50); do
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = scopedfsd ] || break
        sleep 0.1
      done
      if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = scopedfsd ]; then
        echo "$me: scopedfsd $pid did not stop on SIGTERM: SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null
      fi
    done <"$state/daemons"
    rm -f "$state/daemons"
  fi
  # Every mount under OUT_DIR, deepest first (FUSE mounts sit on their lowers' neighbours).
  awk -v o="$out/" 'index($2, o) == 1 { print $2 }' /proc/self/mounts | sort -r |
    while read -r mnt; do umount "$mnt" 2>/dev/null || umount -l "$mnt"; done
  for dev in "${loops[@]}"; do losetup -d "$dev"; done
}
# check runs in the background, so that a signal reaches this shell at once (bash defers traps
# while a foreground child runs): check is told to stop (it ends the test under way and prints its
# summary), then everything is undone.
check_pid=""
stop_check() {
  [ -n "$check_pid" ] || return 0
  kill -TERM "$check_pid" 2>/dev/null
  wait "$check_pid" 2>/dev/null
  check_pid=""
}
trap cleanup EXIT
trap 'stop_check; exit 130' INT
trap 'stop_check; exit 143' TERM

# The helper, its settings, and private copies of what it runs (a rebuild during the run must
# not change the daemon under test).
mkdir -p "$state/bin"
cp -f "$daemon" "$state/bin/scopedfsd"
cp -f "$repo/policy/configs/permissive.textproto" "$repo/policy/configs/apps.textproto" "$state/"
mount -t tmpfs -o mode=755 scopedfs-xfstests-sbin /usr/local/sbin
# mount(8) runs /sbin/mount.fuse.scopedfs if it exists, else fuse3's mount.fuse3, which runs
# `scopedfs` from sh's default PATH, where /usr/local/sbin comes first.
install -m 755 "$here/mount.fuse.scopedfs" /usr/local/sbin/scopedfs
install -m 755 "$here/mount.fuse.scopedfs" /usr/local/sbin/mount.fuse.scopedfs
cat >/usr/local/sbin/scopedfs-xfstests.conf <<EOF
DAEMON='$state/bin/scopedfsd'
POLICY='$state/permissive.textproto'
APPS='$state/apps.textproto'
STATE='$state'
TRANSPORT='$transport'
EOF

# xfstests' users (README: fsgqa, fsgqa2, 123456-fsgqa and group fsgqa), in this namespace only.
cp /etc/passwd /etc/group "$state/"
uid=39100
add_user() {
  getent passwd "$1" >/dev/null && return 0
  while getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null; do uid=$((uid + 1)); done
  echo "$1:x:$uid:$uid::/tmp:/bin/bash" >>"$state/passwd"
  echo "$1:x:$uid:" >>"$state/group"
  uid=$((uid + 1))
}
add_user fsgqa
add_user fsgqa2
add_user 123456-fsgqa
mount --bind "$state/passwd" /etc/passwd
mount --bind "$state/group" /etc/group

# Tests excluded from every run (kind "exclude" in known_differences).
sed -e 's/#.*//' "$known" | awk '$2 == "exclude" { print $1 }' >"$state/exclude"

# A fresh ext4 image of SIZE at PATH.
ext4_image() {
  rm -f "$1"
  truncate -s "$2" "$1"
  mkfs.ext4 -q -F "$1"
}

run_one() {
  local mode=$1 lower=$2 dir=$out/$1-$2
  rm -rf "$dir"
  mkdir -p "$dir/test" "$dir/scratch" "$dir/results"
  local conf=$dir/local.config
  case $mode-$lower in
    mount-tmpfs)
      mkdir -p "$dir/lower-test" "$dir/lower-scratch"
      # As xfstests sizes a native tmpfs (common/config: -o size=1G).
      mount -t tmpfs -o size=1G scopedfs-lower-test "$dir/lower-test"
      mount -t tmpfs -o size=1G scopedfs-lower-scratch "$dir/lower-scratch"
      ;;
    mount-ext4)
      mkdir -p "$dir/lower-test" "$dir/lower-scratch"
      ext4_image "$dir/test.img" 8G
      ext4_image "$dir/scratch.img" 8G
      mount -o loop "$dir/test.img" "$dir/lower-test"
      mount -o loop "$dir/scratch.img" "$dir/lower-scratch"
      ;;
    native-ext4)
      ext4_image "$dir/test.img" 8G
      truncate -s 8G "$dir/scratch.img"
      loops+=("$(losetup -f --show "$dir/test.img")")
      loops+=("$(losetup -f --show "$dir/scratch.img")")
      ;;
  esac
  case $mode-$lower in
    mount-*)
      cat >"$conf" <<EOF
export FSTYP=fuse
export FUSE_SUBTYP=.scopedfs
export TEST_DEV=scopedfs-$lower-test
export TEST_DIR=$dir/test
export SCRATCH_DEV=scopedfs-$lower-scratch
export SCRATCH_MNT=$dir/scratch
export TEST_FS_MOUNT_OPTS=-osource=$dir/lower-test
export MOUNT_OPTIONS=-osource=$dir/lower-scratch
EOF
      ;;
    native-tmpfs)
      cat >"$conf" <<EOF
export FSTYP=tmpfs
export TEST_DEV=tmpfs_test
export TEST_DIR=$dir/test
export SCRATCH_DEV=tmpfs_scratch
export SCRATCH_MNT=$dir/scratch
EOF
      ;;
    native-ext4)
      cat >"$conf" <<EOF
export FSTYP=ext4
export TEST_DEV=${loops[${#loops[@]} - 2]}
export TEST_DIR=$dir/test
export SCRATCH_DEV=${loops[${#loops[@]} - 1]}
export SCRATCH_MNT=$dir/scratch
EOF
      ;;
  esac
  echo "=== $mode $lower: ./check ${check_args[*]} (log: $dir/check.out)"
  local rc=0
  (cd "$xfstests" && HOST_OPTIONS=$conf RESULT_BASE=$dir/results \
    exec ./check -E "$state/exclude" "${check_args[@]}") >"$dir/check.out" 2>&1 &
  check_pid=$!
  # Shown as it comes; tail ends by itself with check.
  tail -n +1 -f --pid="$check_pid" "$dir/check.out" &
  local tail_pid=$!
  wait "$check_pid" || rc=$?
  check_pid=""
  wait "$tail_pid"
  echo "=== $mode $lower: check exited $rc"
  # Undo this run's mounts and loops now; the next run starts clean.
  cleanup
  loops=()
  set -e
}

for l in ${lowers//,/ }; do
  for m in ${modes//,/ }; do run_one "$m" "$l"; done
done
for l in ${lowers//,/ }; do compare "$l"; done
