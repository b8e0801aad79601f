#!/usr/bin/env bash
# End-to-end tests of scopedfsctl validate/explain: exit codes, located errors, and explanations
# for the shipped Android policy.
set -uo pipefail

CTL=tools/scopedfsctl
POLICY=policy/configs/android.textproto
APPS=policy/configs/apps.textproto
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
check "valid config says OK" grep -q '^OK: policy "android", 28 rules, 9 apps$' "$TMP/out"

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
printf '\xff\xd8\xff\xe0\x00\x10JFIF\x00' >"$TMP/photo.jpg"
printf '%%PDF-1.7\n' >"$TMP/doc.pdf"

run explain --policy=$POLICY --apps=$APPS --package=com.example.social --op=read \
  --path=DCIM/Camera/IMG_1.jpg --content="$TMP/photo.jpg" --owner_uid=10065
check "explain exits 0" test "$RC" -eq 0
check "social is redacted" grep -q '^decision: ALLOW_REDACTED$' "$TMP/out"
check "redactions listed" grep -q '^redact:   REDACTION_EXIF_GPS, REDACTION_XMP_GPS$' "$TMP/out"
check "rule and location shown" grep -q '^rule:     redact-image-location (policy/configs/android.textproto:[0-9]*:1)$' "$TMP/out"
check "reason shown" grep -q '^reason:   .*ACCESS_MEDIA_LOCATION' "$TMP/out"
check "caller shown" grep -q '^caller:   uid 10062 (app, user 0, app id 10062): com.example.social$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10061 --op=read --path=DCIM/Camera/IMG_1.jpg \
  --content="$TMP/photo.jpg" --owner_uid=10065
check "gallery reads raw" grep -q '^decision: ALLOW$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=DCIM/secret.jpg \
  --content="$TMP/doc.pdf" --owner_uid=10067
check "pdf disguised as jpg is hidden" grep -q '^decision: HIDE$' "$TMP/out"
check "sniffed format shown" grep -q 'format pdf' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --package=com.example.camera --op=create --path=DCIM/x.pdf
check "wrong type in DCIM is EPERM" grep -q '^decision: DENY (EPERM)$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10067 --op=mkdir --path=MyApp
check "custom top-level dir is EPERM" grep -q '^decision: DENY (EPERM)$' "$TMP/out"
check "mkdir defaults to a directory" grep -q ', dir$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=../etc/passwd
check "hostile path denied" grep -q '^rule:     <invalid-path>$' "$TMP/out"

run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=chew --path=DCIM/a.jpg
check "unknown op exits 2" test "$RC" -eq 2
run explain --policy=$POLICY --apps=$APPS --op=read --path=DCIM/a.jpg
check "no caller exits 2" test "$RC" -eq 2
run explain --policy=$POLICY --apps=$APPS --package=com.nope --op=read --path=DCIM/a.jpg
check "unknown package exits 2" test "$RC" -eq 2
run explain --policy=$POLICY --apps=$APPS --uid=10062 --op=read --path=DCIM/a.jpg --content=/nonexistent
check "unreadable --content exits 1" test "$RC" -eq 1

echo "scopedfsctl_test: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
