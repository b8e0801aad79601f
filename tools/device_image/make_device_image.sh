#!/usr/bin/env bash
# Builds a sample Android data partition for scopedfs: an Android-like shared storage per user
# (/data/media/<user>) whose files carry their creator in trusted.scopedfs.owner, the sample apps
# (apps textproto + packages.list), and an ext4 image of it all that an emulator can use as its
# userdata partition or that loop-mounts under scopedfsd. Needs no root and no mount: mke2fs -d
# copies the tree and debugfs writes the ownership xattrs into the image.
#
# Usage: make_device_image.sh [--users=0,10] [--size=96M] [--profile=demo|android] OUT_DIR
# --profile=demo (the default) is the image tools/demo.sh and the mount tests loop-mount here.
# --profile=android is the same storage as a userdata partition Android would accept: formatted
# as fs_mgr formats userdata (4 KiB blocks, 512-byte inodes, Android's mke2fs.conf) and tuned as
# fs_mgr tunes it at boot (casefold, quota with project quota), with init's and vold's owners,
# modes, ACLs, project ids and inode flags and the labels of android_file_contexts
# (android_layout.py). It leaves out /data/system and /data/misc, which init creates with
# encryption=Require (packages.list and the apps file stay in OUT_DIR), and has no volume label.
# This kernel cannot mount it (no CONFIG_UNICODE); android_image_test checks it offline.
# Writes:
#   OUT_DIR/data/                  the partition's tree (its root is Android's /data)
#     media/<user>/...             DCIM/Camera, Movies, Music, Download, Android/data/<pkg>, ...
#     system/packages.list         where Android keeps it
#     misc/scopedfs/apps.textproto the sample apps and their grants
#   OUT_DIR/apps.textproto, OUT_DIR/packages.list   the same two files, for --apps/--packages_list
#   OUT_DIR/owners.tsv             <path under data/> TAB <creator uid>, one line per owned file
#   OUT_DIR/userdata.img           ext4, label "userdata"
# Run as root, the tree's files get the xattrs too, so OUT_DIR/data/media/<user> can be served
# as it is. Output is deterministic for a given tool version (fixed dates, bit-exact encoders).
set -euo pipefail

usage() {
  echo "usage: $0 [--users=0,10] [--size=96M] [--profile=demo|android] OUT_DIR" >&2
  exit 2
}
users=0
size=96M
profile=demo
out=""
for arg in "$@"; do
  case "$arg" in
    --users=*) users=${arg#--users=} ;;
    --size=*) size=${arg#--size=} ;;
    --profile=demo | --profile=android) profile=${arg#--profile=} ;;
    -h | --help) usage ;;
    -*) echo "make_device_image: unknown flag $arg" >&2; usage ;;
    *) [[ -z "$out" ]] || usage; out=$arg ;;
  esac
done
[[ -n "$out" ]] || usage
IFS=, read -r -a user_list <<<"$users"
for u in "${user_list[@]}"; do
  [[ "$u" =~ ^[0-9]+$ && "$u" -le 21473 ]] || { echo "make_device_image: bad user id \"$u\" in --users" >&2; exit 2; }
done

convert=/usr/bin/convert  # the real ImageMagick, not a stand-in earlier on PATH
export PATH="$PATH:/usr/sbin:/sbin"  # mke2fs and debugfs, for users without sbin on PATH
tools=("$convert" exiftool ffmpeg mke2fs debugfs)
[[ "$profile" == android ]] && tools+=(tune2fs python3 selabel_lookup)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null ||
    { echo "make_device_image: $tool is missing (tools/setup.sh installs it)" >&2; exit 1; }
done
if [[ -e "$out/data" || -e "$out/userdata.img" ]]; then
  echo "make_device_image: $out already holds an image; choose an empty directory" >&2
  exit 1
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out/data"
out=$(cd "$out" && pwd)
data=$out/data
export SOURCE_DATE_EPOCH=0
exiftool_q() { exiftool -q -q -overwrite_original "$@"; }

# --- The sample apps (app ids; the uid in user U is U * 100000 + app id) ---------------------
# package|app id|permissions|what it is
APPS=(
  "com.example.camera|10065||Takes photos and videos into DCIM/Camera; reads nobody else's files."
  "com.example.gallery|10061|READ_MEDIA_IMAGES READ_MEDIA_VIDEO ACCESS_MEDIA_LOCATION|Shows every photo and video, with where it was taken."
  "com.example.chat|10062|READ_MEDIA_IMAGES READ_MEDIA_VIDEO|Sends photos and videos; location is redacted for it."
  "com.example.files|10064|MANAGE_EXTERNAL_STORAGE|A file manager: all-files access (location still redacted)."
  "com.example.music|10063|READ_MEDIA_AUDIO|A music player: reads audio only."
)
{
  echo "# proto-file: proto/apps.proto"
  echo "# proto-message: scopedfs.AppRegistry"
  echo "#"
  echo "# The sample apps of a device image made by tools/device_image/make_device_image.sh. uids are"
  echo "# user 0 uids; the same apps in user U run as U * 100000 + app id."
  for a in "${APPS[@]}"; do
    IFS='|' read -r pkg id perms what <<<"$a"
    printf '\n# %s\napp { package: "%s" uid: %s target_sdk: 34' "$what" "$pkg" "$id"
    for p in $perms; do printf '\n      permission: "android.permission.%s"' "$p"; done
    printf ' }\n'
  done
} >"$out/apps.textproto"
# packages.list as PackageManager writes it: package uid debuggable data-dir seinfo gids
# profileable version. 3003 is AID_INET (apps holding INTERNET).
for a in "${APPS[@]}"; do
  IFS='|' read -r pkg id _ _ <<<"$a"
  echo "$pkg $id 0 /data/user/0/$pkg default:targetSdkVersion=34 3003 0 1"
done >"$out/packages.list"
if [[ "$profile" == demo ]]; then
  mkdir -p "$data/system" "$data/misc/scopedfs"
  cp "$out/packages.list" "$data/system/packages.list"
  cp "$out/apps.textproto" "$data/misc/scopedfs/apps.textproto"
fi

# --- Media, made once with the tools real files come from -------------------------------------
media=$out/.media
mkdir -p "$media"
# photo <name> <two gradient colours> [exiftool GPS args...]: a 320x240 JPEG as a phone writes it.
photo() {
  local name=$1 colours=$2
  shift 2
  "$convert" -size 320x240 "gradient:$colours" -swirl 90 +set date:create +set date:modify \
    "$media/$name"
  exiftool_q -Make=Example -Model="Example Phone" -DateTimeOriginal="2024:06:12 10:15:00" \
    "$@" "$media/$name"
}
gps() {  # gps <lat> <lon>: Exif GPS and XMP GPS, as phones and editors write them
  local lat=$1 lon=$2
  echo -GPSLatitude="${lat#-}" -GPSLatitudeRef="$([[ $lat == -* ]] && echo S || echo N)" \
    -GPSLongitude="${lon#-}" -GPSLongitudeRef="$([[ $lon == -* ]] && echo W || echo E)" \
    -GPSAltitude=12 -GPSAltitudeRef=0 -XMP-exif:GPSLatitude="$lat" -XMP-exif:GPSLongitude="$lon"
}
# shellcheck disable=SC2046  # gps prints words meant to be split
photo golden_gate.jpg orange-navy $(gps 37.8199 -122.4783)
# shellcheck disable=SC2046
photo eiffel.jpg skyblue-gray $(gps 48.8584 2.2945)
photo no_location.jpg green-white
# shellcheck disable=SC2046
photo received.jpg purple-yellow $(gps -33.8568 151.2153)
video=(-v error -f lavfi -i testsrc=duration=2:size=320x240:rate=15 -c:v mpeg4
       -fflags +bitexact -flags:v +bitexact -y)
ffmpeg "${video[@]}" -metadata location=+37.8199-122.4783/ "$media/camera.mp4"  # 3GPP loci box
ffmpeg "${video[@]}" -metadata location=+48.8584+002.2945/ "$media/trip.mov"    # QuickTime ©xyz
ffmpeg -v error -f lavfi -i sine=frequency=440:duration=2 -c:a libmp3lame -fflags +bitexact \
  -flags:a +bitexact -metadata title="Sine in A" -metadata artist="Example Band" -y \
  "$media/track.mp3"
# A small valid PDF, with the xref table readers check (ImageMagick's policy forbids writing PDF
# on Debian).
pdf() {
  local text=$1 out="%PDF-1.4"$'\n' xref i
  local objs=("<</Type/Catalog/Pages 2 0 R>>" "<</Type/Pages/Kids[3 0 R]/Count 1>>"
    "<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>"
    "<</Length $((${#text} + 30))>>"$'\n'"stream"$'\n'"BT /F1 12 Tf 10 50 Td ($text) Tj ET"$'\n'"endstream"
    "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>")
  local offsets=()
  for i in "${!objs[@]}"; do
    offsets+=("${#out}")
    out+="$((i + 1)) 0 obj"$'\n'"${objs[i]}"$'\n'"endobj"$'\n'
  done
  xref=${#out}
  out+="xref"$'\n'"0 $((${#objs[@]} + 1))"$'\n'"0000000000 65535 f "$'\n'
  for i in "${offsets[@]}"; do out+=$(printf '%010d 00000 n ' "$i")$'\n'; done
  out+="trailer"$'\n'"<</Size $((${#objs[@]} + 1))/Root 1 0 R>>"$'\n'"startxref"$'\n'"$xref"$'\n'"%%EOF"$'\n'
  printf '%s' "$out"
}

# --- One user's storage ----------------------------------------------------------------------
owners=$out/owners.tsv
: >"$owners"
# put <user> <path> <app id> <source file or -> [text]: a file as if that app had created it
# through the mount (the daemon records the creator's uid in trusted.scopedfs.owner).
put() {
  local user=$1 rel=$2 app=$3 src=$4 text=${5:-}
  local dst="$data/media/$user/$rel"
  mkdir -p "$(dirname "$dst")"
  if [[ "$src" == - ]]; then printf '%s' "$text" >"$dst"; else cp "$src" "$dst"; fi
  chmod 0660 "$dst"
  printf 'media/%s/%s\t%s\n' "$user" "$rel" $((user * 100000 + app)) >>"$owners"
}
own_dir() {  # own_dir <user> <path> <app id>: an app's own directory (Android/data/<pkg>, ...)
  mkdir -p "$data/media/$1/$2"
  printf 'media/%s/%s\t%s\n' "$1" "$2" $(($1 * 100000 + $3)) >>"$owners"
}
for user in "${user_list[@]}"; do
  root=$data/media/$user
  for d in Alarms Android/data Android/media Android/obb Audiobooks DCIM/Camera Documents \
    Download Movies Music Notifications Pictures Podcasts Recordings Ringtones; do
    mkdir -p "$root/$d"
  done
  put "$user" DCIM/Camera/IMG_20240612_101500.jpg 10065 "$media/golden_gate.jpg"
  put "$user" DCIM/Camera/IMG_20240613_183000.jpg 10065 "$media/eiffel.jpg"
  put "$user" DCIM/Camera/IMG_20240614_090000.jpg 10065 "$media/no_location.jpg"
  put "$user" DCIM/Camera/VID_20240612_101700.mp4 10065 "$media/camera.mp4"
  put "$user" Movies/Paris_trip.mov 10061 "$media/trip.mov"   # an edit the gallery exported
  put "$user" Pictures/Chat/IMG-received.jpg 10062 "$media/received.jpg"
  put "$user" Music/Example_Band-Sine_in_A.mp3 10063 "$media/track.mp3"
  pdf "Boarding pass" >"$media/boarding.pdf"
  pdf "Invoice 2024-06" >"$media/invoice.pdf"
  put "$user" Download/boarding_pass.pdf 10062 "$media/boarding.pdf"
  put "$user" Download/invoice.pdf 10064 "$media/invoice.pdf"
  put "$user" Download/packing_list.txt 10062 - $'passport\ncharger\n'
  for a in "${APPS[@]}"; do
    IFS='|' read -r pkg id _ _ <<<"$a"
    own_dir "$user" "Android/data/$pkg" "$id"
    own_dir "$user" "Android/data/$pkg/files" "$id"
  done
  put "$user" Android/data/com.example.camera/files/settings.json 10065 - '{"hdr":true}'
  put "$user" Android/data/com.example.gallery/files/thumbnails.db 10061 - 'SQLite format 3'
  put "$user" Android/data/com.example.chat/files/messages.db 10062 - 'SQLite format 3'
  put "$user" Android/data/com.example.files/files/bookmarks.txt 10064 - $'Download\n'
  put "$user" Android/data/com.example.music/files/library.db 10063 - 'SQLite format 3'
done
rm -rf "$media"
find "$data/media" -type d -exec chmod 0771 {} +

# As root, record owners on the tree too (so it can be served as it is); mke2fs -d copies them.
if [[ $(id -u) -eq 0 ]]; then
  while IFS=$'\t' read -r rel uid; do
    setfattr -n trusted.scopedfs.owner -v "$uid" "$data/$rel"
  done <"$owners"
fi
if [[ "$profile" == demo ]]; then
  mke2fs -q -F -t ext4 -L userdata -d "$data" "$out/userdata.img" "$size"
else
  # fs_mgr's format_ext4: mke2fs -t ext4 -b 4096 -I 512 with Android's mke2fs.conf (-T default:
  # the usage type of a real userdata size, whatever --size says).
  MKE2FS_CONFIG=$here/mke2fs.android.conf \
    mke2fs -q -F -t ext4 -T default -b 4096 -I 512 -d "$data" "$out/userdata.img" "$size"
  # fs_mgr's tune_casefold at boot; before the layout, whose directories carry the casefold flag.
  tune2fs -O casefold -E encoding=utf8 "$out/userdata.img" >/dev/null
fi
# debugfs writes the same xattrs into the image whoever runs this; paths have no spaces.
while IFS=$'\t' read -r rel uid; do
  echo "ea_set /$rel trusted.scopedfs.owner $uid"
done <"$owners" >"$out/.debugfs.cmds"
if [[ "$profile" == android ]]; then
  mkdir "$out/.acl"
  python3 "$here/android_layout.py" "$data" "$out/packages.list" "$here/android_file_contexts" \
    "$out/.acl" >>"$out/.debugfs.cmds"
fi
debugfs -w -f "$out/.debugfs.cmds" "$out/userdata.img" >/dev/null 2>"$out/.debugfs.err" ||
  { cat "$out/.debugfs.err" >&2; exit 1; }
if grep -v '^debugfs ' "$out/.debugfs.err" | grep -q .; then
  echo "make_device_image: debugfs could not record every owner:" >&2
  cat "$out/.debugfs.err" >&2
  exit 1
fi
rm -rf "$out/.debugfs.cmds" "$out/.debugfs.err" "$out/.acl"
if [[ "$profile" == android ]]; then
  # fs_mgr's tune_quota at boot, after the layout so the usage it counts is the final one.
  tune2fs -O quota -Q usrquota,grpquota,prjquota "$out/userdata.img" >/dev/null
fi
echo "make_device_image: $out/userdata.img ($profile profile, $size, users ${users}," \
  "$(wc -l <"$owners") owned files)"
