#!/usr/bin/env bash
# Oracle test of location redaction: the redacted copies scopedfsctl scan writes of real media are
# judged by independent readers (exiftool, ffprobe/ffmpeg, ImageMagick), not by our own parsers.
# Each check is also run against the original where that is what proves the check can fail.
set -u

CTL=tools/scopedfsctl
MEDIA=tests/media
TMP=${TEST_TMPDIR:-$(mktemp -d)}
OUT=$TMP/redacted
mkdir -p "$OUT"
failures=0
passes=0

pass() { echo "PASS: $1"; passes=$((passes + 1)); }
fail() {  # fail <description> [detail]
  echo "FAIL: $1"
  if [ -n "${2:-}" ]; then printf '%s\n' "$2" | sed 's/^/      /'; fi
  failures=$((failures + 1))
}
check() {  # check <description> <command...>: the command must succeed
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
empty() {  # empty <description> <text>: the text must be empty (it is shown otherwise)
  if [ -z "$2" ]; then pass "$1"; else fail "$1" "$2"; fi
}

IMAGES="gps.jpg gps_le.jpg gps.png gps.webp gps.heic gps.avif"
XMP_IMAGES="gps.jpg gps.png gps.webp gps.heic gps.avif"  # gps_le.jpg has Exif only
VIDEOS="loc.mp4 loc.mov loc.3gp loc.m4a keys.mov"
CLEAN="clean.jpg clean.mp4"
# How the samples' coordinates (37.7749, -122.4194) print in exiftool's -n, degree and
# ISO 6709 notations.
COORDS='37\.77|122\.41|37 deg 46|122 deg 25'

for tool in exiftool ffprobe ffmpeg /usr/bin/convert; do
  if ! command -v "$tool" >/dev/null; then
    fail "$tool is installed (run tools/setup.sh)"
    echo "location_oracle_test: $passes passed, $failures failed"
    exit 1
  fi
done

# The ranges scan printed for a file, one "begin end fill" (fill in decimal) per line.
ranges_of() {
  awk '
    function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3));
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1;
      return v }
    /^  range / { gsub(/[\[\),]/, " "); print $2, $3, hex($6) }' "$1"
}

# Prints every byte of RED that is not what the ranges say: outside them, the original's byte;
# inside, the fill (zero where a zero range and a space range overlap, as PlanFills decides).
byte_problems() {  # byte_problems <orig> <red> <ranges file>
  local orig=$1 red=$2 ranges=$3
  if [ "$(stat -L -c %s "$orig")" != "$(stat -L -c %s "$red")" ]; then
    echo "size $(stat -L -c %s "$red") != original $(stat -L -c %s "$orig")"
    return
  fi
  # cmp -l: 1-based offset and both bytes in octal, for every byte that differs.
  cmp -l "$orig" "$red" | awk -v R="$ranges" '
    BEGIN { while ((getline line < R) > 0) { split(line, a, " "); n++; b[n] = a[1]; e[n] = a[2] } }
    { off = $1 - 1; inside = 0
      for (i = 1; i <= n; i++) if (off >= b[i] && off < e[i]) { inside = 1; break }
      if (!inside && shown++ < 10) print "byte " off " changed outside every range" }'
  od -An -v -tu1 -w1 "$red" | awk -v R="$ranges" '
    BEGIN { while ((getline line < R) > 0) { split(line, a, " "); n++; b[n] = a[1]; e[n] = a[2]; f[n] = a[3] } }
    { off = NR - 1; want = -1
      for (i = 1; i <= n; i++) if (off >= b[i] && off < e[i] && (want == -1 || f[i] == 0)) want = f[i]
      if (want != -1 && $1 != want && shown++ < 10) print "byte " off " is " $1 ", not the fill " want }'
}

# Warning and Error lines of exiftool, without the tag-name column, sorted: what reading the file
# complains about (parse_messages), and what the stricter -validate conformance check adds.
parse_messages() {
  exiftool -warning -error -a "$1" 2>&1 | grep -E '^(Warning|Error)' | sed 's/^[^:]*: //' |
    sort -u
}
validate_messages() {
  exiftool -validate -warning -error -a "$1" 2>&1 | grep -E '^(Warning|Error)' | sed 's/^[^:]*: //' |
    sort -u
}
# Conformance notes that filling cannot avoid, and nothing else: an emptied GPS IFD no longer has
# the GPSVersionID the Exif spec requires (zeroing its entry count is the only fill that leaves no
# GPS tag), and a PNG chunk whose bytes were filled keeps its old CRC (a fill cannot recompute it;
# readers drop an ancillary chunk with a bad CRC and decode the image).
KNOWN_VALIDATE_NOTES='^(\[minor\] )?Missing required JPEG GPS tag 0x0000 GPSVersionID$|^Bad CRC for (eXIf|iTXt|tEXt|zTXt) chunk$'

# ffprobe's complaints, with the file name and pointer values taken out so two files compare.
ffprobe_errors() {
  ffprobe -v error -show_streams -show_format "$1" 2>&1 >/dev/null | sed -e "s|$1|FILE|g" \
    -e 's/@ 0x[0-9a-f]*/@ ADDR/g' | sort -u
}

ffmpeg_decode_errors() {
  ffmpeg -v error -i "$1" -f null - 2>&1 | sed -e "s|$1|FILE|g" -e 's/@ 0x[0-9a-f]*/@ ADDR/g' |
    sort -u
}

# Values (tag names cut off) of the video location tags exiftool knows.
meta() { exiftool -a -G1 -location:all -gps:all -keys:all "$1" | sed 's/^[^:]*: //'; }

# ffprobe's container tags with "location" in the key (location, location-eng, ...ISO6709).
tags() { ffprobe -v error -show_entries format_tags "$1" | grep -i '^TAG:[^=]*location[^=]*='; }

# Lines of `new` that are not in `old` (both sorted).
added() { comm -13 <(printf '%s\n' "$1") <(printf '%s\n' "$2") | sed '/^$/d'; }

# Scans one sample with --redacted_out; sets RED, RANGES. Returns nonzero if nothing to judge.
scan_sample() {
  local f=$1
  RED=$OUT/$f
  RANGES=$TMP/$f.ranges
  "$CTL" scan "$MEDIA/$f" --redacted_out="$OUT" >"$TMP/$f.scan" 2>"$TMP/$f.err"
  local rc=$?
  if [ "$rc" -ne 0 ] || [ ! -f "$RED" ]; then
    fail "$f: scan exits 0 and writes the redacted copy" "rc $rc: $(cat "$TMP/$f.err")"
    return 1
  fi
  pass "$f: scan exits 0 and writes the redacted copy"
  check "$f: scan is not malformed" grep -q '^  malformed: no$' "$TMP/$f.scan"
  ranges_of "$TMP/$f.scan" >"$RANGES"
  return 0
}

# Checks every redacted copy of a location-carrying sample shares.
common_checks() {
  local f=$1 orig=$MEDIA/$1
  check "$f: scan reports location ranges" test -s "$RANGES"
  empty "$f: bytes outside the ranges are the original's, inside are the fill" \
    "$(byte_problems "$orig" "$RED" "$RANGES")"
  check "$f: original shows the coordinates somewhere (exiftool -a -G1 -n)" \
    grep -qE "$COORDS" <(exiftool -a -G1 -n "$orig")
  empty "$f: redacted shows the coordinates nowhere (exiftool -a -G1 -n)" \
    "$(exiftool -a -G1 -n "$RED" | grep -E "$COORDS")"
  empty "$f: exiftool reads it with no warning or error the original did not have" \
    "$(added "$(parse_messages "$orig")" "$(parse_messages "$RED")")"
  empty "$f: exiftool -validate adds only the known notes of filling" \
    "$(added "$(validate_messages "$orig")" "$(validate_messages "$RED")" | grep -vE "$KNOWN_VALIDATE_NOTES")"
  empty "$f: ffprobe reports no new errors" \
    "$(added "$(ffprobe_errors "$orig")" "$(ffprobe_errors "$RED")")"
}

for f in $IMAGES; do
  scan_sample "$f" || continue
  common_checks "$f"
  orig=$MEDIA/$f
  check "$f: original has Exif GPS tags" grep -q 'GPS Latitude' <(exiftool -a -G1 -gps:all "$orig")
  empty "$f: redacted has no Exif GPS tag" "$(exiftool -a -G1 -gps:all "$RED")"
  if [[ " $XMP_IMAGES " == *" $f "* ]]; then
    check "$f: original has XMP GPS properties" \
      grep -qi gps <(exiftool -a -G1 -xmp-exif:all "$orig")
  fi
  empty "$f: redacted has no XMP GPS property" \
    "$(exiftool -a -G1 -xmp-exif:all "$RED" | grep -i gps)"
  if /usr/bin/convert "$orig" ppm:- >/dev/null 2>&1; then
    check "$f: ImageMagick still decodes the redacted copy" \
      /usr/bin/convert "$RED" ppm:- >/dev/null 2>&1
  else
    fail "$f: ImageMagick decodes the original"
  fi
done

for f in $VIDEOS; do
  scan_sample "$f" || continue
  common_checks "$f"
  orig=$MEDIA/$f
  check "$f: original has location (exiftool Location/GPS/Keys)" grep -q '37' <(meta "$orig")
  # A zero-filled box may still decode, as 0 deg 0' 0.00" N or Lat=0.00000: that is no
  # location. Any nonzero digit in a value is.
  empty "$f: redacted has no coordinates (exiftool Location/GPS/Keys)" \
    "$(meta "$RED" | grep '[1-9]')"
  check "$f: ffprobe shows the original's location tag" grep -qF '+37.7749' <(tags "$orig")
  # A zero-filled 3GPP loci box still decodes (ffprobe prints "+00.0000+000.0000/") and a
  # zero-filled ©xyz string decodes as an empty tag: both carry no location. Any nonzero digit
  # in a location tag would.
  empty "$f: ffprobe location tags absent or zero" "$(tags "$RED" | sed 's/^[^=]*=//' | grep '[1-9]')"
  empty "$f: ffmpeg decodes the redacted copy with no new errors" \
    "$(added "$(ffmpeg_decode_errors "$orig")" "$(ffmpeg_decode_errors "$RED")")"
done

for f in $CLEAN; do
  scan_sample "$f" || continue
  empty "$f: no location ranges" "$(cat "$RANGES")"
  check "$f: scan says location absent" grep -q '^  location:  absent$' "$TMP/$f.scan"
  check "$f: redacted copy is identical" cmp -s "$MEDIA/$f" "$RED"
done

echo "location_oracle_test: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
