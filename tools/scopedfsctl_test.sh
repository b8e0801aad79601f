#!/usr/bin/env bash
# End-to-end tests of scopedfsctl validate/explain/scan/stats: exit codes, located errors,
# explanations for the shipped Android policy, location scans of real media (the
# //tests:media_samples), and stats from a stand-in daemon (tools/fake_control_server), checked
# with jq.
set -uo pipefail

CTL=tools/scopedfsctl
POLICY=policy/configs/android.textproto
APPS=policy/configs/apps.textproto
MEDIA=tests/media
TMP=${TEST_TMPDIR:-$(mktemp -d)}
failures=0
passes=0

check() {  # check <description> <command...>: the command must succeed
  local what=$1; shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

run() {  # run <args...>: sets OUT, ERR, RC
  "$CTL" "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  OUT=$(cat "$TMP/out")
  ERR=$(cat "$TMP/err")
}

# validate
run validate --policy=$POLICY --apps=$APPS
check "valid config exits 0" test "$RC" -eq 0
check "valid config says OK" grep -q '^OK: policy "android", 32 rules, 9 apps, visibility LISTING$' "$TMP/out"

run validate --policy=policy/testdata/config/many_problems/policy.textproto \
  --apps=policy/testdata/config/many_problems/apps.textproto
check "broken config exits 1" test "$RC" -eq 1
check "every problem is printed" test "$(grep -c '^policy/testdata/config/many_problems/[a-z]*\.textproto:[0-9]*:[0-9]*: ' "$TMP/err")" -eq 10
check "broken config prints the golden text" diff "$TMP/err" policy/testdata/config/many_problems/expected.golden

run validate --policy=$POLICY
check "missing --apps is a usage error" test "$RC" -eq 2
run validate --policy=/nonexistent.textproto --apps=$APPS
check "missing file exits 1" test "$RC" -eq 1
check "missing file is named" grep -q '/nonexistent.textproto: cannot open' "$TMP/err"
run frobnicate
check "unknown command exits 2" test "$RC" -eq 2
run validate --policy=$POLICY --apps=$APPS --no_such_flag=1
check "unknown flag fails" test "$RC" -ne 0

printf 'com.example.newapp 10090 0 /data/user/0/com.example.newapp default:targetSdkVersion=34 none 0 1\n' >"$TMP/packages.list"
run validate --policy=$POLICY --apps=$APPS --packages_list="$TMP/packages.list"
check "packages.list merges" grep -q ', 1 packages.list entries$' "$TMP/out"
printf 'com.example.newapp 10090 0\n' >"$TMP/bad.list"
run validate --policy=$POLICY --apps=$APPS --packages_list="$TMP/bad.list"
check "malformed packages.list exits 1" test "$RC" -eq 1
check "malformed packages.list has line:col" grep -q "bad.list:1:[0-9]*: " "$TMP/err"

# explain
# A photo with Exif and XMP GPS, as exiftool writes it; a truncated JPEG (a header and nothing
# else), which the location scan cannot vouch for.
PHOTO=$MEDIA/gps.jpg
printf '\xff\xd8\xff\xe0\x00\x10JFIF\x00' >"$TMP/truncated.jpg"
printf '%%PDF-1.7\n' >"$TMP/doc.pdf"

run explain --policy=$POLICY --apps=$APPS --package=com.example.social --op=read \
  --path=DCIM/Camera/IMG_1.jpg --content="$PHOTO" --owner_uid=10065
check "explain exits 0" test "$RC" -eq 0
check "social is redacted" grep -q '^decision: ALLOW_REDACTED$' "$TMP/out"
check "redactions listed" grep -q '^redact:   REDACTION_EXIF_GPS, REDACTION_XMP_GPS, REDACTION_ISOBMFF_LOCATION, REDACTION_IPTC_PLACE, REDACTION_XMP_PLACE$' "$TMP/out"
check "rule and location shown" grep -q '^rule:     redact-image-location (policy/configs/android.textproto:[0-9]*:1)$' "$TMP/out"
check "reason shown" grep -q '^reason:   .*ACCESS_MEDIA_LOCATION' "$TMP/out"
check "caller shown" grep -q '^caller:   uid 10062 (app, user 0, app id 10062): com.example.social$' "$TMP/out"
check "scanned location is present" grep -q '^content:  IMAGE; location present ([0-9]* ranges); .*format jpeg$' "$TMP/out"
check "zero fills listed" grep -q '^fill:     \[[0-9]*, [0-9]*) with 0x00$' "$TMP/out"
check "space fills listed (XMP)" grep -q '^fill:     \[[0-9]*, [0-9]*) with 0x20$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --package=com.example.social --op=read \
  --path=DCIM/Camera/IMG_1.jpg --content="$MEDIA/clean.jpg" --owner_uid=10065
check "photo without location is read raw" grep -q '^decision: ALLOW$' "$TMP/out"
check "scanned location is absent" grep -q '; location absent (scanned); ' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --package=com.example.social --op=read \
  --path=DCIM/Camera/IMG_1.jpg --content="$TMP/truncated.jpg" --owner_uid=10065
check "malformed photo exits 0" test "$RC" -eq 0
check "malformed photo denied to a redacted reader" grep -q '^decision: DENY (EACCES)$' "$TMP/out"
check "malformed reason names uncertain_location" grep -q '^reason:   .*uncertain_location: DENY' "$TMP/out"
check "malformed location shown with its error" grep -q '; location malformed (at byte [0-9]*: .*)' "$TMP/out"
check "no fills for a denied read" test "$(grep -c '^fill:' "$TMP/out")" -eq 0

# Under REDACT_ALL the same file is served with everything from the failure point on filled.
{ cat $POLICY; echo 'uncertain_location: UNCERTAIN_LOCATION_REDACT_ALL'; } >"$TMP/redact_all.textproto"
run explain --policy="$TMP/redact_all.textproto" --apps=$APPS --package=com.example.social \
  --op=read --path=DCIM/Camera/IMG_1.jpg --content="$TMP/truncated.jpg" --owner_uid=10065
check "REDACT_ALL serves the malformed photo redacted" grep -q '^decision: ALLOW_REDACTED$' "$TMP/out"
check "REDACT_ALL fills the fallback" grep -q '^fill:     \[[0-9]*, 11) with 0x00$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10061 --op=read --path=DCIM/Camera/IMG_1.jpg \
  --content="$PHOTO" --owner_uid=10065
check "gallery reads raw" grep -q '^decision: ALLOW$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=DCIM/secret.jpg \
  --content="$TMP/doc.pdf" --owner_uid=10067
# The Android policy's LISTING visibility: a hidden name is found, and reading it refused.
check "pdf disguised as jpg is refused" grep -q '^decision: DENY (EACCES)$' "$TMP/out"
check "listing visibility shown" grep -q '^visible:  LISTING: ' "$TMP/out"
check "sniffed format shown" grep -q 'format pdf' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --package=com.example.camera --op=create --path=DCIM/x.pdf
check "wrong type in DCIM is EPERM" grep -q '^decision: DENY (EPERM)$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10067 --op=mkdir --path=MyApp
check "custom top-level dir is EPERM" grep -q '^decision: DENY (EPERM)$' "$TMP/out"
check "mkdir defaults to a directory" grep -q ', dir$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=../etc/passwd
check "hostile path is a usage error" test "$RC" -eq 2
check "hostile path's problem is named" grep -q "path has a '..' segment" "$TMP/err"

run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=chew --path=DCIM/a.jpg
check "unknown op exits 2" test "$RC" -eq 2
run explain --policy=$POLICY --apps=$APPS --op=read --path=DCIM/a.jpg
check "no caller exits 2" test "$RC" -eq 2
run explain --policy=$POLICY --apps=$APPS --package=com.nope --op=read --path=DCIM/a.jpg
check "unknown package exits 2" test "$RC" -eq 2
run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=DCIM/a.jpg --content=/nonexistent
check "unreadable --content exits 1" test "$RC" -eq 1

# scan
mkdir -p "$TMP/red"
run scan "$PHOTO" "$MEDIA/loc.mp4" "$MEDIA/clean.jpg" --redacted_out="$TMP/red"
check "scan exits 0" test "$RC" -eq 0
check "scan names the format" grep -q "^$PHOTO: format jpeg, [0-9]* bytes$" "$TMP/out"
check "scan finds the location" grep -q '^  location:  present, [0-9]* ranges$' "$TMP/out"
check "scan prints Exif ranges" grep -q '^  range     \[[0-9]*, [0-9]*) exif_gps fill 0x00$' "$TMP/out"
check "scan prints XMP ranges" grep -q '^  range     \[[0-9]*, [0-9]*) xmp_gps fill 0x20$' "$TMP/out"
check "scan prints video ranges" grep -q '^  range     \[[0-9]*, [0-9]*) isobmff_location fill 0x00$' "$TMP/out"
check "scan prints malformed" test "$(grep -c '^  malformed: no$' "$TMP/out")" -eq 3
check "scan prints its cost" grep -q '^  cost:      [0-9]* bytes read, [0-9]* structures visited, [0-9]* bytes swept$' "$TMP/out"
check "clean photo has no location" grep -q '^  location:  absent$' "$TMP/out"
check "redacted copies written" test -f "$TMP/red/gps.jpg" -a -f "$TMP/red/loc.mp4" -a -f "$TMP/red/clean.jpg"
check "redacted copy keeps the size" test "$(stat -L -c %s "$PHOTO")" -eq "$(stat -c %s "$TMP/red/gps.jpg")"
check "redacted copy differs" test -n "$(cmp -l "$PHOTO" "$TMP/red/gps.jpg")"
check "clean copy is identical" cmp -s "$MEDIA/clean.jpg" "$TMP/red/clean.jpg"

# --kinds=xmp_gps: only the XMP ranges are filled; every changed byte becomes a space.
mkdir -p "$TMP/xmp_only"
run scan "$PHOTO" --kinds=xmp_gps --redacted_out="$TMP/xmp_only"
check "scan --kinds marks the unfilled kinds" grep -q 'exif_gps fill 0x00 (not in --kinds)$' "$TMP/out"
check "scan --kinds fills only spaces" test -z "$(cmp -l "$PHOTO" "$TMP/xmp_only/gps.jpg" | awk '$3 != 40')"

run scan "$TMP/truncated.jpg"
check "malformed file still scans (exit 0)" test "$RC" -eq 0
check "malformed error printed" grep -q '^  malformed: yes: at byte [0-9]*: ' "$TMP/out"
check "malformed fallback printed" grep -q '^  fallback  \[[0-9]*, 11) ' "$TMP/out"

run scan "$PHOTO" /nonexistent.jpg --redacted_out="$TMP/red"
check "unreadable file exits 1" test "$RC" -eq 1
check "unreadable file is named" grep -q '^scopedfsctl: /nonexistent.jpg: No such file or directory$' "$TMP/err"
check "readable files still scanned" grep -q "^$PHOTO: format jpeg" "$TMP/out"
run scan "$PHOTO" --kinds=exif_gps,nope
check "unknown kind exits 1" test "$RC" -eq 1
check "unknown kind is named" grep -q 'unknown kind "nope"' "$TMP/err"
run scan "$PHOTO" --redacted_out=/nonexistent/dir
check "missing --redacted_out dir exits 1" test "$RC" -eq 1
check "missing --redacted_out dir is named" grep -q '^scopedfsctl: --redacted_out=/nonexistent/dir: ' "$TMP/err"
cp "$PHOTO" "$TMP/self.jpg"
run scan "$TMP/self.jpg" --redacted_out="$TMP"
check "refuses to overwrite the input" test "$RC" -eq 1 -a -z "$(cmp -l "$PHOTO" "$TMP/self.jpg")"
run scan
check "scan without files is a usage error" test "$RC" -eq 2

# stats: the stand-in answers with open_passthrough 17, read_requests 2^40, one lookup, and the
# policy name given; a name with a quote and a non-ASCII letter must come out as JSON jq reads.
if ! command -v jq >/dev/null; then
  echo "FAIL: jq is not installed (tools/setup.sh installs it)"
  failures=$((failures + 1))
else
  SOCK=$(mktemp -u /tmp/scopedfsctl-test-XXXXXX.sock)  # TEST_TMPDIR is too long for sun_path
  NAME="it's café \"quoted\""
  tools/fake_control_server --socket="$SOCK" --policy_name="$NAME" --connections=2 &
  server=$!
  for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
  run --socket="$SOCK" stats --json
  check "stats --json exits 0" test "$RC" -eq 0
  check "stats --json is one JSON object jq accepts" jq -e 'type == "object"' "$TMP/out"
  check "policy name survives JSON" test "$(jq -r .policy "$TMP/out")" = "$NAME"
  check "counters are numbers" jq -e '.open_passthrough == 17 and .read_requests == 1099511627776' "$TMP/out"
  check "zero counters are printed" jq -e '.open_denied == 0 and .passthrough_enabled == true' "$TMP/out"
  check "every op is listed with its percentiles" jq -e '(.ops | length) == 17 and .ops[0].op == "lookup" and .ops[0].count == 1 and .ops[0].p50_ns == 1024' "$TMP/out"
  run --socket="$SOCK" stats
  check "stats exits 0" test "$RC" -eq 0
  check "stats names the policy" grep -qF "policy:              $NAME" "$TMP/out"
  check "stats lists each counter" grep -q '^read_requests: *1099511627776$' "$TMP/out"
  check "stats lists op latencies" grep -q '^lookup  *1  *1.0us ' "$TMP/out"
  wait "$server"
  check "stand-in server answered both" test $? -eq 0
  rm -f "$SOCK"
fi
run --socket=/nonexistent/scopedfsd.sock stats
check "stats without a daemon exits 1" test "$RC" -eq 1
check "stats without a daemon says so once" test "$(grep -o 'No such file or directory' "$TMP/err" | wc -l)" -eq 1
# --mount names the daemon by its mount point: the default socket in /run/scopedfs it would bind
# (a real daemon reached this way is tests/mount_helper_recovery_mount_test's).
run --mount=/nonexistent/storage/emulated/9 stats
check "stats --mount without a daemon exits 1" test "$RC" -eq 1
check "stats --mount looks where the daemon binds" \
  grep -qF "cannot reach scopedfsd at /run/scopedfs/nonexistent-storage-emulated-9.sock" "$TMP/err"
run --mount=/x --socket=/y stats
check "stats with --mount and --socket is a usage error" test "$RC" -eq 2
# repair of a mount point that is not a dead mount changes nothing and says so (a dead one is
# tests/mount_helper_mount_test's, which needs root and /dev/fuse).
run repair --mount=/nonexistent/storage/emulated/9
check "repair of a live or missing mount point exits 0" test "$RC" -eq 0
check "repair says there was nothing to repair" \
  grep -qF "no dead scopedfs mount at /nonexistent/storage/emulated/9" "$TMP/out"

# help, version and usage errors a new user meets first
for h in help --help -h; do
  run $h
  check "$h exits 0" test "$RC" -eq 0
  check "$h lists --policy" grep -q '^  --policy$' "$TMP/out"
done
run --version
check "--version exits 0" test "$RC" -eq 0
check "--version names version, commit and build" grep -Eq '^scopedfsctl [0-9]+\.[0-9]+\.[0-9]+ \(commit .*build' "$TMP/out"
run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=opne --path=DCIM/a.jpg
check "unknown --op is a usage error" test "$RC" -eq 2
check "unknown --op lists the operations" grep -q 'one of lookup|read|write|create|delete|rename|mkdir|rmdir|setattr' "$TMP/err"
run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=/storage/emulated/0/DCIM/Camera/a.jpg
check "a device path is accepted" test "$RC" -eq 0
check "a device path is judged as its storage path" grep -q '^decision: ALLOW_REDACTED$' "$TMP/out"
run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=/etc/passwd
check "a path outside the storage is a usage error" test "$RC" -eq 2
check "... that says what is expected" grep -q "is not in user 0's storage" "$TMP/err"
run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=DCIM/../x
check "a malformed path is a usage error" test "$RC" -eq 2

echo "scopedfsctl_test: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
