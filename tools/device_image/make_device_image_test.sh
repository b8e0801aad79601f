#!/usr/bin/env bash
# Checks what make_device_image.sh builds, with the tools a user would check it with, no root and
# no mount: exiftool finds GPS in the camera's photos (and none in the photo taken without),
# ffprobe finds location in both videos and an mp3 in Music, the apps file and packages.list
# validate against the Android policy, e2fsck passes the image, and debugfs finds every recorded
# owner inside the image with its uid (user 10's files with user 10's uids).
set -uo pipefail

BUILDER=tools/device_image/make_device_image.sh
CTL=tools/scopedfsctl
POLICY=policy/configs/android.textproto
TMP=${TEST_TMPDIR:-$(mktemp -d)}
export PATH="$PATH:/usr/sbin:/sbin"
failures=0
passes=0
check() {  # check <description> <command...>: the command must succeed
  local what=$1
  shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
equals() {  # equals <description> <actual> <expected>
  if [[ "$2" == "$3" ]]; then passes=$((passes + 1)); else
    printf 'FAIL: %s\n  got:      %s\n  expected: %s\n' "$1" "$2" "$3"
    failures=$((failures + 1))
  fi
}

out=$TMP/device
"$BUILDER" --users=0,10 --size=64M "$out" >"$TMP/build.log" 2>&1 ||
  { cat "$TMP/build.log"; echo "FAIL: the builder failed"; exit 1; }
data=$out/data/media/0

gps() { exiftool -q -q -n -p '$GPSLatitude $GPSLongitude' "$1" 2>/dev/null; }
equals "Golden Gate photo carries GPS" "$(gps "$data/DCIM/Camera/IMG_20240612_101500.jpg")" \
  "37.8199 -122.4783"
equals "Eiffel photo carries GPS" "$(gps "$data/DCIM/Camera/IMG_20240613_183000.jpg")" \
  "48.8584 2.2945"
equals "received photo carries GPS" "$(gps "$data/Pictures/Chat/IMG-received.jpg")" \
  "-33.8568 151.2153"
equals "photo without location has none" "$(gps "$data/DCIM/Camera/IMG_20240614_090000.jpg")" ""
equals "the photo is a JPEG" \
  "$(exiftool -q -q -p '$FileType $ImageSize' "$data/DCIM/Camera/IMG_20240612_101500.jpg")" \
  "JPEG 320x240"
loc() { ffprobe -v error -show_entries format_tags=location -of default=nw=1:nk=1 "$1"; }
equals "Movies video carries location" "$(loc "$data/Movies/Paris_trip.mov")" "+48.8584+002.2945/"
equals "camera video carries location" "$(loc "$data/DCIM/Camera/VID_20240612_101700.mp4")" \
  "+37.8199-122.4783/"
equals "Music holds an mp3" "$(ffprobe -v error -show_entries stream=codec_name -of \
  default=nw=1:nk=1 "$data/Music/Example_Band-Sine_in_A.mp3")" "mp3"
equals "Download holds PDFs" "$(exiftool -q -q -p '$FileType' "$data/Download/invoice.pdf")" "PDF"
for pkg in camera gallery chat files music; do
  check "Android/data/com.example.$pkg exists" test -d "$data/Android/data/com.example.$pkg/files"
done
check "user 10 has its storage too" test -f "$out/data/media/10/DCIM/Camera/IMG_20240612_101500.jpg"

check "apps and packages.list validate" "$CTL" validate --policy="$POLICY" \
  --apps="$out/apps.textproto" --packages_list="$out/packages.list"
check "the image carries packages.list where Android keeps it" \
  cmp -s "$out/packages.list" "$out/data/system/packages.list"
for app in 10061 10062 10063 10064 10065; do
  check "packages.list lists uid $app" grep -q " $app 0 " "$out/packages.list"
done
check "gallery holds ACCESS_MEDIA_LOCATION" \
  grep -A3 'package: "com.example.gallery"' "$out/apps.textproto" | grep -q ACCESS_MEDIA_LOCATION
check "chat does not" bash -c "! grep -A3 'package: \"com.example.chat\"' '$out/apps.textproto' |
  grep -q ACCESS_MEDIA_LOCATION"

check "e2fsck finds the image clean" e2fsck -fn "$out/userdata.img" >"$TMP/fsck.log" 2>&1
equals "image label" "$(dumpe2fs -h "$out/userdata.img" 2>/dev/null | sed -n 's/^Filesystem volume name: *//p')" \
  "userdata"
# Every recorded owner is in the image, with its uid.
owned=0
while IFS=$'\t' read -r rel uid; do
  echo "ea_get /$rel trusted.scopedfs.owner"
  owned=$((owned + 1))
done <"$out/owners.tsv" >"$TMP/cmds"
debugfs -f "$TMP/cmds" "$out/userdata.img" 2>/dev/null |
  sed -n 's/^trusted.scopedfs.owner ([0-9]*) = "\([0-9]*\)"$/\1/p' >"$TMP/got"
equals "every owner is in the image, in order" "$(tr '\n' ' ' <"$TMP/got")" \
  "$(cut -f2 "$out/owners.tsv" | tr '\n' ' ')"
check "owners were recorded at all (more than 40)" test "$owned" -gt 40
equals "camera owns its photo in user 10" \
  "$(grep 'media/10/DCIM/Camera/IMG_20240612_101500.jpg' "$out/owners.tsv" | cut -f2)" "1010065"

check "a second build into the same directory is refused" bash -c "! '$BUILDER' '$out' 2>/dev/null"
check "an unknown flag is refused" bash -c "! '$BUILDER' --bogus '$TMP/x' 2>/dev/null"

echo "make_device_image_test: $passes passed, $failures failed"
((failures == 0))
