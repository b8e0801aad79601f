#!/usr/bin/env bash
# The benchmark suite: scopedfsd against the native filesystem and against bindfs and mergerfs,
# every contender on the same tmpfs lower tree in the same run, and BENCHMARKS.md with a chart
# written from the results. See BENCHMARKS.md for what each contender and workload is.
#
# Usage: tools/bench/run.sh [--quick] [--tiny] [--only=semantics|--only=targets|--only=gallery]
#                           [--runs=N] [--out=DIR] [--no-profile|--profile] [--uring]
#                           [--libfuse=DIR]
#   (default)  the full run: drivers/ of linux-source-6.1, 3 runs, perf profile; < 30 min
#   --quick    1 run, a 3,000-file slice of drivers/, short fio jobs; < 4 min
#   --tiny     the CI smoke run: 1 run, a 300-file made-up tree, 4 MiB fio files; < 90 s
#   --only=semantics  only the cost of POSIX semantics (issue 11): native and the four A/B
#              contenders below, 5 runs by default (with --quick's tree and fio sizes when
#              --quick is given too, else the full run's)
#   --only=targets  only what the metadata targets table needs: native, the ceilings, scopedfs
#              permissive (root) and android (owner app) over /dev/fuse and io_uring, the
#              one-user io_uring mount, permissive with --xattr=nosys (beside the ceiling), the
#              gallery apps (the gallery workload only), bindfs and mergerfs; the tree steps,
#              open+close, the gallery workload and fio
#              4 KiB read/write/randread/randwrite; 3 runs of the full tree by default (< 25 min
#              with --uring, profiles included). Then one extra, untimed pass of every target
#              row that missed its goal, under a system-wide profile (perf record -a), summarised
#              per row in details.md and linked from the table. Like the full run it writes
#              BENCHMARKS.md into the repository root unless --quick or --out say otherwise;
#              with --quick it profiles too (--no-profile skips the profiles).
# The A/B of POSIX semantics: the permissive policy as it is (POSIX) against a generated copy
# that differs only in `semantics: SEMANTICS_ANDROID`, as root and as an app uid, run next to
# each other in every run and in alternating order (A B in odd runs, B A in even ones), so
# drift on a shared machine hits both alike; BENCHMARKS.md's "Cost of POSIX semantics" compares
# their medians and FUSE request counts against issue 11's 5% budget.
#   --only=gallery  only the gallery workload (below): native, the ceilings and the two gallery
#              apps; BENCHMARKS.md goes to --out (default /tmp/scopedfs-bench-out), never the
#              repository's
#   --libfuse=DIR  a libfuse checkout (e.g. libfuse master; also BENCH_LIBFUSE=DIR): the ceiling is
#              then its passthrough_hp example, built here, over /dev/fuse and io_uring (below)
#   --uring    let the bench set /sys/module/fuse/parameters/enable_uring to Y for the io_uring
#              contenders (it is put back at exit); without it they are skipped while it is N
# The ceiling: with --libfuse=DIR, libfuse's passthrough_hp example from that checkout, built with
# the checkout's libfuse (meson, out of tree) into the work directory at run time, and run at its
# most cached with tools/bench/ceiling_shim.c preloaded (FLUSH and xattr requests answered ENOSYS,
# READDIRPLUS for every chunk), over /dev/fuse (ceiling) and io_uring (ceiling_uring); without it,
# libfuse's own passthrough_ll example (Debian's libfuse3-dev ships it) with its most cached
# options, and no io_uring ceiling. Either way every row shows how far a contender is from what
# FUSE allows here.
# The gallery workload: 5,000 photos the camera app owns in DCIM/Camera (half with GPS; 50 with
# --tiny); a gallery app lists them, stats each and reads its first 64 KiB (metaops gallery), cold
# and warm, as com.example.gallery (ACCESS_MEDIA_LOCATION: raw) and com.example.social (without:
# redacted views), on a one-user mount of the Android policy, and native and the ceilings as the
# gallery's uid. SCOPEDFSD_TRANSPORT, when set, is passed to every
# scopedfsd as --transport=; the *_uring contenders pass --transport=uring (skipped with the
# reason when the daemon has no --transport flag or FUSE over io_uring is off). Every tree step's
# FUSE requests are counted by the kernel's fuse_request_send tracepoint (tracefs), for every
# FUSE contender alike, into kernel_requests.tsv.
#   --out=DIR  where BENCHMARKS.md, the chart and the raw data (results.tsv, requests.tsv,
#              profile.txt) go; default for the full run: BENCHMARKS.md in the repository root,
#              the rest in tools/bench/results/; otherwise everything in /tmp/scopedfs-bench-out
# Binaries come from SCOPEDFSD, SCOPEDFSCTL, METAOPS, ENGINE_BENCH and GPS_JPEG when set (the
# smoke test sets them); otherwise they are built with bazel (-c opt; BENCH_BAZEL_STARTUP adds
# startup flags such as --output_base=...). Needs root, /dev/fuse, fio, bindfs and mergerfs;
# a contender whose tool is missing is reported as failed with that reason.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
source tools/bench/lib.sh

MODE=full RUNS="" OUT="" PROFILE=1 FORCE_PROFILE=0 NO_PROFILE=0 ONLY="" URING_OK=0 LIBFUSE=${BENCH_LIBFUSE:-}
for arg in "$@"; do
  case "$arg" in
    --uring) URING_OK=1 ;;
    --quick) MODE=quick ;;
    --tiny) MODE=tiny ;;
    --only=semantics) ONLY=semantics ;;
    --only=targets) ONLY=targets ;;
    --only=gallery) ONLY=gallery ;;
    --libfuse=*) LIBFUSE=${arg#--libfuse=} ;;
    --runs=*) RUNS=${arg#--runs=} ;;
    --out=*) OUT=${arg#--out=} ;;
    --no-profile) PROFILE=0 NO_PROFILE=1 ;;
    --profile) FORCE_PROFILE=1 ;;
    *) echo "usage: $0 [--quick] [--tiny] [--only=semantics|--only=targets|--only=gallery] [--runs=N] [--out=DIR] [--no-profile|--profile] [--uring] [--libfuse=DIR]" >&2; exit 2 ;;
  esac
done
# The targeted A/B run: more runs of fewer contenders, no profile.
[[ "$ONLY" == semantics ]] && RUNS=${RUNS:-5} PROFILE=0
[[ "$ONLY" == gallery ]] && PROFILE=0
case "$MODE" in
  full) RUNS=${RUNS:-3} FIO_MB=512 FIO_RT=1 FIO_RAMP=0.3 META_FILES=2000 META_SECONDS=1 GALLERY_FILES=5000 ;;
  quick) RUNS=${RUNS:-1} FIO_MB=256 FIO_RT=0.5 FIO_RAMP=0.2 META_FILES=1000 META_SECONDS=0.5 PROFILE=0 GALLERY_FILES=5000 ;;
  tiny) RUNS=${RUNS:-1} FIO_MB=4 FIO_RT=0 FIO_RAMP=0 META_FILES=100 META_SECONDS=0.1 PROFILE=0 GALLERY_FILES=50 ;;
esac
((FORCE_PROFILE)) && PROFILE=1
# The targets run profiles its missed rows even when quick (that is what it is for); not tiny.
[[ "$ONLY" == targets && "$MODE" != tiny && $NO_PROFILE == 0 ]] && PROFILE=1
if [[ -z "$OUT" ]]; then
  if [[ "$MODE" == full && "$ONLY" != semantics && "$ONLY" != gallery ]]; then OUT=$REPO DATA=$REPO/tools/bench/results; else OUT=/tmp/scopedfs-bench-out; fi
fi
DATA=${DATA:-$OUT}
mkdir -p "$OUT" "$DATA"
OUT=$(cd "$OUT" && pwd)
DATA=$(cd "$DATA" && pwd)
REV=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
[[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] || REV+=" (with local changes)"

if [[ $(id -u) -ne 0 || ! -c /dev/fuse ]]; then
  echo "run.sh: needs root and /dev/fuse" >&2
  exit 77
fi

# The full and quick runs extract a real source tree and profile the daemon: Debian packages the
# test command does not need, so they are installed here, only when missing.
if [[ "$MODE" != tiny ]]; then
  for pkg in linux-source-6.1 linux-perf; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
  done
fi

if [[ -z "${SCOPEDFSD:-}" ]]; then
  # shellcheck disable=SC2086
  bazel ${BENCH_BAZEL_STARTUP:-} build -c opt //daemon:scopedfsd //tools:scopedfsctl \
    //tools/bench:metaops //policy:engine_benchmark //tests:media_samples >/dev/null 2>&1 ||
    bazel ${BENCH_BAZEL_STARTUP:-} build -c opt //daemon:scopedfsd //tools:scopedfsctl \
      //tools/bench:metaops //policy:engine_benchmark //tests:media_samples
  BIN=$(bazel ${BENCH_BAZEL_STARTUP:-} info -c opt bazel-bin 2>/dev/null)
  SCOPEDFSD=$BIN/daemon/scopedfsd SCOPEDFSCTL=$BIN/tools/scopedfsctl
  METAOPS=$BIN/tools/bench/metaops ENGINE_BENCH=$BIN/policy/engine_benchmark
  GPS_JPEG=$BIN/tests/media/gps.jpg
fi
CLEAN_JPEG=${CLEAN_JPEG:-$(dirname "$GPS_JPEG")/clean.jpg}
for b in "$SCOPEDFSD" "$SCOPEDFSCTL" "$METAOPS" "$ENGINE_BENCH" "$GPS_JPEG" "$CLEAN_JPEG"; do
  [[ -e "$b" ]] || { echo "run.sh: missing $b" >&2; exit 1; }
done

# BENCH_WORK_PREFIX names this run's work directory (the smoke test checks its own for leftovers).
work=$(mktemp -d "/tmp/${BENCH_WORK_PREFIX:-scopedfs-bench}.XXXXXX")
chmod 755 "$work"
mkdir -p "$work/stats"
on_exit() {
  local rc=$?
  bench_trace_stop
  bench_uring_restore
  bench_cleanup
  rm -rf "$work"
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# slice_tar <entries> <name>: the first <entries> entries of the cached drivers/ tar (the tree's
# shape at a fraction of its size), made once into the bench cache; prints its path.
slice_tar() {
  local n=$1 name=$2 full_tar out
  full_tar=$(bench_drivers_tar)
  out=$BENCH_CACHE/$name
  if [[ ! -s "$out.count" ]]; then
    rm -rf "$work/slice"
    mkdir -p "$work/slice"
    tar -tf "$full_tar" | awk -v n="$n" 'NR <= n && !/\/$/' >"$work/slice.list"
    tar -xf "$full_tar" -C "$work/slice" -T "$work/slice.list"
    tar -cf "$out" -C "$work/slice" drivers
    rm -rf "$work/slice"
    tar -tf "$out" | grep -vc '/$' >"$out.count"
  fi
  echo "$out"
}
case "$MODE" in
  # The targets run takes the first 15,000 entries: the ceiling (passthrough_ll) keeps an open fd
  # for every inode the kernel holds, and with names cached for a day the whole drivers/ tree
  # (31,595 files and their directories) passes this machine's hard limit of 20,000 fds: its
  # tar x then fails with EBADF/EMFILE. Every contender runs on the same slice.
  full) if [[ "$ONLY" == targets ]]; then TREE_TAR=$(slice_tar 15000 drivers-15k.tar); else TREE_TAR=$(bench_drivers_tar); fi ;;
  # A slice of drivers/ (the first 3,000 entries) keeps the shape of the real tree at a tenth of
  # the time.
  quick) TREE_TAR=$(slice_tar 3000 drivers-slice.tar) ;;
  tiny) TREE_TAR=$(bench_tiny_tar "$work" 300) ;;
esac
TREE_FILES=$(cat "$TREE_TAR.count")
chmod 755 "$(dirname "$TREE_TAR")"
chmod 644 "$TREE_TAR"

RESULTS=$DATA/results.tsv
REQUESTS=$DATA/requests.tsv
KREQUESTS=$DATA/kernel_requests.tsv
: >"$KREQUESTS"
bench_trace_start "$work" || echo "run.sh: no request counts from the kernel: $BENCH_TRACE_REASON" >&2
# The ceiling contender, built here from the example's source, never into the repository: libfuse
# master's passthrough_hp when a checkout is given (--libfuse=DIR or BENCH_LIBFUSE), else the
# passthrough_ll example of Debian's libfuse3-dev (no checkout in CI, which cannot fetch one).
CEILING=$work/passthrough_ll CEILING_REASON="" CEILING_KIND=ll
if [[ -n "$LIBFUSE" ]]; then
  CEILING_KIND=hp
  bench_build_ceiling_hp "$LIBFUSE" "$work/libfuse-build" "$work/ceiling-build.log" ||
    CEILING_REASON="passthrough_hp could not be built from $LIBFUSE: $(tail -1 "$work/ceiling-build.log")"
else
  bench_build_ceiling "$CEILING" "$work/ceiling-build.log" ||
    CEILING_REASON="passthrough_ll could not be built: $(tail -1 "$work/ceiling-build.log")"
fi
echo "bench: the ceiling is $([[ $CEILING_KIND == hp ]] && echo "libfuse's passthrough_hp from $LIBFUSE" || echo "Debian's passthrough_ll example")" >&2
ANDROID_STRICT=$REPO/policy/configs/android-strict.textproto
PROFILE_TXT=$DATA/profile.txt
: >"$RESULTS"
: >"$REQUESTS"
: >"$PROFILE_TXT"
declare -A VALUES FAILS NATIVE_COUNT

# record <contender> <workload> <value>: one measured figure.
record() { VALUES[$1|$2]+="$(printf '%.6f' "$3") "; }
# fail <contender> <workload> <reason>: the contender failed the workload (first reason wins).
fail() { [[ -n "${FAILS[$1|$2]:-}" ]] || FAILS[$1|$2]=$3; }
progress() {
  if [[ -t 2 ]]; then printf '\r\033[Kbench: run %s/%s  %-16s %s' "$RUN" "$RUNS" "$1" "$2" >&2
  else printf 'bench: %5.1f s  run %s/%s  %-16s %s\n' "$(echo "$(bench_now) - $START" | bc)" "$RUN" "$RUNS" "$1" "$2" >&2; fi
}
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

START=$(bench_now)
RUN=0
# --- The lower tree, once per suite run
lower=$work/lower
bench_mount_tmpfs "$lower" 6g
mkdir -p "$lower/Download" "$lower/DCIM/Camera"
# The fio file and the photo belong to the owner app (com.example.camera), as if it had made
# them through the mount. The photo: a real GPS-tagged JPEG's metadata, then filler (the parsers
# stop at the image data, so the redaction plan is the sample's whatever the size).
dd if=/dev/zero of="$lower/Download/fio.dat" bs=1M count="$FIO_MB" status=none
bench_own "$BENCH_OWNER_UID" "$lower/Download/fio.dat"
# Owned by the app as POSIX sees it too, so the app uid writes it under POSIX semantics.
chown "$BENCH_OWNER_UID:$BENCH_OWNER_UID" "$lower/Download/fio.dat"
photo=$lower/DCIM/Camera/big.jpg
cp "$GPS_JPEG" "$photo"
head -c $((FIO_MB * 1024 * 1024 - $(stat -c %s "$GPS_JPEG"))) /dev/urandom >>"$photo"
chmod 644 "$photo" "$lower/Download/fio.dat"
bench_own "$BENCH_OWNER_UID" "$photo"
mkdir -p "$lower/Download/meta"
"$METAOPS" create "$lower/Download/meta" "$META_FILES"
(cd "$lower/Download/meta" && find . -type f -print0 | xargs -0 setfattr -n trusted.scopedfs.owner -v "$BENCH_OWNER_UID")

# The gallery workload's camera folder: GALLERY_FILES photos the camera app took, half with GPS (the
# GPS sample's metadata) and half without (the clean sample's), each padded to 96 KiB with the same
# random bytes after the image (a gallery reads the first 64 KiB of each).
GALLERY_DIR=$lower/DCIM/Camera
python3 - "$GPS_JPEG" "$CLEAN_JPEG" "$GALLERY_DIR" "$GALLERY_FILES" "$BENCH_CAMERA_UID" <<'PY'
import os, sys
gps, clean, d, n, owner = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3], int(sys.argv[4]), sys.argv[5]
pad = os.urandom(96 * 1024)
for i in range(n):
    head = gps if i % 2 == 0 else clean
    path = os.path.join(d, "IMG_%05d.jpg" % i)
    with open(path, "wb") as f:
        f.write(head + pad[:max(0, 96 * 1024 - len(head))])
    os.chmod(path, 0o644)
    os.setxattr(path, "trusted.scopedfs.owner", owner.encode())
PY
GALLERY_COUNT=$(find "$GALLERY_DIR" -maxdepth 1 -type f | wc -l)

# The A/B of issue 11 (see the header): the permissive rules under ANDROID semantics, made from
# the permissive policy by changing nothing but its semantics line, and checked by the same
# validation a deployment would run.
PERMISSIVE_ANDROID=$work/permissive-android-semantics.textproto
sed 's/^semantics: SEMANTICS_POSIX$/semantics: SEMANTICS_ANDROID/' "$BENCH_PERMISSIVE" >"$PERMISSIVE_ANDROID"
grep -q '^semantics: SEMANTICS_ANDROID$' "$PERMISSIVE_ANDROID" ||
  { echo "run.sh: $BENCH_PERMISSIVE has no 'semantics: SEMANTICS_POSIX' line to change" >&2; exit 1; }
"$SCOPEDFSCTL" validate --policy="$PERMISSIVE_ANDROID" --apps="$BENCH_APPS" >/dev/null ||
  { echo "run.sh: scopedfsctl validate refused $PERMISSIVE_ANDROID" >&2; exit 1; }
# The app uid's own directory: under POSIX semantics an app may only write where the modes let it.
mkdir -p "$lower/Download/app"
chown "$BENCH_OWNER_UID:$BENCH_OWNER_UID" "$lower/Download/app"

# Every contender with the permissive rules lets the kernel keep POSIX locks (--posix_locks=kernel,
# docs/requests.md#flush), as libfuse's passthrough examples do: no close sends FLUSH.
# BENCH_PERMISSIVE_LOCKS=lower measures them as they were before (the daemon's locks, a FLUSH
# at every close).
PERMISSIVE_LOCKS=${BENCH_PERMISSIVE_LOCKS:-kernel}

# The A/B pairs (POSIX, ANDROID): every run has both members of a pair next to each other.
AB_PAIRS=("permissive permissive_android" "permissive_app permissive_android_app")
# The contenders of the metadata targets table, profiled where they miss (report.py's
# TARGET_GROUPS).
TARGET_CONTENDERS=(permissive permissive_uring android_owner android_owner_uring android_device_uring)
# The gallery workload's apps (they run nothing else): as a device mounts the storage (one user's
# mount), the gallery with ACCESS_MEDIA_LOCATION and the social app without it (redacted views).
GALLERY_CONTENDERS=(gallery_location gallery_redacted gallery_location_uring gallery_redacted_uring)
if [[ "$ONLY" == semantics ]]; then
  CONTENDERS=(native permissive permissive_android permissive_app permissive_android_app)
elif [[ "$ONLY" == targets ]]; then
  # permissive_nosys(_uring): the permissive mount answering xattrs as the ceiling does (ENOSYS),
  # beside it in the ceiling table on each transport (not a target row).
  CONTENDERS=(native ceiling ceiling_uring "${TARGET_CONTENDERS[@]}" permissive_nosys permissive_nosys_uring "${GALLERY_CONTENDERS[@]}" bindfs mergerfs)
elif [[ "$ONLY" == gallery ]]; then
  CONTENDERS=(native ceiling ceiling_uring "${GALLERY_CONTENDERS[@]}")
else
  CONTENDERS=(native ceiling ceiling_uring permissive permissive_noattr permissive_nosys permissive_android permissive_app
    permissive_android_app android_owner android_strict permissive_uring android_owner_uring android_device_uring
    "${GALLERY_CONTENDERS[@]}" redacted nopassthrough
    bindfs mergerfs)
fi
# BENCH_CONTENDERS="native android_device_uring ...": only these of the mode's contenders, for a
# quick A/B while working (BENCHMARKS.md is never written from such a run: pass --out).
if [[ -n ${BENCH_CONTENDERS:-} ]]; then
  if [[ "$OUT" == "$REPO" ]]; then
    echo "run.sh: BENCH_CONTENDERS needs --out=DIR (a partial run never writes BENCHMARKS.md)" >&2
    exit 2
  fi
  picked=()
  for c in $BENCH_CONTENDERS; do
    found=0
    for k in "${CONTENDERS[@]}"; do [[ $k == "$c" ]] && found=1; done
    if ((!found)); then
      echo "run.sh: BENCH_CONTENDERS names $c, which this mode does not run (${CONTENDERS[*]})" >&2
      exit 2
    fi
    picked+=("$c")
  done
  CONTENDERS=("${picked[@]}")
fi
declare -A LABEL=(
  [native]="native"
  [ceiling]="FUSE ceiling ($([[ $CEILING_KIND == hp ]] && echo "passthrough_hp, libfuse master" || echo "passthrough_ll"), cached)"
  [ceiling_uring]="FUSE ceiling (passthrough_hp, libfuse master, cached), io_uring"
  [gallery_location]="scopedfs android, gallery app (ACCESS_MEDIA_LOCATION), one user's mount"
  [gallery_redacted]="scopedfs android, app without location (redacted), one user's mount"
  [gallery_location_uring]="scopedfs android, gallery app (ACCESS_MEDIA_LOCATION), one user's mount, io_uring"
  [gallery_redacted_uring]="scopedfs android, app without location (redacted), one user's mount, io_uring"
  [android_strict]="scopedfs android strict, owner app"
  [permissive_noattr]="scopedfs permissive --xattr=noattr, root"
  [permissive_nosys]="scopedfs permissive --xattr=nosys, root"
  [permissive_uring]="scopedfs permissive, root, io_uring"
  [permissive_nosys_uring]="scopedfs permissive --xattr=nosys, root, io_uring"
  [android_owner_uring]="scopedfs android, owner app, io_uring"
  [android_device_uring]="scopedfs android, owner app, io_uring, one user's mount"
  [permissive]="scopedfs permissive, root"
  [permissive_android]="permissive rules, ANDROID semantics, root"
  [permissive_app]="scopedfs permissive, app uid"
  [permissive_android_app]="permissive rules, ANDROID semantics, app uid"
  [android_owner]="scopedfs android, owner app"
  [redacted]="scopedfs redacted reader"
  [nopassthrough]="scopedfs --passthrough=false"
  [bindfs]="bindfs"
  [mergerfs]="mergerfs"
)

# setup <contender>: mounts what the contender needs and sets DIR (its working directory), LDIR
# (the same directory in the lower tree), PHOTO, AS (the uid it acts as), PID and SOCK (scopedfsd
# only). Returns 1 with REASON when it cannot.
setup() {
  local c=$1 mnt=$work/mnt-$1 sub=Download
  DIR="" LDIR="" BASE="" PHOTO="" AS=0 PID="" SOCK="" REASON="" MNT=$mnt
  case "$c" in
    native) DIR=$lower/Download LDIR=$DIR BASE=$DIR PHOTO=$photo; return 0 ;;
    permissive | nopassthrough | permissive_android | permissive_app | permissive_android_app)
      SOCK=$work/ctl-$c
      local pt=true policy=$BENCH_PERMISSIVE
      [[ "$c" == nopassthrough ]] && pt=false
      [[ "$c" == permissive_android* ]] && policy=$PERMISSIVE_ANDROID
      [[ "$c" == *_app ]] && AS=$BENCH_OWNER_UID sub=Download/app
      BENCH_POSIX_LOCKS=$PERMISSIVE_LOCKS bench_start_scopedfsd "$SCOPEDFSD" "$lower" "$mnt" "$policy" "$pt" "$SOCK" \
        "$work/daemon-$c.log" || { REASON="scopedfsd did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      ;;
    permissive_noattr | permissive_nosys)
      SOCK=$work/ctl-$c
      BENCH_POSIX_LOCKS=$PERMISSIVE_LOCKS BENCH_XATTR=${c#permissive_} bench_start_scopedfsd "$SCOPEDFSD" "$lower" "$mnt" "$BENCH_PERMISSIVE" true "$SOCK" \
        "$work/daemon-$c.log" || { REASON="scopedfsd did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      ;;
    permissive_nosys_uring)
      bench_uring_usable "$SCOPEDFSD" "$URING_OK" || { REASON=$BENCH_URING_REASON; return 1; }
      SOCK=$work/ctl-$c
      BENCH_POSIX_LOCKS=$PERMISSIVE_LOCKS BENCH_XATTR=nosys BENCH_TRANSPORT=uring bench_start_scopedfsd "$SCOPEDFSD" "$lower" "$mnt" "$BENCH_PERMISSIVE" true "$SOCK" \
        "$work/daemon-$c.log" || { REASON="scopedfsd did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      ;;
    permissive_uring)
      bench_uring_usable "$SCOPEDFSD" "$URING_OK" || { REASON=$BENCH_URING_REASON; return 1; }
      SOCK=$work/ctl-$c
      BENCH_POSIX_LOCKS=$PERMISSIVE_LOCKS BENCH_TRANSPORT=uring bench_start_scopedfsd "$SCOPEDFSD" "$lower" "$mnt" "$BENCH_PERMISSIVE" true "$SOCK" \
        "$work/daemon-$c.log" || { REASON="scopedfsd did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      ;;
    ceiling)
      [[ -z "$CEILING_REASON" ]] || { REASON=$CEILING_REASON; return 1; }
      if [[ "$CEILING_KIND" == hp ]]; then
        bench_start_ceiling_hp "$lower" "$mnt" "$work/daemon-$c.log" 0 ||
          { REASON="passthrough_hp did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      else
        bench_start_ceiling "$CEILING" "$lower" "$mnt" "$work/daemon-$c.log" ||
          { REASON="passthrough_ll did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      fi
      ;;
    ceiling_uring)
      [[ "$CEILING_KIND" == hp ]] || { REASON="n/a: needs a libfuse checkout (run.sh --libfuse=DIR): Debian's libfuse 3.14 has no io_uring"; return 1; }
      [[ -z "$CEILING_REASON" ]] || { REASON=$CEILING_REASON; return 1; }
      bench_uring_usable "$SCOPEDFSD" "$URING_OK" || { REASON=$BENCH_URING_REASON; return 1; }
      bench_start_ceiling_hp "$lower" "$mnt" "$work/daemon-$c.log" 1 ||
        { REASON="passthrough_hp did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      ;;
    gallery_*)
      SOCK=$work/ctl-$c
      local transport=dev
      if [[ "$c" == *_uring ]]; then
        bench_uring_usable "$SCOPEDFSD" "$URING_OK" || { REASON=$BENCH_URING_REASON; return 1; }
        transport=uring
      fi
      BENCH_ONE_USER=1 BENCH_TRANSPORT=$transport bench_start_scopedfsd "$SCOPEDFSD" "$lower" "$mnt" "$BENCH_ANDROID" true "$SOCK" \
        "$work/daemon-$c.log" || { REASON="scopedfsd did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      AS=$BENCH_GALLERY_UID
      [[ "$c" == gallery_redacted* ]] && AS=$BENCH_REDACTED_UID
      ;;
    android_owner | redacted | android_strict | android_owner_uring | android_device_uring)
      SOCK=$work/ctl-$c
      local policy=$BENCH_ANDROID transport=${SCOPEDFSD_TRANSPORT:-} one_user=""
      # As a device mounts it: a mount only one user's apps reach (vold's per-user mounts), so
      # attributes of names every app of the user finds are cached.
      [[ "$c" == android_device_uring ]] && one_user=1
      if [[ "$c" == android_strict ]]; then
        [[ -f "$ANDROID_STRICT" ]] || { REASON="n/a: $ANDROID_STRICT is missing (strict visibility has not landed)"; return 1; }
        policy=$ANDROID_STRICT
      fi
      if [[ "$c" == *_uring ]]; then
        bench_uring_usable "$SCOPEDFSD" "$URING_OK" || { REASON=$BENCH_URING_REASON; return 1; }
        transport=uring
      fi
      BENCH_ONE_USER=$one_user BENCH_TRANSPORT=$transport bench_start_scopedfsd "$SCOPEDFSD" "$lower" "$mnt" "$policy" true "$SOCK" \
        "$work/daemon-$c.log" || { REASON="scopedfsd did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      AS=$BENCH_OWNER_UID
      [[ "$c" == redacted ]] && AS=$BENCH_REDACTED_UID
      ;;
    bindfs)
      command -v bindfs >/dev/null || { REASON="bindfs is not installed"; return 1; }
      bench_start_bindfs "$lower" "$mnt" "$work/daemon-$c.log" || { REASON="bindfs did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      ;;
    mergerfs)
      command -v mergerfs >/dev/null || { REASON="mergerfs is not installed"; return 1; }
      bench_start_mergerfs "$lower" "$mnt" "$work/daemon-$c.log" || { REASON="mergerfs did not mount: $(tail -1 "$work/daemon-$c.log")"; return 1; }
      ;;
  esac
  PID=$BENCH_LAST_PID DIR=$mnt/$sub LDIR=$lower/$sub BASE=$mnt/Download PHOTO=$mnt/DCIM/Camera/big.jpg
}

teardown() {
  [[ -n "$PID" ]] || return 0
  kill -0 "$PID" 2>/dev/null || DIED="its daemon died"
  bench_stop "$PID" "$MNT"
  PID=""
}

# stats_json: the daemon's counters, or {} for contenders without a control socket.
stats_json() {
  if [[ -n "$SOCK" ]]; then "$SCOPEDFSCTL" --socket="$SOCK" stats --json 2>/dev/null || echo '{}'; else echo '{}'; fi
}
# stats_mark <contender> <step> <before|after>: saves the daemon's counters around a measured step
# of the first run (their difference is the step's requests).
stats_mark() { if [[ "$RUN" == 1 && -n "$SOCK" ]]; then stats_json >"$work/stats/$1|$2|$3"; fi; }
# stats_calls <contender> <step> <n>: how many calls the step made, where they are not the tree's
# files (fio jobs, metaops calls); requests.tsv gets them as the pseudo-op "_calls".
stats_calls() { if [[ "$RUN" == 1 && -n "$SOCK" ]]; then echo "$3" >"$work/stats/$1|$2|calls"; fi; }
# requests_per_step: FUSE requests per op of each measured step, from the counters saved around it
# in $work/stats ("contender|step|before" and "...|after"), one line each into $REQUESTS.
requests_per_step() {
  python3 - "$work/stats" >"$REQUESTS" <<'PY'
import json, os, sys
d = sys.argv[1]
def ops(path):
    try:
        with open(path) as f:
            return {o["op"]: int(o.get("count", 0)) for o in json.load(f).get("ops", [])}
    except (OSError, ValueError):
        return {}
for name in sorted(os.listdir(d), key=lambda n: os.path.getmtime(os.path.join(d, n))):
    c, step, when = name.split("|")
    if when != "after":
        continue
    before, after = ops(os.path.join(d, "%s|%s|before" % (c, step))), ops(os.path.join(d, name))
    for op in sorted(after):
        if after[op] - before.get(op, 0):
            print("%s\t%s\t%s\t%d" % (c, step, op, after[op] - before.get(op, 0)))
    try:
        with open(os.path.join(d, "%s|%s|calls" % (c, step))) as f:
            print("%s\t%s\t_calls\t%d" % (c, step, int(float(f.read().strip()))))
    except (OSError, ValueError):
        pass
PY
}

# fio_mbps <file> <rw> <bs>: MB/s of one pass over the whole file as $AS, or the reason it failed.
fio_mbps() {
  local out
  out=$(bench_as "$AS" fio --name=b --filename="$1" --rw="$2" --bs="$3" --size="${FIO_MB}M" \
    --ioengine=psync --invalidate=0 --disk_util=0 --output-format=terse --terse-version=3 2>&1) ||
    { echo "fio: $(grep -m1 -i 'err\|fio:' <<<"$out" || echo "$out" | tail -1)"; return 1; }
  awk -F';' -v rw="$2" 'NF > 48 { if (rw ~ /write/) print $48 / 1024; else print $7 / 1024 }' <<<"$out"
}

FIO_JOBS=("read 4k" "randread 4k" "write 4k" "randwrite 4k" "read 1m" "randread 1m" "write 1m" "randwrite 1m")
META_OPS=(open stat)
# The targets run: only the 4 KiB jobs and open+close are in the table.
[[ "$ONLY" == targets ]] && FIO_JOBS=("${FIO_JOBS[@]:0:4}") META_OPS=(open)

# run_fio <contender>: every fio job in one fio process (jobs run one after another, stonewall),
# so fio's start-up is paid once. One terse line per job: field 5 is its error, 7 and 48 its
# read and write KB/s.
run_fio() {
  local c=$1 job rw bs w v file=$BASE/fio.dat args=() names=() out err i=0
  [[ "$c" == redacted ]] && file=$PHOTO
  for job in "${FIO_JOBS[@]}"; do
    read -r rw bs <<<"$job"
    w="fio $rw $bs"
    if [[ "$c" == redacted && "$rw" == *write* ]]; then fail "$c" "$w" "n/a: a redacted reader may not write another app's photo"; continue; fi
    args+=(--name="$rw-$bs" --rw="$rw" --bs="$bs")
    # The smoke run only needs each job to produce a figure: its jobs run at once.
    [[ "$MODE" == tiny ]] || args+=(--stonewall)
    names+=("$w")
  done
  local timing=()
  if [[ "$FIO_RT" != 0 ]]; then timing=(--time_based --runtime="$FIO_RT" --ramp_time="$FIO_RAMP"); fi
  progress "$c" "fio (${#names[@]} jobs)"
  stats_mark "$c" fio before
  stats_calls "$c" fio "${#names[@]}"
  if ! out=$(bench_as "$AS" fio --filename="$file" --size="${FIO_MB}M" --ioengine=psync --invalidate=0 --disk_util=0 \
    "${timing[@]}" --output-format=terse --terse-version=3 "${args[@]}" 2>"$work/fio.err"); then
    stats_mark "$c" fio after
    err="fio: $(grep -m1 . "$work/fio.err" || echo "exit status $?")"
    for w in "${names[@]}"; do fail "$c" "$w" "$err"; done
    return 0
  fi
  stats_mark "$c" fio after
  while IFS=';' read -r -a f; do
    ((${#f[@]} > 48)) || continue
    w=${names[$i]}
    i=$((i + 1))
    if [[ "${f[4]}" != 0 ]]; then fail "$c" "$w" "fio error ${f[4]}: $(grep -m1 . "$work/fio.err")"; continue; fi
    if [[ "$w" == *write* ]]; then v=${f[47]}; else v=${f[6]}; fi
    record "$c" "$w" "$(echo "scale=3; $v / 1024" | bc)"
  done <<<"$out"
}

run_photo() {  # cold and warm sequential read (128 KiB) of the GPS-tagged photo
  local c=$1 v
  progress "$c" "photo read cold"
  drop_caches
  if v=$(fio_mbps "$PHOTO" read 128k); then record "$c" "photo read cold" "$v"; else fail "$c" "photo read cold" "$v"; fi
  progress "$c" "photo read warm"
  if v=$(fio_mbps "$PHOTO" read 128k); then record "$c" "photo read warm" "$v"; else fail "$c" "photo read warm" "$v"; fi
}

run_meta() {
  local c=$1 m v
  for m in "${META_OPS[@]}"; do
    local w="$m rate"
    [[ "$m" == open ]] && w="open+close rate"
    if [[ "$c" == redacted ]]; then fail "$c" "$w" "n/a: the files are the owner's documents, hidden from this reader"; continue; fi
    progress "$c" "$w"
    stats_mark "$c" "$w" before
    # metaops prints the rate on stdout and "calls N" on stderr.
    if v=$(bench_as "$AS" "$METAOPS" "$m" "$BASE/meta" "$META_FILES" "$META_SECONDS" 2>"$work/meta.err"); then
      stats_mark "$c" "$w" after
      stats_calls "$c" "$w" "$(awk '$1 == "calls" { print $2 }' "$work/meta.err")"
      record "$c" "$w" "$v"
    else
      fail "$c" "$w" "$(tail -1 "$work/meta.err")"
    fi
  done
}

TREE_STEPS=("tar x" "files seen" "ls -lR cold" "ls -lR warm" "find -size" "grep -r" "du -s" "rm -rf")

# timed <contender> <step> <cmd...>: runs cmd as $AS, records its seconds or its failure.
# Output goes to $work/step.out, errors to $work/step.err.
timed() {
  local c=$1 step=$2 t0 t1 rc=0
  shift 2
  progress "$c" "$step"
  stats_mark "$c" "$step" before
  [[ "$RUN" == 1 && "$c" != native ]] && bench_trace_begin "$MNT"
  t0=$(bench_now)
  bench_as "$AS" "$@" >"$work/step.out" 2>"$work/step.err" || rc=$?
  t1=$(bench_now)
  [[ "$RUN" == 1 && "$c" != native ]] && bench_trace_end "$c" "$step" >>"$KREQUESTS"
  stats_mark "$c" "$step" after
  if ((rc != 0)) && ! [[ "$step" == "grep -r" && $rc == 1 ]]; then
    fail "$c" "$step" "exit $rc: $(head -c 200 "$work/step.err" | head -1)"
    return 1
  fi
  record "$c" "$step" "$(echo "$t1 - $t0" | bc)"
}

run_tree() {
  local c=$1 t=$DIR/tree-$RUN step seen broken=""
  if [[ "$c" == redacted ]]; then
    for step in "${TREE_STEPS[@]}"; do fail "$c" "$step" "n/a: a reader of another app's photos; the tree is the owner's"; done
    return 0
  fi
  bench_as "$AS" mkdir "$t"
  timed "$c" "tar x" tar -x --no-same-owner -f "$TREE_TAR" -C "$t" || true
  progress "$c" "files seen"
  seen=$(bench_as "$AS" find "$t" ! -type d 2>/dev/null | wc -l)
  if [[ "$seen" == "$TREE_FILES" ]]; then
    record "$c" "files seen" "$seen"
  else
    fail "$c" "files seen" "saw $seen of $TREE_FILES files"
    broken="the tree is incomplete ($seen of $TREE_FILES files)"
  fi
  drop_caches
  timed "$c" "ls -lR cold" ls -lR "$t" || true
  timed "$c" "ls -lR warm" ls -lR "$t" || true
  if timed "$c" "find -size" find "$t" -size +16k; then
    local n
    n=$(wc -l <"$work/step.out")
    if [[ "$c" == native ]]; then NATIVE_COUNT[find]=$n
    elif [[ "$n" != "${NATIVE_COUNT[find]:-}" ]]; then fail "$c" "find -size" "found $n files, native ${NATIVE_COUNT[find]:-?}"; fi
  fi
  timed "$c" "grep -r" grep -r -c -F kmalloc "$t" || true
  timed "$c" "du -s" du -s "$t" || true
  timed "$c" "rm -rf" rm -rf "$t" || true
  [[ -e "$LDIR/tree-$RUN" ]] && { fail "$c" "rm -rf" "the tree is still there"; rm -rf "$LDIR/tree-$RUN"; }
  if [[ -n "$broken" ]]; then
    for step in "${TREE_STEPS[@]}"; do [[ "$step" == "files seen" ]] || fail "$c" "$step" "$broken"; done
  fi
}

GALLERY_STEPS=("gallery cold" "gallery warm")
WORKLOADS=("${FIO_JOBS[@]/#/fio }" "photo read cold" "photo read warm" "open+close rate" "stat rate" "${TREE_STEPS[@]}" "${GALLERY_STEPS[@]}")
[[ "$ONLY" == targets ]] && WORKLOADS=("${FIO_JOBS[@]/#/fio }" "open+close rate" "${TREE_STEPS[@]}" "${GALLERY_STEPS[@]}")
[[ "$ONLY" == gallery ]] && WORKLOADS=("${GALLERY_STEPS[@]}")

# run_gallery <contender>: the gallery workload (metaops gallery): the app lists DCIM/Camera,
# stats every photo and reads its first 64 KiB, once after dropping the caches (cold) and once
# again (warm). Run for native, the ceilings and the gallery apps; every photo must be read
# (another count is a failure: an app shown fewer photos than native does not do the same work).
run_gallery() {
  local c=$1 step v calls
  case "$c" in
    native | ceiling | ceiling_uring | gallery_*) ;;
    *) for step in "${GALLERY_STEPS[@]}"; do fail "$c" "$step" "n/a: run by native, the ceilings and the gallery apps"; done; return 0 ;;
  esac
  [[ "$c" == native || "$c" == ceiling* ]] && AS=$BENCH_GALLERY_UID
  for step in "${GALLERY_STEPS[@]}"; do
    [[ "$step" == "gallery cold" ]] && drop_caches
    progress "$c" "$step"
    stats_mark "$c" "$step" before
    [[ "$RUN" == 1 && "$c" != native ]] && bench_trace_begin "$MNT"
    if v=$(bench_as "$AS" "$METAOPS" gallery "$(dirname "$PHOTO")" 64 2>"$work/gallery.err"); then
      [[ "$RUN" == 1 && "$c" != native ]] && bench_trace_end "$c" "$step" >>"$KREQUESTS"
      stats_mark "$c" "$step" after
      calls=$(awk '$1 == "calls" { print $2 }' "$work/gallery.err")
      stats_calls "$c" "$step" "$calls"
      if [[ "$calls" == "$GALLERY_COUNT" ]]; then record "$c" "$step" "$v"
      else fail "$c" "$step" "read $calls of $GALLERY_COUNT photos"; fi
    else
      [[ "$RUN" == 1 && "$c" != native ]] && bench_trace_end "$c" "$step" >/dev/null
      stats_mark "$c" "$step" after
      fail "$c" "$step" "$(tail -1 "$work/gallery.err")"
    fi
  done
}

run_engine() {
  progress policy "decision microbenchmark"
  local out
  if out=$("$ENGINE_BENCH" --policy="$REPO/$BENCH_ANDROID" --benchmark_filter='BM_DecideMix$' \
    --benchmark_repetitions="$RUNS" --benchmark_min_time="$([[ $MODE == tiny ]] && echo 0.01 || echo 0.5)" \
    --benchmark_format=json 2>/dev/null); then
    python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    if b.get("run_type") == "iteration":
        print(b["real_time"] if b["time_unit"] == "ns" else b["real_time"] * 1000)' <<<"$out" |
      while read -r v; do echo "$v"; done >"$work/engine.txt"
    while read -r v; do record policy_engine "decision (mix)" "$v"; done <"$work/engine.txt"
  else
    fail policy_engine "decision (mix)" "engine_benchmark failed"
  fi
}

# run_order: the contenders of run $RUN, each A/B pair's members next to each other, A first in
# odd runs and B first in even ones.
run_order() {
  local c pair a b
  for c in "${CONTENDERS[@]}"; do
    for pair in "${AB_PAIRS[@]}"; do
      read -r a b <<<"$pair"
      if ((RUN % 2 == 0)); then
        [[ "$c" == "$a" ]] && c=$b || { [[ "$c" == "$b" ]] && c=$a; }
      fi
    done
    echo "$c"
  done
}

# --- The runs: every contender in each run, so drift on a shared machine hits them alike.
for ((RUN = 1; RUN <= RUNS; RUN++)); do
  for c in $(run_order); do
    DIED=""
    if ! setup "$c"; then
      for w in "${WORKLOADS[@]}"; do fail "$c" "$w" "$REASON"; done
      continue
    fi
    if [[ "$ONLY" != gallery && "$c" != gallery_* ]]; then
      run_fio "$c"
      [[ "$ONLY" == targets ]] || run_photo "$c"
      run_meta "$c"
      run_tree "$c"
    elif [[ "$ONLY" != gallery ]]; then
      for w in "${WORKLOADS[@]}"; do
        [[ "$w" == gallery* ]] || fail "$c" "$w" "n/a: the gallery apps run the gallery workload only"
      done
    fi
    run_gallery "$c"
    teardown
    if [[ -n "$DIED" ]]; then fail "$c" "fio read 4k" "$DIED"; fi
  done
done
RUN=$RUNS
if [[ -n "$ONLY" ]]; then
  fail policy_engine "decision (mix)" "n/a: not measured by --only=$ONLY"
else
  run_engine
fi
requests_per_step

# --- Results: one line per (contender, workload): OK with every run's figure, or FAILED.
units() {
  case "$1" in
    fio* | photo*) echo "MB/s" ;;
    *rate) echo "ops/s" ;;
    "files seen") echo "files" ;;
    decision*) echo "ns" ;;
    *) echo "s" ;;
  esac
}
for c in "${CONTENDERS[@]}" policy_engine; do
  ws=("${WORKLOADS[@]}")
  [[ "$c" == policy_engine ]] && ws=("decision (mix)")
  for w in "${ws[@]}"; do
    if [[ "${FAILS[$c|$w]:-}" == n/a* ]]; then
      printf '%s\t%s\t%s\tNA\t%s\n' "$c" "$w" "$(units "$w")" "${FAILS[$c|$w]#n/a: }"
    elif [[ -n "${FAILS[$c|$w]:-}" ]]; then
      printf '%s\t%s\t%s\tFAILED\t%s\n' "$c" "$w" "$(units "$w")" "${FAILS[$c|$w]}"
    elif [[ -n "${VALUES[$c|$w]:-}" ]]; then
      printf '%s\t%s\t%s\tOK\t%s\n' "$c" "$w" "$(units "$w")" "${VALUES[$c|$w]% }"
    else
      printf '%s\t%s\t%s\tFAILED\t%s\n' "$c" "$w" "$(units "$w")" "no figure was produced"
    fi
  done
done >"$RESULTS"

# --- Where the time goes: one more, untimed pass of some steps with the daemon under perf (perf
# here samples a command it starts, not one it attaches to with -p, so each step gets a daemon).
profile_step() {  # profile_step <contender> <step> <cmd...>: runs cmd as $AS under a profiled daemon
  local c=$1 step=$2 child
  shift 2
  progress "$c" "perf: $step"
  BENCH_WRAP=(perf record -q -e cpu-clock -F 999 -o "$work/perf.data" --)
  setup "$c" || { BENCH_WRAP=(); return 0; }
  BENCH_WRAP=()
  bench_as "$AS" "$@" >/dev/null 2>&1 || true
  child=$(pgrep -P "$PID" | head -1 || true)
  [[ -n "$child" ]] && kill -TERM "$child"
  wait "$PID" 2>/dev/null || true
  teardown
  {
    echo "== $c | $step"
    perf report -i "$work/perf.data" --no-children --sort dso,symbol --stdio 2>&1 |
      grep -v '^#' | grep -v '^$' | sed 's/[ -]*$//; s/   */  /g' | head -14 || true
  } >>"$PROFILE_TXT"
}
if ((PROFILE)) && [[ -z "$ONLY" ]] && command -v perf >/dev/null; then
  for c in permissive android_owner; do
    AS=0
    [[ "$c" == android_owner ]] && AS=$BENCH_OWNER_UID
    t=$lower/Download/tree-prof
    rm -rf "$t"
    mkdir -p "$t"
    chown "$AS" "$t"
    bench_own "$AS" "$t"
    profile_step "$c" "tar x" tar -x --no-same-owner -f "$TREE_TAR" -C "$work/mnt-$c/Download/tree-prof"
    profile_step "$c" "ls -lR twice (cold, then warm)" sh -c "ls -lR '$work/mnt-$c/Download/tree-prof'; ls -lR '$work/mnt-$c/Download/tree-prof'"
    profile_step "$c" "stat rate" "$METAOPS" stat "$work/mnt-$c/Download/meta" "$META_FILES" 2
    rm -rf "$t"
  done
fi
# --- Per-row profiles of the targets run: every (target contender, step) that missed its goal in
# the timed runs above gets one more, untimed pass of that step under a system-wide profile, so
# the app's, the daemon's and the kernel's shares of the time all show (perf of the daemon alone
# sees mostly its own context switches). The other steps of the pass run unprofiled, only to put
# the tree in the state the profiled step expects (tar x before ls, drop_caches before ls cold).
PROFILES=""
if [[ "$ONLY" == targets ]]; then
  PROFILES=$DATA/profiles.tsv
  : >"$PROFILES"
fi
PERF_HZ=499  # 2 CPUs x 499 Hz: ~1,000 samples a second, little enough that perf itself stays small
# BENCH_PROFILE_MAX, when set, profiles only that many rows (the CI smoke run); the others run
# plainly and details.md says they were not profiled.
PROFILES_LEFT=${BENCH_PROFILE_MAX:--1}
# perf_row <contender> <step> <app> <cmd...>: runs cmd as $AS under `perf record -a`, appends the
# summary (report.py --profile-summary, from perf script) to $PROFILES; <app> is the command's
# name (its comm), $PID the contender's daemon.
perf_row() {
  local c=$1 step=$2 app=$3 t0 t1 as=()
  shift 3
  if ((PROFILES_LEFT == 0)); then
    bench_as "$AS" "$@" >/dev/null 2>&1 || true
    return 0
  fi
  ((PROFILES_LEFT > 0)) && PROFILES_LEFT=$((PROFILES_LEFT - 1))
  progress "$c" "perf -a: $step"
  [[ "$AS" == 0 ]] || as=(setpriv --reuid="$AS" --regid="$AS" --clear-groups)
  t0=$(bench_now)
  perf record -a -e cpu-clock -F "$PERF_HZ" -q -o "$work/perf.data" -- ${as[@]+"${as[@]}"} "$@" \
    >/dev/null 2>"$work/perf.err" || true
  t1=$(bench_now)
  perf script -i "$work/perf.data" -F pid,comm,ip,sym,dso 2>/dev/null |
    python3 tools/bench/report.py --profile-summary --contender="$c" --step="$step" --app="$app" --daemon-pid="$PID" \
      --seconds="$(echo "$t1 - $t0" | bc)" --error="$(grep -m1 -v '^$' "$work/perf.err" 2>/dev/null || true)" \
      >>"$PROFILES" || echo "run.sh: no profile summary for $c / $step" >&2
  rm -f "$work/perf.data" "$work/perf.data.old"
}
# plain_or_perf <contender> <step> <app> <cmd...>: the step under perf when it missed, else plainly.
plain_or_perf() {
  if [[ -n "${MISSED[$1|$2]:-}" ]]; then perf_row "$@"; else
    progress "$1" "(for the profiles) $2"
    shift 3
    bench_as "$AS" "$@" >/dev/null 2>&1 || true
  fi
}
profile_targets() {
  local c w t job rw bs want step app cmd
  declare -gA MISSED=()
  while IFS=$'\t' read -r c w; do [[ -n "$c" ]] && MISSED[$c|$w]=1; done \
    < <(python3 tools/bench/report.py --misses --results="$RESULTS")
  ((${#MISSED[@]} > 0)) || return 0
  RUN=profile
  for c in "${TARGET_CONTENDERS[@]}"; do
    want=""
    for w in "${WORKLOADS[@]}"; do [[ -n "${MISSED[$c|$w]:-}" ]] && want=1; done
    [[ -n "$want" ]] || continue
    setup "$c" || { echo "run.sh: no profiles of $c: $REASON" >&2; continue; }
    for job in "${FIO_JOBS[@]}"; do
      read -r rw bs <<<"$job"
      [[ -n "${MISSED[$c|fio $rw $bs]:-}" ]] || continue
      local timing=()
      [[ "$FIO_RT" != 0 ]] && timing=(--time_based --runtime="$FIO_RT" --ramp_time="$FIO_RAMP")
      perf_row "$c" "fio $rw $bs" fio fio --name="$rw-$bs" --rw="$rw" --bs="$bs" --filename="$BASE/fio.dat" \
        --size="${FIO_MB}M" --ioengine=psync --invalidate=0 --disk_util=0 "${timing[@]}" --output-format=terse
    done
    if [[ -n "${MISSED[$c|open+close rate]:-}" ]]; then
      perf_row "$c" "open+close rate" metaops "$METAOPS" open "$BASE/meta" "$META_FILES" "$META_SECONDS"
    fi
    want=""
    for w in "${TREE_STEPS[@]}"; do [[ -n "${MISSED[$c|$w]:-}" ]] && want=1; done
    if [[ -n "$want" ]]; then
      # Unprofiled steps run only where a later one needs them: tar x makes the tree, a cold
      # ls -lR makes the warm one warm; an unprofiled rm -rf is done in the lower tree.
      t=$DIR/tree-prof
      bench_as "$AS" mkdir "$t"
      plain_or_perf "$c" "tar x" tar tar -x --no-same-owner -f "$TREE_TAR" -C "$t"
      drop_caches
      if [[ -n "${MISSED[$c|ls -lR cold]:-}${MISSED[$c|ls -lR warm]:-}" ]]; then
        plain_or_perf "$c" "ls -lR cold" ls ls -lR "$t"
      fi
      for w in "ls -lR warm:ls:ls -lR" "find -size:find:find $t -size +16k" \
        "grep -r:grep:grep -r -c -F kmalloc $t" "du -s:du:du -s $t" "rm -rf:rm:rm -rf $t"; do
        IFS=: read -r step app cmd <<<"$w"
        [[ "$step" == "ls -lR warm" ]] && cmd="ls -lR $t"
        # shellcheck disable=SC2086  # cmd is split into words on purpose; $t has no spaces
        if [[ -n "${MISSED[$c|$step]:-}" ]]; then perf_row "$c" "$step" "$app" $cmd; fi
      done
      rm -rf "$LDIR/tree-prof"
    fi
    teardown
  done
}
if ((PROFILE)) && [[ "$ONLY" == targets ]]; then
  if command -v perf >/dev/null; then profile_targets
  else echo "run.sh: perf is not installed (linux-perf): no per-row profiles" >&2; fi
fi

END=$(bench_now)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
[[ -t 2 ]] && printf '\r\033[K' >&2

python3 tools/bench/report.py --results="$RESULTS" --requests="$REQUESTS" --profile="$PROFILE_TXT" \
  --out="$OUT" --data="$DATA" --rev="$REV" --load="$LOAD" --mode="$MODE" --runs="$RUNS" --tree_files="$TREE_FILES" --tree="$(basename "$TREE_TAR")" \
  --fio_mb="$FIO_MB" --fio_runtime="$FIO_RT" --seconds="$(echo "$END - $START" | bc)" --only="$ONLY" \
  --kernel-requests="$KREQUESTS" --profiles="$PROFILES" --gallery_files="$GALLERY_COUNT" --labels="$(for c in "${CONTENDERS[@]}"; do printf '%s=%s;' "$c" "${LABEL[$c]}"; done)"
wrote="$OUT/BENCHMARKS.md"
case "$ONLY" in
  targets) wrote+=" and $DATA/details.md" ;;
  gallery | semantics) ;;
  *) wrote+=" and $DATA/benchmarks.png" ;;
esac
echo "bench: wrote $wrote ($(printf '%.0f' "$(echo "$END - $START" | bc)") s)" >&2
