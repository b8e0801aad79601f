# Shared pieces of the benchmark scripts in tools/bench/: starting scopedfsd, bindfs and mergerfs
# on one lower tree, stopping exactly what was started (by pid, on any exit), acting as an app uid,
# and the source-tree cache. Sourced, never run. Needs root and /dev/fuse.

BENCH_APPS=policy/configs/apps.textproto
BENCH_ANDROID=policy/configs/android.textproto
BENCH_PERMISSIVE=policy/configs/permissive.textproto
# The uids the suite acts as (policy/configs/apps.textproto).
BENCH_OWNER_UID=10067     # com.example.notes: owns the files it makes in Download/
BENCH_CAMERA_UID=10065    # com.example.camera: owns the GPS-tagged photo
BENCH_REDACTED_UID=10062  # com.example.social: images without ACCESS_MEDIA_LOCATION
BENCH_GALLERY_UID=10061   # com.example.gallery: images with ACCESS_MEDIA_LOCATION

# Every daemon we start (pid) and every mount we make, undone by bench_cleanup.
BENCH_PIDS=()
BENCH_MOUNTS=()

bench_cleanup() {
  local pid m i
  for pid in "${BENCH_PIDS[@]}"; do
    [[ -n "$pid" ]] || continue
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  BENCH_PIDS=()
  # Innermost (last) first.
  for ((i = ${#BENCH_MOUNTS[@]} - 1; i >= 0; i--)); do
    m=${BENCH_MOUNTS[$i]}
    if grep -q " $m " /proc/self/mounts; then umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; fi
  done
  BENCH_MOUNTS=()
}

bench_is_mounted() { grep -q " $1 " /proc/self/mounts; }

# bench_wait_mount <dir> <pid> <log>: waits up to 10 s for <dir> to be mounted by <pid>.
bench_wait_mount() {
  local i
  for i in $(seq 200); do
    bench_is_mounted "$1" && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.05
  done
  echo "mount of $1 did not appear; log:" >&2
  tail -5 "$3" >&2
  return 1
}

# bench_mount_tmpfs <dir> <size>
bench_mount_tmpfs() {
  mkdir -p "$1"
  mount -t tmpfs -o "size=$2,nr_inodes=4m,mode=755" tmpfs "$1"
  BENCH_MOUNTS+=("$1")
}

# bench_start_scopedfsd <daemon> <lower> <mnt> <policy> <passthrough> <socket> <log>: starts the
# daemon in the background; BENCH_LAST_PID is its pid.
BENCH_WRAP=()
bench_start_scopedfsd() {
  mkdir -p "$3"
  BENCH_MOUNTS+=("$3")
  # BENCH_WRAP (an array, e.g. perf record ... --) runs the daemon under a wrapper; the pid is
  # then the wrapper's.
  # BENCH_TRANSPORT (else SCOPEDFSD_TRANSPORT), when set, is passed on as --transport=.
  # BENCH_XATTR, when set, is passed on as --xattr=.
  # Without either, a daemon that has transports is told --transport=dev: once a *_uring
  # contender has turned enable_uring on, auto would serve every later contender over io_uring.
  local transport=${BENCH_TRANSPORT:-${SCOPEDFSD_TRANSPORT:-}} extra=()
  [[ -z "$transport" ]] && bench_has_transport_flag "$1" && transport=dev
  [[ -n "$transport" ]] && extra+=("--transport=$transport")
  [[ -n "${BENCH_XATTR:-}" ]] && extra+=("--xattr=$BENCH_XATTR")
  # BENCH_POSIX_LOCKS, when set, is passed on as --posix_locks=.
  [[ -n "${BENCH_POSIX_LOCKS:-}" ]] && extra+=("--posix_locks=$BENCH_POSIX_LOCKS")
  # BENCH_ONE_USER=1 passes --mount_reached_by_one_user (a mount only one user's apps reach).
  [[ -n "${BENCH_ONE_USER:-}" ]] && extra+=("--mount_reached_by_one_user")
  ${BENCH_WRAP[@]+"${BENCH_WRAP[@]}"} "$1" --source="$2" --mountpoint="$3" --policy="$4" --apps="$BENCH_APPS" \
    --passthrough="$5" --control_socket="$6" ${extra[@]+"${extra[@]}"} 2>>"$7" &
  BENCH_LAST_PID=$!
  BENCH_PIDS+=("$BENCH_LAST_PID")
  bench_wait_mount "$3" "$BENCH_LAST_PID" "$7"
}

# --- The ceiling: libfuse's passthrough_ll example at its most cached ---------------------------
# bench_build_ceiling <binary> <log>: compiles the example Debian's libfuse3-dev ships into
# <binary> (the work directory: never into the repository).
bench_build_ceiling() {
  local examples=/usr/share/doc/libfuse3-dev/examples src=${1}-src f
  mkdir -p "$src"
  for f in passthrough_ll.c passthrough_helpers.h; do
    if [[ -f "$examples/$f" ]]; then cp "$examples/$f" "$src/"
    elif [[ -f "$examples/$f.gz" ]]; then zcat "$examples/$f.gz" >"$src/$f"
    else echo "libfuse3-dev's examples/$f is not installed" >"$2"; return 1; fi
  done
  # shellcheck disable=SC2046
  gcc -O2 -w -I"$src" -o "$1" "$src/passthrough_ll.c" $(pkg-config --cflags --libs fuse3) >"$2" 2>&1
}
# bench_start_ceiling <binary> <lower> <mnt> <log>: the most cached of the example's options
# (its lo_opts in libfuse 3.14): cache=always (the page cache and the listing cache kept across
# opens: FOPEN_KEEP_CACHE, FOPEN_CACHE_DIR), timeout=86400 (names and attributes cached for a
# day), writeback (the kernel's write-back cache), no xattr (its default: ENOSYS, so the kernel
# stops asking), READDIRPLUS (libfuse's default), multithreaded as scopedfsd. Its remaining
# options cache nothing more (flock; clone_fd made no clear difference here). BENCHMARKS.md's
# contender list says the same (report.py's CONTENDER_BULLETS): change both together.
BENCH_CEILING_OPTS="cache=always,timeout=86400,writeback,allow_other"
bench_start_ceiling() {
  mkdir -p "$3"
  BENCH_MOUNTS+=("$3")
  "$1" -f -o "source=$2,$BENCH_CEILING_OPTS" "$3" 2>>"$4" &
  BENCH_LAST_PID=$!
  BENCH_PIDS+=("$BENCH_LAST_PID")
  bench_wait_mount "$3" "$BENCH_LAST_PID" "$4"
}

# --- The strongest ceiling: libfuse master's passthrough_hp (a checkout given to run.sh) ---------
# bench_build_ceiling_hp <checkout> <dir> <log>: builds the checkout's libfuse and its
# passthrough_hp example out of tree into <dir> (meson and ninja, Debian packages, installed when
# missing; the checkout is only read), and tools/bench/ceiling_shim.c against its headers. Sets
# BENCH_CEILING_HP (the example) and BENCH_CEILING_SHIM (the preloaded shim).
bench_build_ceiling_hp() {
  local src=$1 dir=$2 log=$3 pkg
  [[ -f "$src/example/passthrough_hp.cc" && -f "$src/meson.build" ]] ||
    { echo "$src is not a libfuse checkout (no example/passthrough_hp.cc)" >"$log"; return 1; }
  for pkg in meson ninja-build liburing-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      apt-get install -y -qq --no-install-recommends "$pkg" >>"$log" 2>&1 ||
      { echo "cannot install $pkg" >>"$log"; return 1; }
  done
  meson setup "$dir" "$src" -Dexamples=true -Dtests=false -Dutils=false -Duseroot=false \
    -Dinitscriptdir= >"$log" 2>&1 || return 1
  ninja -C "$dir" example/passthrough_hp >>"$log" 2>&1 || return 1
  gcc -O2 -shared -fPIC -I"$src/include" -I"$dir" -o "$dir/ceiling_shim.so" \
    tools/bench/ceiling_shim.c -ldl >>"$log" 2>&1 || return 1
  BENCH_CEILING_HP=$dir/example/passthrough_hp BENCH_CEILING_SHIM=$dir/ceiling_shim.so
}
# bench_start_ceiling_hp <lower> <mnt> <log> <uring 0|1>: passthrough_hp at its most cached, as
# the example is (no --nocache: names and attributes cached for a day, FOPEN_KEEP_CACHE and
# FOPEN_CACHE_DIR on every open, kernel passthrough for file data), with the shim's changes
# (FLUSH and the xattr requests answered ENOSYS, READDIRPLUS for every chunk), 8 threads as
# scopedfsd, and over io_uring (libfuse's io_uring option) when asked. OPENDIR stays: the
# example's readdir reads through the handle its opendir makes.
bench_start_ceiling_hp() {
  local opts=allow_other
  [[ "$4" == 1 ]] && opts+=,io_uring
  mkdir -p "$2"
  BENCH_MOUNTS+=("$2")
  LD_PRELOAD=$BENCH_CEILING_SHIM "$BENCH_CEILING_HP" --foreground --num-threads=8 -o "$opts" "$1" "$2" 2>>"$3" &
  BENCH_LAST_PID=$!
  BENCH_PIDS+=("$BENCH_LAST_PID")
  bench_wait_mount "$2" "$BENCH_LAST_PID" "$3"
}

# --- FUSE over io_uring --------------------------------------------------------------------------
BENCH_URING_PARAM=/sys/module/fuse/parameters/enable_uring
BENCH_URING_RESTORE=""
# bench_uring_usable <scopedfsd> <may_enable>: whether io_uring contenders can run; sets
# BENCH_URING_REASON when not. With <may_enable> 1 it turns enable_uring on (and
# bench_uring_restore puts the old value back).
# bench_has_transport_flag <scopedfsd>: whether it takes --transport (the help is read whole
# first: grep -q would end the pipe early, and under pipefail the writer's SIGPIPE reads as no).
bench_has_transport_flag() {
  local help
  help=$("$1" --help 2>&1 || true)
  [[ "$help" == *--transport* ]]
}
bench_uring_usable() {
  BENCH_URING_REASON=""
  if ! bench_has_transport_flag "$1"; then
    BENCH_URING_REASON="n/a: this scopedfsd has no --transport flag (no io_uring transport)"
    return 1
  fi
  [[ -r "$BENCH_URING_PARAM" ]] || { BENCH_URING_REASON="n/a: the kernel has no FUSE over io_uring"; return 1; }
  if [[ "$(cat "$BENCH_URING_PARAM")" != Y ]]; then
    if [[ "$2" != 1 ]]; then
      BENCH_URING_REASON="n/a: $BENCH_URING_PARAM is N (run.sh --uring lets the bench turn it on)"
      return 1
    fi
    [[ -n "$BENCH_URING_RESTORE" ]] || BENCH_URING_RESTORE=N
    echo Y >"$BENCH_URING_PARAM" || { BENCH_URING_REASON="cannot set $BENCH_URING_PARAM"; return 1; }
  fi
}
bench_uring_restore() {
  [[ -n "$BENCH_URING_RESTORE" ]] && echo "$BENCH_URING_RESTORE" >"$BENCH_URING_PARAM" 2>/dev/null
  BENCH_URING_RESTORE=""
  return 0
}

# --- FUSE requests as the kernel counts them (the fuse_request_send tracepoint) ------------------
# A tracefs instance of our own (its own buffer, so other tracing is left alone), under a tracefs
# mounted in the work directory; bench_trace_stop removes both.
BENCH_TRACE="" BENCH_TRACE_MNT="" BENCH_TRACE_REASON=""
bench_trace_start() {
  BENCH_TRACE_MNT=$1/tracefs
  mkdir -p "$BENCH_TRACE_MNT"
  if ! mount -t tracefs nodev "$BENCH_TRACE_MNT" 2>/dev/null; then
    BENCH_TRACE_REASON="tracefs cannot be mounted" BENCH_TRACE_MNT=""
    return 1
  fi
  if [[ ! -d "$BENCH_TRACE_MNT/events/fuse/fuse_request_send" ]]; then
    BENCH_TRACE_REASON="the kernel has no fuse_request_send tracepoint"
    bench_trace_stop
    return 1
  fi
  BENCH_TRACE=$BENCH_TRACE_MNT/instances/scopedfs-bench-$$
  mkdir "$BENCH_TRACE" || { BENCH_TRACE_REASON="cannot make a tracefs instance"; BENCH_TRACE=""; bench_trace_stop; return 1; }
  echo 32768 >"$BENCH_TRACE/buffer_size_kb"
}
# bench_trace_begin <mnt>: counts from now the requests of <mnt>'s FUSE connection only (the
# kernel's dev_t of the mount: major << 20 | minor).
bench_trace_begin() {
  [[ -n "$BENCH_TRACE" ]] || return 0
  local conn
  conn=$(python3 -c 'import os,sys; d=os.stat(sys.argv[1]).st_dev; print(os.major(d) << 20 | os.minor(d))' "$1")
  echo "connection == $conn" >"$BENCH_TRACE/events/fuse/fuse_request_send/filter"
  : >"$BENCH_TRACE/trace"
  echo 1 >"$BENCH_TRACE/events/fuse/fuse_request_send/enable"
}
# bench_trace_end <contender> <step>: stops counting; prints "contender step opcode count" lines
# (opcode "_lost" when the buffer overran, so a count is never silently short).
bench_trace_end() {
  [[ -n "$BENCH_TRACE" ]] || return 0
  echo 0 >"$BENCH_TRACE/events/fuse/fuse_request_send/enable"
  local lost
  lost=$(cat "$BENCH_TRACE"/per_cpu/cpu*/stats 2>/dev/null | awk '/^overrun:/ {n += $2} END {print n + 0}')
  sed -n 's/.*opcode [0-9]* (\([A-Z_0-9]*\)).*/\1/p' "$BENCH_TRACE/trace" | sort | uniq -c |
    awk -v c="$1" -v s="$2" '{printf "%s\t%s\t%s\t%d\n", c, s, $2, $1}'
  ((lost == 0)) || printf '%s\t%s\t_lost\t%d\n' "$1" "$2" "$lost"
}
bench_trace_stop() {
  if [[ -n "$BENCH_TRACE" ]]; then
    echo 0 >"$BENCH_TRACE/events/fuse/fuse_request_send/enable" 2>/dev/null || true
    rmdir "$BENCH_TRACE" 2>/dev/null || true
    BENCH_TRACE=""
  fi
  if [[ -n "$BENCH_TRACE_MNT" ]]; then
    umount "$BENCH_TRACE_MNT" 2>/dev/null || umount -l "$BENCH_TRACE_MNT" 2>/dev/null || true
    BENCH_TRACE_MNT=""
  fi
  return 0
}

# bench_start_bindfs <lower> <mnt> <log>. bindfs 1.14 defaults, plus:
#   --multithreaded  bindfs is single-threaded by default (man bindfs, BUGS: a short window in
#                    which a new file shows the wrong owner); the man page names this option as
#                    the one that trades that for parallel requests, and scopedfsd is
#                    multithreaded too.
#   -o allow_other   so app uids can use a root-made mount (bindfs adds it as root anyway).
bench_start_bindfs() {
  mkdir -p "$2"
  BENCH_MOUNTS+=("$2")
  bindfs -f --multithreaded -o allow_other "$1" "$2" 2>>"$3" &
  BENCH_LAST_PID=$!
  BENCH_PIDS+=("$BENCH_LAST_PID")
  bench_wait_mount "$2" "$BENCH_LAST_PID" "$3"
}

# mergerfs 2.33 with one branch and the man page's "BASIC SETUP" for software that needs mmap,
# plus the PERFORMANCE section's suggestions that keep POSIX behaviour:
#   use_ino                  mergerfs's inode numbers (needed for hard links to look right)
#   cache.files=partial      page caching within an open (the basic setup's choice with mmap)
#   dropcacheonclose=true    recommended with page caching, to limit double caching
#   category.create=mfs      the basic setup's create policy (one branch: no effect)
#   cache.readdir=true       PERFORMANCE: "enable cache.readdir"
#   security_capability=false PERFORMANCE: "disable security_capability" (else the kernel asks
#                            for security.capability before every write)
#   allow_other              app uids use a root-made mount
# cache.attr and cache.entry stay at their defaults (1 s), the timeout scopedfsd gives
# caller-independent names.
BENCH_MERGERFS_OPTS="allow_other,use_ino,cache.files=partial,dropcacheonclose=true,category.create=mfs,cache.readdir=true,security_capability=false"
bench_start_mergerfs() {
  mkdir -p "$2"
  BENCH_MOUNTS+=("$2")
  mergerfs -f -o "$BENCH_MERGERFS_OPTS" "$1" "$2" 2>>"$3" &
  BENCH_LAST_PID=$!
  BENCH_PIDS+=("$BENCH_LAST_PID")
  bench_wait_mount "$2" "$BENCH_LAST_PID" "$3"
}

# bench_stop <pid> <mnt>: stops one daemon we started and forgets it.
bench_stop() {
  local pid=$1 mnt=$2 p keep=()
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if bench_is_mounted "$mnt"; then umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true; fi
  for p in "${BENCH_PIDS[@]}"; do [[ "$p" == "$pid" ]] || keep+=("$p"); done
  BENCH_PIDS=("${keep[@]}")
}

# bench_as <uid> <cmd...>: runs cmd as uid (no supplementary groups); uid 0 runs it directly.
bench_as() {
  local uid=$1
  shift
  if [[ "$uid" == 0 ]]; then "$@"; else setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; fi
}

bench_now() { date +%s.%N; }

# bench_own <uid> <path>: records <uid> as the file's creator, as scopedfsd does at create.
bench_own() { setfattr -n trusted.scopedfs.owner -v "$1" "$2"; }

# The source tree: drivers/ of Debian's linux-source-6.1, unpacked once into an uncompressed tar
# (so no run times xz), with its count of non-directory entries. Prints the tar's path.
BENCH_CACHE=${BENCH_CACHE:-/tmp/scopedfs-bench-cache}
bench_drivers_tar() {
  local src=/usr/src/linux-source-6.1.tar.xz tar=$BENCH_CACHE/drivers.tar tmp
  if [[ ! -s "$tar" || ! -s "$tar.count" ]]; then
    [[ -r "$src" ]] || { echo "no $src (apt-get install linux-source-6.1)" >&2; return 1; }
    mkdir -p "$BENCH_CACHE"
    tmp=$(mktemp -d "$BENCH_CACHE/unpack.XXXXXX")
    echo "bench: unpacking drivers/ from $src once (cached in $BENCH_CACHE)" >&2
    tar -xJf "$src" -C "$tmp" linux-source-6.1/drivers
    tar -cf "$tar.tmp" -C "$tmp/linux-source-6.1" drivers
    rm -rf "$tmp"
    tar -tf "$tar.tmp" | grep -vc '/$' >"$tar.count"
    mv "$tar.tmp" "$tar"
  fi
  echo "$tar"
}

# bench_tiny_tar <dir> <files>: a small made-up tree (for the CI smoke run). Prints the tar's path.
bench_tiny_tar() {
  local dir=$1 n=$2 tar=$1/tiny.tar i
  mkdir -p "$dir/src/tiny"
  for ((i = 0; i < n; i++)); do
    mkdir -p "$dir/src/tiny/d$((i % 10))"
    printf 'file %d\nkmalloc(%d);\n' "$i" "$i" >"$dir/src/tiny/d$((i % 10))/f$i.c"
  done
  head -c 200000 /dev/zero >"$dir/src/tiny/big.bin"
  tar -cf "$tar" -C "$dir/src" tiny
  rm -rf "$dir/src"
  tar -tf "$tar" | grep -vc '/$' >"$tar.count"
  echo "$tar"
}
