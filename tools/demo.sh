#!/usr/bin/env bash
# The README's first command: installs what is needed, builds, makes a sample Android data
# partition with the device-image builder (tools/device_image/make_device_image.sh: photos with
# GPS, a video with location, music, downloads, per-app data, owners recorded), loop-mounts that
# ext4 image, serves its /data/media/0 with scopedfsd under the default policy and the image's
# own apps and packages.list, and shows what each sample app sees when it lists and reads the
# storage as its own uid. Unmounts and cleans up on exit.
# Needs root and /dev/fuse; without them it falls back to asking the policy engine. Without a
# loop device it serves the builder's tree directly (same files, same owners).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh >/dev/null
targets=(//daemon:scopedfsd //tools:scopedfsctl)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
BIN=$(bazel info bazel-bin 2>/dev/null)
CTL=$BIN/tools/scopedfsctl
POLICY=policy/configs/android.textproto

if [[ $(id -u) -ne 0 || ! -c /dev/fuse ]]; then
  echo "demo: not root or no /dev/fuse: cannot mount; showing the policy's decisions instead" >&2
  exec tools/explain_matrix.sh
fi

work=$(mktemp -d /tmp/scopedfs-demo.XXXXXX)
chmod 755 "$work"
pid=""
cleanup() {
  [[ -n "$pid" ]] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  umount -l "$work/storage/emulated/0" 2>/dev/null || true
  # Frees the loop device too. Just after the daemon's exit the kernel may still hold the lower
  # files it passed through (EBUSY): detach then, and the loop device goes when they do.
  umount "$work/data" 2>/dev/null || umount -l "$work/data" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
device=$work/device
tools/device_image/make_device_image.sh "$device"
APPS=$device/apps.textproto
PACKAGES=$device/packages.list
"$CTL" validate --policy="$POLICY" --apps="$APPS" --packages_list="$PACKAGES"
mkdir -p "$work/data" "$work/storage/emulated/0"
if mount -o loop "$device/userdata.img" "$work/data" 2>"$work/loop.err"; then
  data=$work/data
  printf 'demo: loop-mounted %s at %s\n' "$device/userdata.img" "$data"
else
  data=$device/data  # the same tree, owners set on it by the builder (run as root)
  printf 'demo: no loop device (%s); serving the builder tree %s\n' "$(cat "$work/loop.err")" "$data"
fi
lower=$data/media/0
mnt=$work/storage/emulated/0

"$BIN/daemon/scopedfsd" --source="$lower" --mountpoint="$mnt" --policy="$POLICY" --apps="$APPS" \
  --packages_list="$PACKAGES" --control_socket="$work/ctl" 2>"$work/daemon.log" &
pid=$!
for _ in $(seq 100); do grep -q " $mnt " /proc/self/mounts && break; sleep 0.05; done
grep -q " $mnt " /proc/self/mounts || { cat "$work/daemon.log"; exit 1; }

apps=(10061:gallery 10062:chat 10063:music 10064:files 10065:camera)
files=(DCIM/Camera/IMG_20240612_101500.jpg DCIM/Camera/IMG_20240613_183000.jpg
       DCIM/Camera/IMG_20240614_090000.jpg DCIM/Camera/VID_20240612_101700.mp4
       Movies/Paris_trip.mov Pictures/Chat/IMG-received.jpg Music/Example_Band-Sine_in_A.mp3
       Download/boarding_pass.pdf Download/invoice.pdf Download/packing_list.txt
       Android/data/com.example.chat/files/messages.db)

printf '\nscopedfsd mounted %s (the image'"'"'s /data/media/0) at %s (policy "android").\n' "$lower" "$mnt"
printf 'Each cell: what open(O_RDONLY)+read gives the app, acting as its own uid: "raw" (the\n'
printf 'original bytes), "redacted" (location zero-filled, every other byte identical), "hidden"\n'
printf '(ENOENT: not even a stat finds the name) or the error the open failed with (EACCES: the\n'
printf 'policy uses listing visibility, as a device does, so a stat finds the name, listings leave\n'
printf 'it out and the open is refused).\n\n'
printf '%-58s' "file (creator uid)"
for a in "${apps[@]}"; do printf '%-12s' "${a#*:}"; done
printf '\n'
for f in "${files[@]}"; do
  printf '%-58s' "$f ($(getfattr --only-values -n trusted.scopedfs.owner "$lower/$f" 2>/dev/null ||
    python3 -c "import os,sys; print(os.getxattr(sys.argv[1],'trusted.scopedfs.owner').decode())" "$lower/$f"))"
  for a in "${apps[@]}"; do
    uid=${a%%:*}
    if setpriv --reuid="$uid" --regid="$uid" --clear-groups cat "$mnt/$f" >"$work/got" 2>"$work/err"; then
      if cmp -s "$work/got" "$lower/$f"; then r=raw; else r=redacted; fi
    else
      case "$(cat "$work/err")" in
        *"No such file"*) r=hidden ;; *"Permission denied"*) r=EACCES ;; *"not permitted"*) r=EPERM ;; *) r=error ;;
      esac
    fi
    printf '%-12s' "$r"
  done
  printf '\n'
done

printf '\nWhat `ls DCIM/Camera Download Android/data` shows each app:\n'
for a in "${apps[@]}"; do
  uid=${a%%:*}
  printf '  %-8s' "${a#*:}"
  (cd "$mnt" && setpriv --reuid="$uid" --regid="$uid" --clear-groups ls DCIM/Camera Download Android/data 2>&1) |
    awk 'NF && !/:$/ {printf "%s ", $0} /:$/ {printf "| %s ", $0}'
  printf '\n'
done

printf '\nCreating files as com.example.camera (uid 10065):\n'
for f in DCIM/Camera/IMG_20240615_080000.jpg DCIM/Camera/notes.pdf Download/notes.pdf new.txt; do
  if out=$(setpriv --reuid=10065 --regid=10065 --clear-groups sh -c "printf '' > '$mnt/$f'" 2>&1); then r=created; else r=${out##*: }; fi
  printf '  %-26s %s\n' "$f" "$r"
done

printf '\nWhat exiftool and ffprobe find in the copies gallery (ACCESS_MEDIA_LOCATION) and chat\n'
printf '(no ACCESS_MEDIA_LOCATION) read:\n'
for f in DCIM/Camera/IMG_20240612_101500.jpg Movies/Paris_trip.mov; do
  for a in 10061:gallery 10062:chat; do
    uid=${a%%:*}
    setpriv --reuid="$uid" --regid="$uid" --clear-groups cat "$mnt/$f" >"$work/copy.${f##*.}"
    case "$f" in
      *.jpg) found=$(exiftool -q -q -n -p '$GPSLatitude $GPSLongitude' "$work/copy.jpg" 2>/dev/null || true) ;;
      *.mov) found=$(ffprobe -v error -show_entries format_tags=location -of default=nw=1:nk=1 "$work/copy.mov" || true) ;;
    esac
    printf '  %-38s %-8s location: %s\n' "$f" "${a#*:}" "${found:-(none)}"
  done
done

printf '\nWhy chat gets a redacted copy of IMG_20240612_101500.jpg (and which bytes are filled):\n\n'
"$CTL" explain --policy="$POLICY" --apps="$APPS" --package=com.example.chat --op=read \
  --path=DCIM/Camera/IMG_20240612_101500.jpg \
  --content="$lower/DCIM/Camera/IMG_20240612_101500.jpg" --owner_uid=10065
printf '\nLive daemon counters (open_clean_media: photos without location that chat read mediated,\n'
printf 'so that location written into them later would reach it filled):\n'
"$CTL" --socket="$work/ctl" stats | sed -n '1,16p'
