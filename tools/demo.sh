#!/usr/bin/env bash
# The README's first command: installs what is needed, builds, mounts a sample Android-like shared
# storage with scopedfsd under the default policy, and shows what each sample app sees when it
# lists and reads the storage as its own uid. Unmounts and cleans up on exit.
# Needs root and /dev/fuse; without them it falls back to asking the policy engine.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh >/dev/null
bazel build //daemon:scopedfsd //tools:scopedfsctl >/dev/null 2>&1 || bazel build //daemon:scopedfsd //tools:scopedfsctl
BIN=$(bazel info bazel-bin 2>/dev/null)
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
put() {
  mkdir -p "$(dirname "$lower/$1")"
  printf "$3" >"$lower/$1"
  setfattr -n trusted.scopedfs.owner -v "$2" "$lower/$1" 2>/dev/null ||
    python3 -c "import os,sys; os.setxattr(sys.argv[1], 'trusted.scopedfs.owner', sys.argv[2].encode())" "$lower/$1" "$2"
}
JPEG='\xff\xd8\xff\xe0\x00\x10JFIF\x00photo'
put DCIM/Camera/IMG_0001.jpg 10065 "$JPEG"
put DCIM/Camera/VID_0001.mp4 10065 '\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isommp41'
put Music/song.mp3 10063 'ID3\x04\x00\x00\x00\x00\x00\x00tune'
put Documents/todo.txt 10067 'buy milk\n'
put Download/statement.pdf 10067 '%%PDF-1.7\n'
put Pictures/secret.jpg 10067 '%%PDF-1.7 (a pdf named .jpg)\n'
put Android/data/com.example.notes/files/notes.db 10067 'SQLite format 3\x00'
put Android/media/com.example.notes/shared.jpg 10067 "$JPEG"

"$BIN/daemon/scopedfsd" --source="$lower" --mountpoint="$mnt" --policy="$POLICY" --apps="$APPS" \
  --control_socket="$work/ctl" 2>"$work/daemon.log" &
pid=$!
for _ in $(seq 100); do grep -q " $mnt " /proc/self/mounts && break; sleep 0.05; done
grep -q " $mnt " /proc/self/mounts || { cat "$work/daemon.log"; exit 1; }

apps=(10061:gallery 10062:social 10063:music 10064:files 10065:camera 10067:notes)
files=(DCIM/Camera/IMG_0001.jpg DCIM/Camera/VID_0001.mp4 Music/song.mp3 Documents/todo.txt
       Download/statement.pdf Pictures/secret.jpg Android/data/com.example.notes/files/notes.db
       Android/media/com.example.notes/shared.jpg)

printf '\nscopedfsd mounted %s at %s (policy "android").\n' "$lower" "$mnt"
printf 'Each cell: what open(O_RDONLY)+read gives the app, acting as its own uid.\n\n'
printf '%-54s' "file (creator uid)"
for a in "${apps[@]}"; do printf '%-12s' "${a#*:}"; done
printf '\n'
for f in "${files[@]}"; do
  printf '%-54s' "$f ($(getfattr --only-values -n trusted.scopedfs.owner "$lower/$f" 2>/dev/null ||
    python3 -c "import os,sys; print(os.getxattr(sys.argv[1],'trusted.scopedfs.owner').decode())" "$lower/$f"))"
  for a in "${apps[@]}"; do
    uid=${a%%:*}
    out=$(setpriv --reuid="$uid" --regid="$uid" --clear-groups cat "$mnt/$f" 2>&1 >/dev/null) && r=read || r=$out
    case "$r" in
      read) r=read ;; *"No such file"*) r=hidden ;; *"Permission denied"*) r=EACCES ;; *"not permitted"*) r=EPERM ;;
    esac
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

printf '\nThe "EACCES" cells are reads that need location redaction (no ACCESS_MEDIA_LOCATION):\n'
printf 'they fail closed until mediated views land. Why social gets EACCES on IMG_0001.jpg:\n\n'
"$CTL" explain --policy="$POLICY" --apps="$APPS" --package=com.example.social --op=read \
  --path=DCIM/Camera/IMG_0001.jpg --content="$lower/DCIM/Camera/IMG_0001.jpg" --owner_uid=10065
printf '\nLive daemon counters:\n'
"$CTL" --socket="$work/ctl" stats | sed -n '1,9p'
