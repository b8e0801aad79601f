#!/usr/bin/env bash
# Shows what each sample app may do with each file of a sample Android storage, by asking the
# policy engine (scopedfsctl explain); no mount needed. tools/demo.sh falls back to this.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh >/dev/null
bazel build //tools:scopedfsctl >/dev/null 2>&1 || bazel build //tools:scopedfsctl
CTL=bazel-bin/tools/scopedfsctl
POLICY=${POLICY:-policy/configs/android.textproto}
APPS=${APPS:-policy/configs/apps.textproto}
"$CTL" validate --policy="$POLICY" --apps="$APPS"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A whole JPEG whose Exif holds a GPS IFD (one tag, GPSLatitudeRef "N"): location present, so the
# matrix shows who gets it redacted. A cut-off segment would be malformed metadata instead, which
# the policy refuses (uncertain_location) rather than redact.
printf '\xff\xd8\xff\xe1\x00\x34Exif\x00\x00II*\x00\x08\x00\x00\x00\x01\x00\x25\x88\x04\x00\x01\x00\x00\x00\x1a\x00\x00\x00\x00\x00\x00\x00' >"$work/jpeg"
printf '\x01\x00\x01\x00\x02\x00\x02\x00\x00\x00N\x00\x00\x00\x00\x00\x00\x00\xff\xd9' >>"$work/jpeg"
printf '\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isommp41' >"$work/mp4"
printf 'ID3\x04\x00\x00\x00\x00\x00\x00' >"$work/mp3"
printf '%%PDF-1.7\n' >"$work/pdf"
: >"$work/text"

# path | content sample | creator uid (10065 camera, 10067 notes, 10063 music)
files=(
  "DCIM/Camera/IMG_0001.jpg|jpeg|10065"
  "DCIM/Camera/VID_0001.mp4|mp4|10065"
  "Music/song.mp3|mp3|10063"
  "Documents/todo.txt|text|10067"
  "Download/statement.pdf|pdf|10067"
  "Pictures/secret.jpg|pdf|10067"
  "Android/data/com.example.notes/db|text|10067"
)
apps=(com.example.gallery com.example.social com.example.music com.example.files
      com.example.camera com.example.notes)

printf '\nWhat each app gets when it opens each file for reading (policy "%s"):\n\n' "$(basename "$POLICY" .textproto)"
printf '%-42s' "file (creator)"
for a in "${apps[@]}"; do printf '%-16s' "${a#com.example.}"; done
printf '\n'
for f in "${files[@]}"; do
  IFS='|' read -r path sample owner <<<"$f"
  printf '%-42s' "$path ($owner)"
  for a in "${apps[@]}"; do
    d=$("$CTL" explain --policy="$POLICY" --apps="$APPS" --package="$a" --op=read --path="$path" \
          --content="$work/$sample" --owner_uid="$owner" | sed -n 's/^decision: //p')
    case "$d" in
      ALLOW) d=raw ;; ALLOW_REDACTED) d=redacted ;; HIDE) d=hidden ;; DENY*) d="denied${d#DENY}" ;;
    esac
    # Under listing visibility a refused read of a name listings leave out is EACCES, not HIDE.
    if [[ $d == "denied (EACCES)" ]] &&
       [[ $("$CTL" explain --policy="$POLICY" --apps="$APPS" --package="$a" --op=lookup \
              --path="$path" --content="$work/$sample" --owner_uid="$owner" |
            sed -n 's/^decision: //p') == HIDE ]]; then
      d=unlisted
    fi
    printf '%-16s' "$d"
  done
  printf '\n'
done
cat <<'NOTE'

raw: kernel passthrough, original bytes   redacted: location metadata zero-filled
hidden: ENOENT, absent from listings      denied: the errno shown
unlisted: absent from listings; a stat finds the name and an open fails EACCES (listing
          visibility, as on a device; under strict visibility such a name is hidden)
(Pictures/secret.jpg is a PDF named .jpg: content decides, so it is not an image.)

Why a decision was taken:
NOTE
"$CTL" explain --policy="$POLICY" --apps="$APPS" --package=com.example.social --op=read \
  --path=DCIM/Camera/IMG_0001.jpg --content="$work/jpeg" --owner_uid=10065
