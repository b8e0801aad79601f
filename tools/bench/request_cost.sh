#!/usr/bin/env bash
# What one FUSE request costs the daemon, transport and all, against libfuse master's
# passthrough_hp (the ceiling) in the same run: a stat in a loop over 100 names, with every cache
# off (scopedfsd --entry_cache_seconds=0 under the permissive policy; passthrough_hp --nocache):
# a LOOKUP each on scopedfsd; passthrough_hp's nocache stat costs it more requests, counted. Four contenders: scopedfsd over
# /dev/fuse (sfs_dev) and io_uring (sfs_uring), passthrough_hp over /dev/fuse (hp_dev) and io_uring
# (hp_uring), each on a tmpfs of its own, caller root. Per contender, medians over the rounds:
# µs per operation, the requests each costs (the kernel's fuse_request_send tracepoint), and per
# request: µs, the daemon's CPU (user+system, /proc/PID/stat), its context switches (every
# thread's voluntary and involuntary, /proc/PID/task/*/status), and µs relative to hp_uring. The kernel offers io_uring only while /sys/module/fuse/parameters/enable_uring is
# Y: set right before each io_uring mount, the previous value put back at the end.
# Usage: tools/bench/request_cost.sh --libfuse=DIR [ROUNDS (5)] [SECONDS per figure (2)]
#   DIR: a libfuse checkout (3.18+) whose passthrough_hp is built in DIR/build (meson), or is
#   built there by run.sh's bench_build_ceiling_hp when missing.
# SCOPEDFSD and METAOPS name prebuilt binaries; otherwise both are built (-c opt).
set -euo pipefail
cd "$(dirname "$0")/../.."
libfuse=""
args=()
for a in "$@"; do
  case "$a" in
    --libfuse=*) libfuse=${a#--libfuse=} ;;
    *) args+=("$a") ;;
  esac
done
rounds=${args[0]:-5}
seconds=${args[1]:-2}
[[ -n "$libfuse" ]] || { echo "request_cost.sh: --libfuse=DIR is required" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "request_cost.sh: needs root (mounts)" >&2; exit 1; }
param=/sys/module/fuse/parameters/enable_uring
[[ -w $param ]] || { echo "request_cost.sh: $param missing or not writable" >&2; exit 1; }

if [[ -z "${SCOPEDFSD:-}" ]]; then
  bazel build -c opt //daemon:scopedfsd //tools/bench:metaops >/dev/null 2>&1 ||
    bazel build -c opt //daemon:scopedfsd //tools/bench:metaops
  BIN=$(bazel info -c opt bazel-bin 2>/dev/null)
  SCOPEDFSD=$BIN/daemon/scopedfsd METAOPS=$BIN/tools/bench/metaops
fi
# shellcheck source=tools/bench/lib.sh
source tools/bench/lib.sh
work=$(mktemp -d /tmp/sfs-reqcost.XXXXXX)
HP=$libfuse/build/example/passthrough_hp
if [[ ! -x "$HP" ]]; then
  bench_build_ceiling_hp "$libfuse" "$work/libfuse-build" "$work/hp-build.log" ||
    { echo "request_cost.sh: cannot build passthrough_hp: $(tail -1 "$work/hp-build.log")" >&2; exit 1; }
  HP=$BENCH_CEILING_HP
fi

old=$(cat "$param")
contenders=(sfs_dev sfs_uring hp_dev hp_uring)
declare -A pid
cleanup() {
  for c in "${contenders[@]}"; do [[ -n "${pid[$c]:-}" ]] && kill "${pid[$c]}" 2>/dev/null || true; done
  for c in "${contenders[@]}"; do
    for _ in $(seq 50); do [[ -n "${pid[$c]:-}" ]] && kill -0 "${pid[$c]}" 2>/dev/null || break; sleep 0.1; done
    umount -l "$work/mnt_$c" 2>/dev/null || true
    umount -l "$work/lower_$c" 2>/dev/null || true
  done
  bench_trace_stop
  rm -rf "$work"
  echo "$old" >"$param"
}
trap cleanup EXIT

for c in "${contenders[@]}"; do
  mkdir -p "$work/lower_$c/s" "$work/mnt_$c"
  mount -t tmpfs -o size=64m tmpfs "$work/lower_$c"
  mkdir -p "$work/lower_$c/s"
  if [[ $c == *_uring ]]; then echo Y >"$param"; else echo N >"$param"; fi
  case $c in
    sfs_*)
      "$SCOPEDFSD" --source="$work/lower_$c" --mountpoint="$work/mnt_$c" \
        --policy=policy/configs/permissive.textproto --apps=policy/configs/apps.textproto \
        --transport="${c#sfs_}" --entry_cache_seconds=0 --audit_log=none >"$work/$c.log" 2>&1 &
      ;;
    hp_*)
      opts=allow_other
      [[ $c == hp_uring ]] && opts+=,io_uring
      "$HP" --foreground --nocache --num-threads=8 -o "$opts" "$work/lower_$c" "$work/mnt_$c" \
        >"$work/$c.log" 2>&1 &
      ;;
  esac
  pid[$c]=$!
  for _ in $(seq 100); do mountpoint -q "$work/mnt_$c" && break; sleep 0.1; done
  mountpoint -q "$work/mnt_$c" || { cat "$work/$c.log" >&2; exit 1; }
  sleep 0.5  # the io_uring queues register after the mount
  "$METAOPS" create "$work/mnt_$c/s" 100
done
echo "$old" >"$param"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null |
    awk '/^(voluntary|nonvoluntary)_ctxt_switches/ {s += $2} END {print s}'
}
hz=$(getconf CLK_TCK)
ops=(stat)
declare -A count=([stat]=100)  # names stated in each pass
declare -A us cpu cs
for ((round = 1; round <= rounds; round++)); do
  for o in "${ops[@]}"; do
  for c in "${contenders[@]}"; do
    t0=$(cpu_ticks "${pid[$c]}") s0=$(switches "${pid[$c]}")
    rate=$("$METAOPS" "$o" "$work/mnt_$c/s" "${count[$o]}" "$seconds" 2>"$work/calls")
    t1=$(cpu_ticks "${pid[$c]}") s1=$(switches "${pid[$c]}")
    n=$(awk '/^calls/ {print $2}' "$work/calls")
    us[$o.$c]+="$(echo "1000000 / $rate" | bc -l) "
    cpu[$o.$c]+="$(echo "($t1 - $t0) * 1000000 / $hz / $n" | bc -l) "
    cs[$o.$c]+="$(echo "($s1 - $s0) / $n" | bc -l) "
  done
  done
done
# The requests one stat costs each contender, from the kernel's fuse_request_send tracepoint in
# one more, untimed pass (lib.sh's bench_trace_*): the figures above are then per request too.
declare -A per
bench_trace_start "$work" || echo "request_cost.sh: no request counts: $BENCH_TRACE_REASON" >&2
for o in "${ops[@]}"; do
for c in "${contenders[@]}"; do
  per[$o.$c]=1
  [[ -n "$BENCH_TRACE" ]] || continue
  bench_trace_begin "$work/mnt_$c"
  "$METAOPS" "$o" "$work/mnt_$c/s" "${count[$o]}" 0.5 >/dev/null 2>"$work/calls"
  n=$(bench_trace_end "$c" "$o" | awk '{ if ($3 == "_lost") lost = 1; n += $4 } END {print lost ? "lost" : n}')
  [[ $n != lost ]] || { echo "request_cost.sh: trace buffer overran for $c" >&2; continue; }
  per[$o.$c]=$(echo "$n / $(awk '/^calls/ {print $2}' "$work/calls")" | bc -l)
done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }
div() { echo "scale=2; $1 / $2" | bc; }
printf "%-6s %-10s %9s %9s %9s %11s %11s %10s\n" op contender "µs/op" "req/op" "µs/req" \
  "CPU µs/req" "switch/req" "/hp_uring"
for o in "${ops[@]}"; do
  base=$(div "$(echo "${us[$o.hp_uring]}" | median)" "${per[$o.hp_uring]}")
  for c in "${contenders[@]}"; do
    u=$(echo "${us[$o.$c]}" | median)
    r=${per[$o.$c]}
    printf "%-6s %-10s %9s %9.2f %9s %11s %11s %10s\n" "$o" "$c" "$u" "$r" "$(div "$u" "$r")" \
      "$(div "$(echo "${cpu[$o.$c]}" | median)" "$r")" "$(div "$(echo "${cs[$o.$c]}" | median)" "$r")" \
      "$(div "$(div "$u" "$r")" "$base")"
  done
done
echo "(µs/req, CPU µs/req and switch/req: the per-operation medians over req/op; /hp_uring: µs/req)"
echo "($rounds rounds of $seconds s, medians; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); $(uname -r))"
