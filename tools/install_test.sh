#!/usr/bin/env bash
# tools/install.sh into a staging root: every file lands, `man` finds each page there, every
# flag `--help` lists is in the binary's man page, the unit names the installed paths, a second
# install keeps an edited config, and --uninstall removes what the install put there (and
# --purge the configs, also after a plain --uninstall).
set -uo pipefail
TMP=${TEST_TMPDIR:-$(mktemp -d)}
ROOT=$TMP/root
failures=0
passes=0
check() {
  local what=$1; shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
command -v man >/dev/null || { echo "FAIL: man is not installed (tools/setup.sh installs man-db)"; exit 1; }

out=$(tools/install.sh --destdir="$ROOT" --bin_dir=. 2>&1)
check "install succeeds" test $? -eq 0
for f in usr/local/sbin/scopedfsd usr/local/sbin/scopedfs usr/local/bin/scopedfsctl \
  usr/local/share/man/man8/scopedfsd.8 usr/local/share/man/man8/mount.scopedfs.8 \
  usr/local/share/man/man1/scopedfsctl.1 usr/local/share/man/man5/scopedfs.policy.5 \
  etc/systemd/system/scopedfsd@.service etc/scopedfs/android.textproto \
  etc/scopedfs/android-strict.textproto \
  etc/scopedfs/apps.textproto usr/local/share/doc/scopedfs/README.md \
  usr/local/share/doc/scopedfs/docs/policy.md usr/local/share/doc/scopedfs/docs/security.md; do
  check "installed $f" test -e "$ROOT/$f"
done
check "install prints the version" grep -q '^scopedfsd [0-9]' <<<"$out"
for page in scopedfsd:8 scopedfsctl:1 scopedfs.policy:5 mount.scopedfs:8; do
  name=${page%:*} section=${page#*:}
  check "man finds $name($section)" env MANPATH="$ROOT/usr/local/share/man" man -w "$section" "$name"
  check "$name($section) renders without warnings" \
    test -z "$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$ROOT/usr/local/share/man/man$section/$name.$section" 2>&1)"
done
for bin in daemon/scopedfsd:man8/scopedfsd.8 tools/scopedfsctl:man1/scopedfsctl.1; do
  exe=${bin%:*} page=$ROOT/usr/local/share/man/${bin#*:}
  for flag in $("$exe" --help | sed -n 's/^  --\([a-z_]*\).*/\1/p'); do
    check "$(basename "$exe") --$flag is in its man page" grep -q -- "-\\\\-$flag" "$page"
  done
done
for opt in $(sed -n 's/^    \([a-z_|= *\\]*\))$/\1/p' tools/service/scopedfs | tr -d ' *=\\' | tr '|' ' '); do
  check "mount option $opt is in mount.scopedfs(8)" grep -q -- "$opt" "$ROOT/usr/local/share/man/man8/mount.scopedfs.8"
done
check "the unit runs the installed daemon" grep -q 'ExecStart=/usr/local/sbin/scopedfsd ' "$ROOT/etc/systemd/system/scopedfsd@.service"

echo '# edited' >>"$ROOT/etc/scopedfs/apps.textproto"
out=$(tools/install.sh --destdir="$ROOT" --bin_dir=. 2>&1)
check "a second install keeps an edited config" grep -q '^# edited$' "$ROOT/etc/scopedfs/apps.textproto"
check "... and says so" grep -q '^install: kept /etc/scopedfs/apps.textproto ' <<<"$out"

tools/install.sh --destdir="$ROOT" --uninstall >/dev/null
check "uninstall removes the daemon" test ! -e "$ROOT/usr/local/sbin/scopedfsd"
check "uninstall removes the man pages" test ! -e "$ROOT/usr/local/share/man/man8/scopedfsd.8"
check "uninstall removes the unit" test ! -e "$ROOT/etc/systemd/system/scopedfsd@.service"
check "uninstall removes the documentation" test ! -e "$ROOT/usr/local/share/doc/scopedfs"
check "uninstall keeps the configs" test -e "$ROOT/etc/scopedfs/android.textproto"
FRESH=$TMP/fresh
mkdir -p "$FRESH/etc/scopedfs" && echo '# mine' >"$FRESH/etc/scopedfs/apps.textproto"
tools/install.sh --destdir="$FRESH" --bin_dir=. >/dev/null && tools/install.sh --destdir="$FRESH" --uninstall --purge >/dev/null
check "--purge removes the configs it installed" test ! -e "$FRESH/etc/scopedfs/android.textproto"
check "--purge keeps a config it did not install" grep -q '^# mine$' "$FRESH/etc/scopedfs/apps.textproto"
tools/install.sh --destdir="$ROOT" --uninstall >/dev/null 2>&1
check "uninstalling twice says there is nothing to do" test $? -eq 1
out=$(tools/install.sh --destdir="$ROOT" --uninstall --purge 2>&1)
check "--uninstall --purge after --uninstall still finds the kept configs" test $? -eq 0
check "... and removes them" test ! -e "$ROOT/etc/scopedfs"
check "... and the manifest" test ! -e "$ROOT/usr/local/share/scopedfs"
tools/install.sh --destdir="$ROOT" --uninstall --purge >/dev/null 2>&1
check "then nothing is left to uninstall" test $? -eq 1

echo "install_test: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
