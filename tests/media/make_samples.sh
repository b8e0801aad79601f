#!/usr/bin/env bash
# Makes the real media samples the location tests read, with the tools a user's files come from:
# ImageMagick draws the base images, exiftool writes GPS (Exif and XMP), ffmpeg writes video
# location. Usage: make_samples.sh OUT_DIR. Output is deterministic for a given tool version.
set -euo pipefail
out=$1
mkdir -p "$out"
convert=/usr/bin/convert  # the real ImageMagick, not a stand-in earlier on PATH
for tool in "$convert" exiftool ffmpeg; do
  command -v "$tool" >/dev/null || { echo "make_samples: $tool is missing (run tools/setup.sh)" >&2; exit 1; }
done

gps=(-GPSLatitude=37.7749 -GPSLatitudeRef=N -GPSLongitude=122.4194 -GPSLongitudeRef=W
     -GPSAltitude=16 -GPSAltitudeRef=0)
xmp=(-XMP-exif:GPSLatitude=37.7749 -XMP-exif:GPSLongitude=-122.4194)
exiftool_q() { exiftool -q -q -overwrite_original "$@"; }
# Fixed dates so reruns give identical bytes.
export SOURCE_DATE_EPOCH=0

"$convert" -size 96x64 gradient:red-blue -define png:exclude-chunks=date,time +set date:create \
  +set date:modify "$out/clean.jpg"
cp "$out/clean.jpg" "$out/gps.jpg"
exiftool_q "${gps[@]}" "${xmp[@]}" "$out/gps.jpg"            # Exif big-endian (MM) + XMP
cp "$out/clean.jpg" "$out/gps_le.jpg"
exiftool_q -ExifByteOrder=II "${gps[@]}" "$out/gps_le.jpg"    # Exif little-endian (II)
for fmt in png webp heic avif; do
  "$convert" "$out/clean.jpg" -define png:exclude-chunks=date,time +set date:create \
    +set date:modify "$out/gps.$fmt"
  exiftool_q "${gps[@]}" "${xmp[@]}" "$out/gps.$fmt"
done

video=(-v error -f lavfi -i testsrc=duration=1:size=64x48:rate=10 -c:v mpeg4
       -fflags +bitexact -flags:v +bitexact -y)
loc=(-metadata location=+37.7749-122.4194/)
ffmpeg "${video[@]}" "$out/clean.mp4"
ffmpeg "${video[@]}" "${loc[@]}" "$out/loc.mp4"   # 3GPP loci box
ffmpeg "${video[@]}" "${loc[@]}" "$out/loc.mov"   # QuickTime udta/©xyz
ffmpeg "${video[@]}" "${loc[@]}" "$out/loc.3gp"
ffmpeg -v error -f lavfi -i sine=duration=1 -c:a aac -fflags +bitexact -flags:a +bitexact \
  "${loc[@]}" -y "$out/loc.m4a"
# QuickTime keys/ilst location, as phones write it.
cp "$out/loc.mov" "$out/keys.mov"
exiftool_q -Keys:GPSCoordinates="37.7749, -122.4194, 16" "$out/keys.mov"
