#!/usr/bin/env bash
# Boots an Android-like device in QEMU and checks scopedfs on it: a Debian bookworm guest with
# systemd as PID 1 and Debian's 6.12 kernel, the project installed by its own tools/install.sh,
# the Android-exact userdata image of tools/device_image attached as a second disk and mounted
# at /data (casefold, quota), a vold-like step that mounts /mnt/user/<u>/emulated with vold's
# options and hands the fd to scopedfsd started by the project's systemd unit, for users 0 and 10.
# The guest (guest/device_check.sh) runs the demo's matrix as the sample apps, SIGKILLs the
# daemon mid-write, reboots, and reports on a virtio port; this script judges what it reports,
# compares the matrix with tools/demo.sh's on this host, runs e2fsck on the userdata image, and
# exits non-zero with a message naming each failure. See docs/emulator.md.
#
# Offline but for Debian packages: qemu-system-x86 and mmdebstrap are installed here if missing,
# and the guest's root is built from the configured Debian mirror, once: it is cached (with its
# kernel and initrd) under a name that hashes its package list, and the system disk under a name
# that hashes that and everything installed into it.
set -euo pipefail
me=tools/emulator/run.sh
usage() {
  cat <<EOF
usage: $me [--accel=auto|kvm|tcg] [--cache=DIR] [--work=DIR] [--bin_dir=DIR] [--timeout=SECONDS]
          [--prepare]
  --accel    auto (default): KVM if /dev/kvm works for this guest, else TCG; kvm or tcg: only that
  --cache    where the base system and the system disk are kept (default /var/tmp/scopedfs-emulator)
  --work     where this run's disks, serial log and results go (default: a new /tmp directory,
             removed after a passing run)
  --bin_dir  prebuilt binaries (DIR/daemon/scopedfsd, DIR/tools/scopedfsctl,
             DIR/tools/emulator/vold_mount) instead of bazel build
  --timeout  seconds both boots may take together (default 1800; 730 were needed at load 27)
  --prepare  only install the host packages and build (or find) the cached base system, then
             exit; tools/test.sh runs this beside its first pass
Needs root (mmdebstrap, the system disk's owners) and about 2 GB in the cache directory.
EOF
}
fail() {
  echo "$me: FAIL: $*" >&2
  exit 1
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/tools/emulator
accel=auto cache=/var/tmp/scopedfs-emulator work="" bin_dir="" timeout=1800 prepare=false
for arg in "$@"; do
  case "$arg" in
    --accel=auto | --accel=kvm | --accel=tcg) accel=${arg#*=} ;;
    --cache=*) cache=${arg#*=} ;;
    --work=*) work=${arg#*=} ;;
    --bin_dir=*) bin_dir=${arg#*=} ;;
    --timeout=*) timeout=${arg#*=} ;;
    --prepare) prepare=true ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$me: unknown argument \"$arg\"" >&2; usage >&2; exit 64 ;;
  esac
done
t0=$SECONDS
[[ $(id -u) == 0 ]] || fail "needs root (mmdebstrap and the system disk's file owners)"
export PATH=$PATH:/usr/sbin:/sbin
source "$here/base.sh"

# --- Host packages (only this run needs them, so they are installed here, not by setup.sh) ----
host_packages=(qemu-system-x86 mmdebstrap e2fsprogs)
missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "emulator: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    fail "could not install ${missing[*]}"
fi

# --- Binaries -------------------------------------------------------------------------------
if [[ -z "$bin_dir" ]]; then
  targets=(//daemon:scopedfsd //tools:scopedfsctl //tools/emulator:vold_mount //tools/emulator:answer_probe)
  (cd "$repo" && { bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"; }) ||
    fail "bazel build ${targets[*]} failed"
  bin_dir=$(cd "$repo" && bazel info bazel-bin 2>/dev/null)
fi
for b in daemon/scopedfsd tools/scopedfsctl tools/emulator/vold_mount tools/emulator/answer_probe; do
  [[ -x "$bin_dir/$b" ]] || fail "$bin_dir/$b is missing"
done

# --- The base system (cached) -----------------------------------------------------------------
kernel=$(emulator_kernel_package)
[[ -n "$kernel" ]] || fail "the Debian mirror offers no linux-image-6.12.*+deb12-amd64-unsigned (apt-get update?)"
# libc6, libgcc-s1 and libstdc++6 are in every Debian root (apt needs them).
mapfile -t libs < <(emulator_library_packages "$bin_dir/daemon/scopedfsd" "$bin_dir/tools/scopedfsctl" \
  "$bin_dir/tools/emulator/vold_mount" "$bin_dir/tools/emulator/answer_probe" | grep -vx 'libc6\|libgcc-s1\|libstdc++6')
t_base=$SECONDS
base=$(emulator_build_base "$cache" "$kernel" "${libs[@]}") || fail "could not build the base system"
t_base=$((SECONDS - t_base))
if $prepare; then
  echo "emulator: base system ready: $base ($t_base s)"
  exit 0
fi

own_work=false
if [[ -z "$work" ]]; then work=$(mktemp -d /tmp/scopedfs-emulator.XXXXXX); own_work=true; fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
qemu_pid=""
stop_qemu() {  # stops the QEMU this script started (its pid from -pidfile), then reaps its shell
  local pid
  pid=$(cat "$work/qemu.pid" 2>/dev/null || true)
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null
  [[ -n "$qemu_pid" ]] && { wait "$qemu_pid" 2>/dev/null || true; }
  qemu_pid=""
}
cleanup() {
  if [[ -n "$qemu_pid" ]] && kill -0 "$qemu_pid" 2>/dev/null; then stop_qemu; fi
}
trap cleanup EXIT

# --- The userdata image (Android profile; users 0 and 10 as on a device, 11 for the shipped unit) --
rm -rf "$work/device"
"$repo/tools/device_image/make_device_image.sh" --profile=android --users=0,10,11 "$work/device" >"$work/image.log" 2>&1 ||
  { tail -20 "$work/image.log" >&2; fail "the image builder failed (log: $work/image.log)"; }

# --- The system disk: the base plus the project, installed by its own install script ----------
stage=$work/stage
rm -rf "$stage"
mkdir -p "$stage"
"$repo/tools/install.sh" --destdir="$stage" --bin_dir="$bin_dir" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "tools/install.sh --destdir failed"; }
lib=$stage/usr/local/libexec/scopedfs-emulator
install -D -m 0755 "$bin_dir/tools/emulator/vold_mount" "$lib/vold_mount"
install -D -m 0755 "$bin_dir/tools/emulator/answer_probe" "$lib/answer_probe"
for f in device_check.sh answers_check.sh casefold_check.sh; do install -D -m 0755 "$here/guest/$f" "$lib/$f"; done
# Users 0 and 10 as on a device (the drop-in); user 11 by the unit exactly as shipped.
for u in 0 10; do
  install -D -m 0644 "$here/guest/scopedfsd-vold.conf" "$stage/etc/systemd/system/scopedfsd@$u.service.d/vold.conf"
done
install -D -m 0644 "$here/guest/scopedfs-emulator-check.service" "$stage/etc/systemd/system/scopedfs-emulator-check.service"
install -D -m 0644 "$here/guest/fstab" "$stage/etc/fstab"
# The image's sample apps and the few more the Android answers need (guest/answers_check.sh).
install -d "$stage/etc/scopedfs/device"
cat "$work/device/apps.textproto" "$here/guest/answers_apps.textproto" >"$stage/etc/scopedfs/device/apps.textproto"
install -D -m 0644 "$work/device/packages.list" "$stage/etc/scopedfs/device/packages.list"
echo scopedfs-device >"$stage/etc/hostname"
wants=$stage/etc/systemd/system/multi-user.target.wants
mkdir -p "$wants" "$stage/data"
for u in 0 10 11; do ln -sf ../scopedfsd@.service "$wants/scopedfsd@$u.service"; done
ln -sf ../scopedfs-emulator-check.service "$wants/scopedfs-emulator-check.service"
system_key=$( {
  basename "$base"
  (cd "$stage" && find . -printf '%p %m %y %l\n' | LC_ALL=C sort && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
} | sha256sum | cut -c1-16)
system=$cache/system-$system_key.img
if [[ ! -f "$system" ]]; then
  echo "emulator: making the system disk $system"
  root=$cache/system-$system_key.root
  rm -rf "$root"
  cp -a "$base" "$root"
  cp -a "$stage/." "$root/"
  size_mb=$(($(du -sm "$root" | cut -f1) + 512))
  rm -f "$cache"/system-*.img  # one system disk at a time
  mke2fs -q -t ext4 -L system -d "$root" "$system.part" "${size_mb}M" || fail "mke2fs -d of the system disk failed"
  rm -rf "$root"
  mv "$system.part" "$system"
else
  echo "emulator: reusing the system disk $system (its inputs are unchanged)"
fi

# --- The demo's matrix on this host: what the guest's must equal -------------------------------
demo_status=0
(cd "$repo" && tools/demo.sh) >"$work/demo.log" 2>&1 || demo_status=$?
matrix_files=(DCIM/Camera/IMG_20240612_101500.jpg DCIM/Camera/IMG_20240613_183000.jpg
  DCIM/Camera/IMG_20240614_090000.jpg DCIM/Camera/VID_20240612_101700.mp4
  Movies/Paris_trip.mov Pictures/Chat/IMG-received.jpg Music/Example_Band-Sine_in_A.mp3
  Download/boarding_pass.pdf Download/invoice.pdf Download/packing_list.txt
  Android/data/com.example.chat/files/messages.db)
declare -A expected
for f in "${matrix_files[@]}"; do
  cells=$(awk -v f="$f" '$1 == f && $2 ~ /^\(/ {$1 = ""; $2 = ""; sub(/^ +/, ""); print; exit}' "$work/demo.log")
  [[ -n "$cells" ]] || { tail -20 "$work/demo.log" >&2; fail "tools/demo.sh (exit $demo_status) printed no row for $f (log: $work/demo.log)"; }
  expected[$f]=$cells
done
# The rows are what is compared; a demo that failed after printing them (in its cleanup) is
# said, not judged.
((demo_status == 0)) || echo "emulator: tools/demo.sh exited $demo_status after printing its matrix: $(tail -1 "$work/demo.log")"

# --- Boot ----------------------------------------------------------------------------------------
boot() {  # boot ACCEL: runs QEMU until the guest powers off or the timeout; sets qemu_status
  local accel=$1
  cp "$work/device/userdata.img" "$work/userdata.img"
  : >"$work/results.log"
  : >"$work/serial.log"
  : >"$work/qemu.err"
  local cpu=max
  [[ $accel == kvm ]] && cpu=host
  rm -f "$work/qemu.pid"
  # In a subshell that reports QEMU's own end (e.g. an abort under nested KVM) into qemu.err;
  # QEMU's pid, for stopping it, comes from its -pidfile.
  (qemu-system-x86_64 -pidfile "$work/qemu.pid" -accel "$accel" -cpu "$cpu" -m 1024 -smp 2 -nodefaults -no-user-config \
    -display none -serial "file:$work/serial.log" \
    -kernel "$base.vmlinuz" -initrd "$base.initrd" \
    -append "console=ttyS0 root=/dev/vda rw panic=0 systemd.show_status=1" \
    -drive "file=$system,format=raw,if=virtio,snapshot=on" \
    -drive "file=$work/userdata.img,format=raw,if=virtio" \
    -device virtio-serial-pci -chardev "file,id=results,path=$work/results.log" \
    -device virtserialport,chardev=results,name=org.scopedfs.results \
    2>"$work/qemu.err"; exit_status=$?; exit $exit_status) 2>>"$work/qemu.err" &
  qemu_pid=$!
  local start=$SECONDS first_line=""
  boot1_seconds="" boot2_seconds=""
  while kill -0 "$qemu_pid" 2>/dev/null; do
    if [[ -z "$boot1_seconds" ]] && grep -q '^UNAME' "$work/results.log"; then boot1_seconds=$((SECONDS - start)); fi
    if [[ -z "$boot2_seconds" ]] && grep -q '^PHASE 1 done' "$work/results.log"; then first_line=$SECONDS; boot2_seconds=pending; fi
    if [[ $boot2_seconds == pending ]] && (($(grep -c '^UNAME' "$work/results.log") >= 2)); then boot2_seconds=$((SECONDS - first_line)); fi
    if grep -q 'KVM internal error' "$work/qemu.err"; then
      stop_qemu
      qemu_status=kvm-error
      return
    fi
    if ((SECONDS - start > timeout)); then
      stop_qemu
      qemu_status=timeout
      return
    fi
    sleep 0.5
  done
  wait "$qemu_pid" && qemu_status=exited || qemu_status="exit-$?"
  qemu_pid=""
  [[ $boot2_seconds == pending ]] && boot2_seconds=""
  total_seconds=$((SECONDS - start))
}
used=$accel
if [[ $accel == auto ]]; then
  used=tcg
  if [[ -c /dev/kvm && -w /dev/kvm ]]; then used=kvm; fi
fi
echo "emulator: booting with $used (serial console: $work/serial.log)"
boot "$used"
# Nested KVM fails here in several ways (an emulation failure, a refused MSR); whatever stops a
# KVM boot before the guest reports anything sends this run to TCG.
if [[ $used == kvm && $accel == auto ]] && ! grep -q '^UNAME' "$work/results.log"; then
  echo "emulator: KVM cannot run this guest here ($qemu_status: $(grep -m1 -i 'error' "$work/qemu.err" || tail -1 "$work/qemu.err")); booting with TCG"
  used=tcg
  boot tcg
fi

# --- Judge what the guest reported ------------------------------------------------------------
failures=()
bad() { failures+=("$*"); }
results=$work/results.log
case $qemu_status in
  exited) ;;
  timeout) bad "the guest did not power off within $timeout s (serial log: $work/serial.log)" ;;
  kvm-error) bad "KVM failed: $(grep -m1 'KVM internal error' "$work/qemu.err")" ;;
  *) bad "QEMU ended with $qemu_status: $(tail -3 "$work/qemu.err" | tr '\n' ' ')" ;;
esac
if [[ ! -s $results ]]; then
  echo "--- the serial console's last lines ($work/serial.log):" >&2
  tail -25 "$work/serial.log" >&2
  fail "the guest (booted with $used) reported nothing on its virtio port; QEMU: $qemu_status $(tail -2 "$work/qemu.err" | tr '\n' ' ')"
fi

echo
echo "Guest kernel: $(awk '/^UNAME/ {print $2; exit}' "$results")   accel: $used"
for u in 0 10; do
  echo
  echo "What each sample app's open+read gives on the device, user $u (/storage/emulated/$u):"
  printf '%-58s' "file (creator uid)"
  for a in gallery chat music files camera; do printf '%-12s' "$a"; done
  printf '\n'
  for f in "${matrix_files[@]}"; do
    owner=$(awk -F'\t' -v p="media/$u/$f" '$1 == p {print $2}' "$work/device/owners.tsv")
    got=$(awk -v u="$u" -v f="$f" '$1 == "ROW" && $2 == u && $3 == f {$1 = $2 = $3 = ""; sub(/^ +/, ""); print; exit}' "$results")
    printf '%-58s' "$f ($owner)"
    for c in $got; do printf '%-12s' "$c"; done
    printf '\n'
    [[ "$got" == "${expected[$f]}" ]] || bad "user $u, $f: the device gives \"$got\", the demo on this host \"${expected[$f]}\""
  done
done
echo
declare -A want_row=([user10-gallery-on-user0]=hidden [user0-gallery-on-user10]=hidden [gallery-reads-lowercase-path]=raw)
for k in user10-gallery-on-user0 user0-gallery-on-user10 gallery-reads-lowercase-path; do
  got=$(awk -v k="$k" '$1 == "ROW" && $2 == "x" && $3 == k {print $4; exit}' "$results")
  printf '  %-32s %s\n' "$k" "$got"
  [[ "$got" == "${want_row[$k]}" ]] || bad "$k: got \"$got\", want \"${want_row[$k]}\""
done
grep '^INFO' "$results" | sed 's/^INFO /  /'
echo
echo "Checks:"
grep '^CHECK' "$results" | sed 's/^CHECK /  /'
per_boot=(data-mount data-casefold data-casefold-unicode data-quota vold-mount-0 vold-mount-10
  storage-bind-0 storage-bind-10 unit-0 unit-10 sandbox-0 sandbox-10 mount-11 unit-11 sandbox-11)
for c in "${per_boot[@]}"; do
  n=$(grep -c "^CHECK ok $c " "$results" || true)
  [[ $n == 2 ]] || bad "check $c passed on $n of the 2 boots"
done
# Boot 1's Android answers and casefold checks (guest/answers_check.sh, guest/casefold_check.sh):
# each must have been reported, and passed.
answer_checks=(answers-rename-android-10065 answers-rename-android-case-10065
  answers-rename-android-10064 answers-rename-android-case-10064 answers-android-stays
  answers-exchange-10065 answers-exchange-10064 answers-noreplace-taken answers-noreplace-free
  answers-exchange-nothing-moved answers-chmod-0600 answers-chmod-0777 answers-chown-self
  answers-chown-other answers-setattr-changed-nothing answers-create-0600 answers-mkdir-0700
  answers-new-modes answers-private-dirs-exist answers-create-private-10063
  answers-create-private-10064 answers-mkdir-own-private answers-sdk33-no-media
  answers-sdk29-media answers-partial-lists-picked answers-partial-reads-picked
  casefold-oracle-dir casefold-oracle casefold-finds casefold-rename-default casefold-rename-ignorable
  casefold-rename-default-plain casefold-rmdir-default casefold-defaults-stay
  casefold-create-audio casefold-mkdir-below casefold-landed casefold-create-folded
  casefold-landed-documents casefold-apart-absent casefold-apart-custom
  casefold-apart-custom-plain casefold-apart-not-made)
for uid in 10063 10064; do
  for d in Android_data_com.example.chat Android_obb_com.example.chat android_DATA_COM.EXAMPLE.CHAT Android_data_com.example.absent; do
    answer_checks+=("answers-mkdir-private-$uid-$d")
  done
done
answers_passed=0
for c in "${answer_checks[@]}"; do
  if grep -q "^CHECK ok $c " "$results"; then
    answers_passed=$((answers_passed + 1))
  elif ! grep -q "^CHECK FAIL $c " "$results"; then
    bad "check $c was not reported"
  fi
done
echo "  Android answers and casefold checks: $answers_passed of ${#answer_checks[@]} passed"
for c in restart remount serves-again restart-11 serves-again-11 acked-boot1 acked-boot2 no-restarts-boot2; do
  grep -q "^CHECK ok $c " "$results" || bad "check $c did not pass$(grep -m1 "^CHECK FAIL $c " "$results" | sed 's/^CHECK FAIL [^ ]* / (/; s/$/)/')"
done
while read -r line; do bad "guest: ${line#CHECK FAIL }"; done < <(grep '^CHECK FAIL' "$results")
grep -q '^PHASE 1 done' "$results" || bad "boot 1 did not finish its checks (serial log: $work/serial.log)"
grep -q '^PHASE 2 done' "$results" || bad "boot 2 (after the reboot) did not finish its checks (serial log: $work/serial.log)"

# Each shutdown must unmount /data: a mount that outlived its daemon would keep it busy.
if grep -a -q 'Failed unmounting' "$work/serial.log"; then
  bad "a shutdown could not unmount everything: $(grep -a 'Failed unmounting' "$work/serial.log" | sed 's/\x1b\[[0-9;]*m//g' | tr -s ' \n' ' ')"
else
  echo "  both shutdowns unmounted every file system (no 'Failed unmounting' on the serial console)"
fi
# The userdata image after two boots, a SIGKILL and a reboot: e2fsck must find it clean.
if e2fsck -fn "$work/userdata.img" >"$work/e2fsck.log" 2>&1; then
  echo "  e2fsck -fn userdata.img: clean"
else
  bad "e2fsck -fn of the userdata image after the run is not clean: $(tail -5 "$work/e2fsck.log" | tr '\n' ' ')"
fi

echo
echo "Times: base system $t_base s$( ((t_base < 5)) && echo " (cached)"), boot 1 to its first report ${boot1_seconds:-?} s," \
  "reboot to boot 2's first report ${boot2_seconds:-?} s, QEMU in all ${total_seconds:-?} s, whole run $((SECONDS - t0)) s"
if ((${#failures[@]} > 0)); then
  echo
  for f in "${failures[@]}"; do echo "$me: FAIL: $f" >&2; done
  echo "$me: ${#failures[@]} failures; the run's files are in $work" >&2
  trap - EXIT
  exit 1
fi
echo "emulator: all checks passed"
if $own_work; then rm -rf "$work"; fi
