#!/bin/bash
# The emulator guest's checks, run by scopedfs-emulator-check.service once scopedfsd@0 and
# scopedfsd@10 are READY. Each result is one line on the virtio port org.scopedfs.results (the
# host's tools/emulator/run.sh reads and judges them; this script decides nothing for it):
#   UNAME <release>              the guest kernel
#   CHECK ok|FAIL <name> <what>  one check
#   ROW <user> <file> <cell>...  the demo's matrix: what each sample app's open+read gives
#   INFO <text>                  shown, not judged
#   PHASE <n> done               the end of this boot's part
# Users 0 and 10 are served as on a device (vold's mount, handed to the daemon); user 11 by the
# unit as shipped, which mounts /storage/emulated/11 itself.
# Boot 1 checks the device as booted, the demo's matrix for users 0 and 10, writes files as an
# app (each recorded once fsync returned), SIGKILLs the daemon mid-write, checks that systemd
# restarted it, that the mount serves again and that every recorded file is whole, then reboots.
# Boot 2 checks the recorded files again and powers off.
set -uo pipefail
state=/var/lib/scopedfs-emulator
mkdir -p "$state"
port=/dev/virtio-ports/org.scopedfs.results
for _ in $(seq 300); do [[ -e $port ]] && break; sleep 0.1; done
if [[ -e $port ]]; then exec 9>"$port"; else exec 9>/dev/ttyS0; fi
say() { printf '%s\n' "$*" >&9; printf 'scopedfs-emulator: %s\n' "$*"; }
check() {  # check NAME WHAT COMMAND...: ok if COMMAND succeeds
  local name=$1 what=$2
  shift 2
  if "$@" >/tmp/check.out 2>&1; then
    say "CHECK ok $name $what"
  else
    say "CHECK FAIL $name $what: $(tr '\n' ' ' </tmp/check.out | cut -c1-400)"
  fi
}
answer() {  # answer NAME WHAT WANT UID PROBE_ARGS...: one call's answer as app UID must be WANT
  local name=$1 what=$2 want=$3 uid=$4 got
  shift 4
  got=$(as_app "$uid" /usr/local/libexec/scopedfs-emulator/answer_probe "$@" 2>&1)
  if [[ $got == "$want" ]]; then
    say "CHECK ok $name $what: $got"
  else
    say "CHECK FAIL $name $what: got $got, want $want"
  fi
}
as_app() {  # as_app UID COMMAND...: run as an app (uid = gid, no supplementary groups)
  local uid=$1
  shift
  setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}
unit_prop() { systemctl show -p "$2" --value "scopedfsd@$1.service"; }
# The unique id of the mount at PATH (statx's STATX_MNT_ID_UNIQUE, Linux 6.8 and later; struct statx's
# stx_mnt_id at byte 144), which the kernel never hands out again; mountinfo's ids are reused, so a
# new mount can carry the id of the one it replaced. Empty when the kernel cannot say or the mount
# does not answer. perl is in every Debian system (perl-base is essential).
unique_mount_id() {
  perl -e 'my $b = "\0" x 256;
    syscall(332, -100, $ARGV[0], 0, 0x4000, $b) == 0 or exit 1;
    my ($mask) = unpack("L", $b);
    exit 1 unless $mask & 0x4000;
    print unpack("Q", substr($b, 144, 8)), "\n"' "$1" 2>/dev/null || true
}
phase=$(cat "$state/phase" 2>/dev/null || echo 1)
say "UNAME $(uname -r)"
say "INFO boot $phase, $(cut -d' ' -f1 /proc/uptime) s after the kernel started"

# --- The device as booted (every boot) ---------------------------------------------------------
data_line=$(awk '$5 == "/data" {print}' /proc/self/mountinfo)
check data-mount "/data is userdata (ext4, nosuid,nodev,noatime)" \
  bash -c '[[ "$1" == *" - ext4 /dev/vdb "* && "$1" == *nosuid* && "$1" == *nodev* && "$1" == *noatime* ]] || { echo "$1"; false; }' _ "$data_line"
check data-casefold "/data/media is casefolded: the lower finds dcim/camera as DCIM/Camera" \
  stat /data/media/0/dcim/camera/IMG_20240614_090000.JPG
check data-casefold-unicode "ext4's utf8 folding: 'Muſic' (long s) names Music on the lower" \
  stat /data/media/0/Muſic
check data-quota "userdata has the quota and project features (fs_mgr's tuning)" \
  bash -c 'f=$(dumpe2fs -h /dev/vdb 2>/dev/null | grep "^Filesystem features"); [[ $f == *quota* && $f == *project* && $f == *casefold* ]] || { echo "$f"; false; }'
for u in 0 10 11; do
  if [[ $u == 11 ]]; then
    pid=$(unit_prop "$u" MainPID)
    check "sandbox-$u" "scopedfsd@$u runs in the unit's sandbox: NoNewPrivs, seccomp filter, 7 bounding capabilities" \
      bash -c 's=/proc/'"$pid"'/status; grep -q "^NoNewPrivs:[[:space:]]*1" $s && grep -q "^Seccomp:[[:space:]]*2" $s && grep -q "^CapBnd:[[:space:]]*00000000002000cf" $s || { grep -E "NoNewPrivs|Seccomp|CapBnd" $s; false; }'
    continue
  fi
  fuse=/mnt/user/$u/emulated
  line=$(awk -v m="$fuse" '$5 == m {print}' /proc/self/mountinfo | tail -1)
  say "INFO user $u: $line"
  check "vold-mount-$u" "$fuse is vold's mount: fuse from /dev/fuse, nosuid,nodev,noexec,noatime, user_id=0,group_id=0,allow_other, no default_permissions" \
    bash -c 'l=$1; [[ $l == *" - fuse /dev/fuse "* && $l == *nosuid* && $l == *nodev* && $l == *noexec* && $l == *noatime* && $l == *user_id=0,group_id=0* && $l == *allow_other* && $l != *default_permissions* ]] || { echo "mountinfo: $l"; false; }' _ "$line"
  check "storage-bind-$u" "/storage/emulated/$u is a bind of $fuse/$u (vold's layout: <user>/ at the FUSE root)" \
    bash -c '[[ "$(stat -c %d:%i /storage/emulated/'"$u"')" == "$(stat -c %d:%i '"$fuse/$u"')" ]] && grep -q " /storage/emulated/'"$u"' " /proc/self/mountinfo'
  # What an app of user u lists at the FUSE root (bound where an app can reach it, as an app's
  # mount namespace shows it at /storage/emulated on a device): its own user directory only.
  app=$((u * 100000 + 10061))
  view=/run/fuse-root-$u
  mkdir -p "$view" && mount --bind "$fuse" "$view"
  check "fuse-root-$u" "an app of user $u lists only $u/ at the FUSE root" \
    bash -c 'got=$(setpriv --reuid='"$app"' --regid='"$app"' --clear-groups ls '"$view"'); [[ "$got" == "'"$u"'" ]] || { echo "listed: $got"; false; }'
  check "create-$u" "an app of user $u creates $u/Download/z.txt (judged as Download/z.txt of user $u)" \
    bash -c 'setpriv --reuid='"$app"' --regid='"$app"' --clear-groups sh -c "echo z > '"$view"'/'"$u"'/Download/z-'"$app"'.txt" && [[ -f /data/media/'"$u"'/Download/z-'"$app"'.txt ]]'
  umount "$view" 2>/dev/null || umount -l "$view"
  check "unit-$u" "scopedfsd@$u: Type=notify, active, main pid is scopedfsd" \
    bash -c '[[ "$(systemctl show -p Type --value scopedfsd@'"$u"')" == notify && "$(systemctl is-active scopedfsd@'"$u"')" == active ]] && pid=$(systemctl show -p MainPID --value scopedfsd@'"$u"') && [[ "$(cat /proc/$pid/comm)" == scopedfsd ]]'
  pid=$(unit_prop "$u" MainPID)
  check "sandbox-$u" "scopedfsd@$u runs in the unit's sandbox: NoNewPrivs, seccomp filter, 7 bounding capabilities" \
    bash -c 's=/proc/'"$pid"'/status; grep -q "^NoNewPrivs:[[:space:]]*1" $s && grep -q "^Seccomp:[[:space:]]*2" $s && grep -q "^CapBnd:[[:space:]]*00000000002000cf" $s || { grep -E "NoNewPrivs|Seccomp|CapBnd" $s; false; }'
done

# User 11 runs the shipped unit unchanged: scopedfsd mounts /storage/emulated/11 itself, as on
# a host that is not a device (no vold).
line=$(awk '$5 == "/storage/emulated/11" {print}' /proc/self/mountinfo | tail -1)
check mount-11 "scopedfsd@11 (the unit as shipped) mounted /storage/emulated/11 itself (fuse.scopedfs)" \
  bash -c '[[ $1 == *" - fuse.scopedfs /data/media/11 "* ]] || { echo "mountinfo: $1"; false; }' _ "$line"
check unit-11 "scopedfsd@11: Type=notify, active, main pid is scopedfsd" \
  bash -c '[[ "$(systemctl show -p Type --value scopedfsd@11)" == notify && "$(systemctl is-active scopedfsd@11)" == active ]] && pid=$(systemctl show -p MainPID --value scopedfsd@11) && [[ "$(cat /proc/$pid/comm)" == scopedfsd ]]'

apps=(10061:gallery 10062:chat 10063:music 10064:files 10065:camera)
cell() {  # cell UID FILE LOWER: what the app's open+read of FILE gives, as the demo prints it
  local out=/tmp/cell.out err=/tmp/cell.err
  if as_app "$1" cat "$2" >"$out" 2>"$err"; then
    if cmp -s "$out" "$3"; then echo raw; else echo redacted; fi
  else
    case "$(cat "$err")" in
      *"No such file"*) echo hidden ;; *"Permission denied"*) echo EACCES ;;
      *"not permitted"*) echo EPERM ;; *) echo "error($(tr ' \n' '__' <"$err" | cut -c1-40))" ;;
    esac
  fi
}

if [[ $phase == 1 ]]; then
  # --- The demo's matrix, per user ----------------------------------------------------------
  files=(DCIM/Camera/IMG_20240612_101500.jpg DCIM/Camera/IMG_20240613_183000.jpg
    DCIM/Camera/IMG_20240614_090000.jpg DCIM/Camera/VID_20240612_101700.mp4
    Movies/Paris_trip.mov Pictures/Chat/IMG-received.jpg Music/Example_Band-Sine_in_A.mp3
    Download/boarding_pass.pdf Download/invoice.pdf Download/packing_list.txt
    Android/data/com.example.chat/files/messages.db)
  for u in 0 10; do
    for f in "${files[@]}"; do
      row="ROW $u $f"
      for a in "${apps[@]}"; do
        row+=" $(cell $((u * 100000 + ${a%%:*})) "/storage/emulated/$u/$f" "/data/media/$u/$f")"
      done
      say "$row"
    done
  done
  # Each user's apps get nothing of the other user's storage (other-users-hidden).
  say "ROW x user10-gallery-on-user0 $(cell 1010061 /storage/emulated/0/DCIM/Camera/IMG_20240614_090000.jpg /data/media/0/DCIM/Camera/IMG_20240614_090000.jpg)"
  say "ROW x user0-gallery-on-user10 $(cell 10061 /storage/emulated/10/DCIM/Camera/IMG_20240614_090000.jpg /data/media/10/DCIM/Camera/IMG_20240614_090000.jpg)"
  say "ROW x gallery-reads-lowercase-path $(cell 10061 /storage/emulated/0/dcim/camera/IMG_20240614_090000.jpg /data/media/0/DCIM/Camera/IMG_20240614_090000.jpg)"

  # --- Android's answers and Unicode casefolding, on the casefolded lower --------------------
  here=/usr/local/libexec/scopedfs-emulator
  answers_start=$SECONDS
  # shellcheck source=tools/emulator/guest/answers_check.sh
  source "$here/answers_check.sh"
  # shellcheck source=tools/emulator/guest/casefold_check.sh
  source "$here/casefold_check.sh"
  say "INFO the Android answers and casefold checks took $((SECONDS - answers_start)) s"

  # --- Acknowledged writes, SIGKILL, restart --------------------------------------------------
  src=/run/emulator-src
  mkdir -p "$src"
  : >"$state/acked"
  camera=10065
  writer() {
    local i=0
    while [[ ! -e $src/stop ]]; do
      i=$((i + 1))
      head -c $((32768 + i * 4096)) /dev/urandom >"$src/ack-$i"
      # Acknowledged once dd's fsync returned 0; only then is the file recorded.
      if as_app $camera dd if="$src/ack-$i" of="/storage/emulated/0/DCIM/Camera/ack-$i.jpg" \
        conv=fsync status=none 2>/dev/null; then
        echo "ack-$i.jpg $(sha256sum <"$src/ack-$i" | cut -d' ' -f1)" >>"$state/acked"
        sync "$state/acked"
      fi
    done
  }
  writer &
  writer_pid=$!
  deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)) && (($(wc -l <"$state/acked") < 5)); do sleep 0.1; done
  old_pid=$(unit_prop 0 MainPID)
  old_restarts=$(unit_prop 0 NRestarts)
  old_mount=$(unique_mount_id /mnt/user/0/emulated)
  acked_before=$(wc -l <"$state/acked")
  kill -KILL "$old_pid"
  say "INFO SIGKILLed scopedfsd@0 (pid $old_pid) after $acked_before acknowledged writes"
  restarted=false
  deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    new_pid=$(unit_prop 0 MainPID)
    if [[ $(systemctl is-active scopedfsd@0) == active && $new_pid != 0 && $new_pid != "$old_pid" ]] &&
      grep -q " /storage/emulated/0 " /proc/self/mountinfo; then
      restarted=true
      break
    fi
    sleep 0.1
  done
  check restart "systemd restarted scopedfsd@0 after SIGKILL (NRestarts $old_restarts -> $(unit_prop 0 NRestarts), pid $old_pid -> $(unit_prop 0 MainPID))" \
    $restarted
  new_mount=$(unique_mount_id /mnt/user/0/emulated)
  check remount "vold_mount made a new mount for the restarted daemon (unique mount id $old_mount -> $new_mount)" \
    test -n "$old_mount" -a -n "$new_mount" -a "$new_mount" != "$old_mount"
  check serves-again "the gallery lists and reads user 0's storage through the new mount" \
    bash -c 'setpriv --reuid=10061 --regid=10061 --clear-groups ls /storage/emulated/0/DCIM/Camera >/dev/null &&
      setpriv --reuid=10061 --regid=10061 --clear-groups cat /storage/emulated/0/DCIM/Camera/IMG_20240614_090000.jpg | cmp - /data/media/0/DCIM/Camera/IMG_20240614_090000.jpg'
  # The shipped unit (user 11, self-mounting) must come back from a SIGKILL too: its next start
  # finds the dead mount at /storage/emulated/11 and detaches it.
  old11=$(unit_prop 11 MainPID)
  kill -KILL "$old11"
  back=false
  deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    p=$(unit_prop 11 MainPID)
    if [[ $(systemctl is-active scopedfsd@11) == active && $p != 0 && $p != "$old11" ]]; then back=true; break; fi
    sleep 0.1
  done
  check restart-11 "systemd restarted scopedfsd@11 (the unit as shipped) after SIGKILL ($(systemctl is-active scopedfsd@11), NRestarts $(unit_prop 11 NRestarts), pid $old11 -> $(unit_prop 11 MainPID); $(systemctl status scopedfsd@11 2>&1 | grep -a -m2 -E 'ExecStartPre|mkdir' | tr -s ' ' | tr '\n' ' '))" $back
  check serves-again-11 "the gallery of user 11 reads its storage through the shipped unit's new mount" \
    bash -c 'setpriv --reuid=1110061 --regid=1110061 --clear-groups cat /storage/emulated/11/DCIM/Camera/IMG_20240614_090000.jpg | cmp - /data/media/11/DCIM/Camera/IMG_20240614_090000.jpg'

  # A few more acknowledged writes through the new mount, then stop the writer.
  target=$(($(wc -l <"$state/acked") + 3))
  deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)) && (($(wc -l <"$state/acked") < target)); do sleep 0.1; done
  touch "$src/stop"
  wait "$writer_pid"
  say "INFO $(wc -l <"$state/acked") writes acknowledged, $acked_before before the SIGKILL"
fi

# --- Every acknowledged write is there, whole (boot 1 after the restart, boot 2 after reboot) --
verify_acked() {
  local bad=0 n=0 name sum
  while read -r name sum; do
    n=$((n + 1))
    got=$(setpriv --reuid=10065 --regid=10065 --clear-groups cat "/storage/emulated/0/DCIM/Camera/$name" | sha256sum | cut -d' ' -f1)
    low=$(sha256sum <"/data/media/0/DCIM/Camera/$name" | cut -d' ' -f1)
    if [[ $got != "$sum" || $low != "$sum" ]]; then echo "$name: mount $got lower $low want $sum"; bad=1; fi
  done <"$state/acked"
  ((n >= 8)) || { echo "only $n acknowledged writes recorded"; bad=1; }
  return $bad
}
check "acked-boot$phase" "every write acknowledged to the camera app is whole, through the mount and on the lower" verify_acked

if [[ $phase == 1 ]]; then
  echo 2 >"$state/phase"
  sync
  say "PHASE 1 done"
  systemctl reboot
else
  check "no-restarts-boot2" "after the reboot the three daemons started once and serve" \
    bash -c '[[ $(systemctl show -p NRestarts --value scopedfsd@0) == 0 && $(systemctl is-active scopedfsd@0 scopedfsd@10 scopedfsd@11 | sort -u) == active ]]'
  say "PHASE 2 done"
  systemctl poweroff
fi
