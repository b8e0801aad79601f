#!/usr/bin/env bash
# The README's first command: installs what is needed, builds, mounts a sample Android-like shared
# storage with scopedfsd under the default policy, and shows what each sample app sees when it
# lists and reads the storage as its own uid. Unmounts and cleans up on exit.
# Needs root and /dev/fuse; without them it falls back to asking the policy engine.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh >/dev/null
targets=(//daemon:scopedfsd //tools:scopedfsctl //tests:media_samples)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
BIN=$(bazel info bazel-bin 2>/dev/null)
MEDIA=$BIN/tests/media  # real photos and videos with GPS, made by exiftool and ffmpeg
CTL=$BIN/tools/scopedfsctl
POLICY=policy/configs/android.textproto
APPS=policy/configs/apps.textproto
"$CTL" validate --policy="$POLICY" --apps="$APPS"

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
  rm -rf "$work"
}
trap cleanup EXIT
lower=$work/data/media/0
mnt=$work/storage/emulated/0
mkdir -p "$mnt" "$lower"/{Alarms,Android/data,Android/media,Android/obb,Audiobooks,DCIM/Camera,Documents,Download,Movies,Music,Notifications,Pictures,Podcasts,Recordings,Ringtones}

# put <path> <owner uid> <printf bytes>: a file as if its owner had created it through the mount.
# copy <path> <owner uid> <sample>: the same with one of the real media samples.
own() {
  setfattr -n trusted.scopedfs.owner -v "$2" "$lower/$1" 2>/dev/null ||
    python3 -c "import os,sys; os.setxattr(sys.argv[1], 'trusted.scopedfs.owner', sys.argv[2].encode())" "$lower/$1" "$2"
}
put() { mkdir -p "$(dirname "$lower/$1")"; printf "$3" >"$lower/$1"; own "$1" "$2"; }
copy() { mkdir -p "$(dirname "$lower/$1")"; cp "$MEDIA/$3" "$lower/$1"; chmod 644 "$lower/$1"; own "$1" "$2"; }
copy DCIM/Camera/IMG_0001.jpg 10065 gps.jpg      # Exif + XMP GPS
copy DCIM/Camera/IMG_0002.heic 10065 gps.heic    # Exif item GPS
copy DCIM/Camera/IMG_0003.jpg 10065 clean.jpg    # no location
copy DCIM/Camera/VID_0001.mp4 10065 loc.mp4      # 3GPP loci box
copy DCIM/Camera/VID_0002.mov 10065 loc.mov      # QuickTime ©xyz
put Music/song.mp3 10063 'ID3\x04\x00\x00\x00\x00\x00\x00tune'
put Documents/todo.txt 10067 'buy milk\n'
put Download/statement.pdf 10067 '%%PDF-1.7\n'
put Pictures/secret.jpg 10067 '%%PDF-1.7 (a pdf named .jpg)\n'
put Android/data/com.example.notes/files/notes.db 10067 'SQLite format 3\x00'
copy Android/media/com.example.notes/shared.jpg 10067 gps_le.jpg

"$BIN/daemon/scopedfsd" --source="$lower" --mountpoint="$mnt" --policy="$POLICY" --apps="$APPS" \
  --control_socket="$work/ctl" 2>"$work/daemon.log" &
pid=$!
for _ in $(seq 100); do grep -q " $mnt " /proc/self/mounts && break; sleep 0.05; done
grep -q " $mnt " /proc/self/mounts || { cat "$work/daemon.log"; exit 1; }

apps=(10061:gallery 10062:social 10063:music 10064:files 10065:camera 10067:notes)
files=(DCIM/Camera/IMG_0001.jpg DCIM/Camera/IMG_0002.heic DCIM/Camera/IMG_0003.jpg
       DCIM/Camera/VID_0001.mp4 DCIM/Camera/VID_0002.mov Music/song.mp3 Documents/todo.txt
       Download/statement.pdf Pictures/secret.jpg Android/data/com.example.notes/files/notes.db
       Android/media/com.example.notes/shared.jpg)

printf '\nscopedfsd mounted %s at %s (policy "android").\n' "$lower" "$mnt"
printf 'Each cell: what open(O_RDONLY)+read gives the app, acting as its own uid: "raw" (the\n'
printf 'original bytes), "redacted" (location zero-filled, every other byte identical), "hidden"\n'
printf '(ENOENT) or the error.\n\n'
printf '%-54s' "file (creator uid)"
for a in "${apps[@]}"; do printf '%-12s' "${a#*:}"; done
printf '\n'
for f in "${files[@]}"; do
  printf '%-54s' "$f ($(getfattr --only-values -n trusted.scopedfs.owner "$lower/$f" 2>/dev/null ||
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

printf '\nWhat `ls DCIM/Camera Documents Android/data` shows each app:\n'
for a in "${apps[@]}"; do
  uid=${a%%:*}
  printf '  %-8s' "${a#*:}"
  (cd "$mnt" && setpriv --reuid="$uid" --regid="$uid" --clear-groups ls DCIM/Camera Documents Android/data 2>&1) |
    awk 'NF && !/:$/ {printf "%s ", $0} /:$/ {printf "| %s ", $0}'
  printf '\n'
done

printf '\nCreating files as com.example.camera (uid 10065):\n'
for f in DCIM/Camera/IMG_0002.jpg DCIM/Camera/notes.pdf Download/notes.pdf new.txt; do
  if out=$(setpriv --reuid=10065 --regid=10065 --clear-groups sh -c "printf '' > '$mnt/$f'" 2>&1); then r=created; else r=${out##*: }; fi
  printf '  %-26s %s\n' "$f" "$r"
done

printf '\nWhat exiftool and ffprobe find in the copies gallery (ACCESS_MEDIA_LOCATION) and social\n'
printf '(no ACCESS_MEDIA_LOCATION) read:\n'
for f in DCIM/Camera/IMG_0001.jpg DCIM/Camera/VID_0002.mov; do
  for a in 10061:gallery 10062:social; do
    uid=${a%%:*}
    setpriv --reuid="$uid" --regid="$uid" --clear-groups cat "$mnt/$f" >"$work/copy.${f##*.}"
    case "$f" in
      *.jpg) found=$(exiftool -q -q -n -p '$GPSLatitude $GPSLongitude' "$work/copy.jpg" 2>/dev/null || true) ;;
      *.mov) found=$(ffprobe -v error -show_entries format_tags=location -of default=nw=1:nk=1 "$work/copy.mov" || true) ;;
    esac
    printf '  %-26s %-8s location: %s\n' "$f" "${a#*:}" "${found:-(none)}"
  done
done

printf '\nWhy social gets a redacted copy of IMG_0001.jpg (and which bytes are filled):\n\n'
"$CTL" explain --policy="$POLICY" --apps="$APPS" --package=com.example.social --op=read \
  --path=DCIM/Camera/IMG_0001.jpg --content="$lower/DCIM/Camera/IMG_0001.jpg" --owner_uid=10065
printf '\nLive daemon counters (open_clean_media: photos without location that social read mediated,\n'
printf 'so that location written into them later would reach it filled):\n'
"$CTL" --socket="$work/ctl" stats | sed -n '1,16p'
