#!/usr/bin/env bash
# What a warm `ls -lR` costs in requests on each kind of mount (docs/android.md, "The device's
# layout"): the notes app (uid 10067) walks 20 directories of 100 PDFs of its own, under the
# Android policy, on a mount of one user's storage and on the device's layout, with and without
# --mount_reached_by_one_user, from the mount's root and from a bind of the user's directory (as
# an app's /storage/emulated/<u>). Counts are the daemon's own (scopedfsctl stats), so the machine's
# load does not change them. Needs root and /dev/fuse; usage: walk_requests.sh [BAZEL_BIN]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-$(bazel info bazel-bin 2>/dev/null)}
P=$PWD/policy/configs
W=$(mktemp -d /tmp/walk_requests.XXXXXX)
chmod 0755 "$W"
mkdir -p "$W/lower/0" "$W/mnt" "$W/bind"
pid=""
stop() {
  umount "$W/bind" 2>/dev/null || true
  umount "$W/mnt" 2>/dev/null || true
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
trap 'stop; rm -rf "$W"' EXIT
as_app() { setpriv --reuid 10067 --regid 10067 --clear-groups bash -c "$1"; }
start() {
  "$B/daemon/scopedfsd" --policy="$P/android.textproto" --apps="$P/apps.textproto" \
    --mountpoint="$W/mnt" --control_socket="$W/sock" "$@" 2>"$W/log" &
  pid=$!
  for _ in $(seq 100); do
    if mountpoint -q "$W/mnt" && [[ -S $W/sock ]]; then return; fi
    sleep 0.1
  done
  echo "walk_requests: the daemon did not mount:" >&2
  cat "$W/log" >&2
  exit 1
}
walk() {  # walk LABEL DIR PATH: a warm-up ls -lR PATH in DIR, then the counted one
  as_app "cd '$2' && ls -lR '$3' >/dev/null"
  "$B/tools/scopedfsctl" stats --socket="$W/sock" --json >"$W/before.json"
  as_app "cd '$2' && ls -lR '$3' >/dev/null"
  "$B/tools/scopedfsctl" stats --socket="$W/sock" --json >"$W/after.json"
  python3 - "$1" "$W/before.json" "$W/after.json" <<'PY'
import json, sys
names = {1: "LOOKUP", 3: "GETATTR"}
def ops(path):
    return {o["opcode"]: int(o.get("requests", 0)) for o in json.load(open(path)).get("opcodes", [])}
a, b = ops(sys.argv[2]), ops(sys.argv[3])
d = {k: b.get(k, 0) - a.get(k, 0) for k in b}
print(f"| {sys.argv[1]} | {d.get(1, 0):,} | {d.get(3, 0):,} | {sum(v for v in d.values() if v > 0):,} |")
PY
}
echo "| mount, walked from | LOOKUP | GETATTR | all requests |"
echo "|---|---|---|---|"
start --source="$W/lower/0"
as_app "mkdir -p '$W/mnt/Download/t' && cd '$W/mnt/Download/t' && for d in \$(seq 20); do
  mkdir d\$d; for f in \$(seq 100); do echo x > d\$d/f\$f.pdf; done; done"
walk "one user's storage, several users' apps may reach it; the mount root" "$W/mnt" Download/t
walk "the same; inside the tree" "$W/mnt/Download/t" .
stop
start --source="$W/lower/0" --mount_reached_by_one_user
walk "the same, --mount_reached_by_one_user; the mount root" "$W/mnt" Download/t
stop
start --source="$W/lower" --device_layout
walk "--device_layout; the mount root" "$W/mnt" 0/Download/t
mount --bind "$W/mnt/0" "$W/bind"
walk "--device_layout; a bind of 0/" "$W/bind" Download/t
stop
start --source="$W/lower" --device_layout --user_id=0 --mount_reached_by_one_user
mount --bind "$W/mnt/0" "$W/bind"
walk "--device_layout --mount_reached_by_one_user --user_id=0; a bind of 0/" "$W/bind" Download/t
walk "the same; the mount root" "$W/mnt" 0/Download/t
