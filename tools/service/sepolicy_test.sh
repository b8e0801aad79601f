#!/usr/bin/env bash
# Checks what can be checked of tools/service/sepolicy without Android's policy: scopedfsd.te,
# expanded with m4 as AOSP expands its policy, compiles with checkpolicy (MLS, as Android's) against
# a minimal base that declares the AOSP classes and types it names (sepolicy/testdata) and restates
# the neverallow rules of Android 14 and 15 that bind a platform daemon (testdata/tail.conf), which
# checkpolicy enforces; without the one platform change the module needs, exactly its two
# capabilities are refused, and a module that breaks any other of those rules is refused too.
# secilc compiles the same policy again from the CIL checkpolicy writes back; the rules the daemon
# needs are in it (FUSE over io_uring's too, and no more of io_uring) and none targets a whole
# attribute of files or domains; every type file_contexts names is declared, and selabel_lookup
# labels the binary and the socket with them; the .rc's seclabel is the module's domain. AOSP's own
# full policy is compiled with the module by aosp_check.sh, by hand (see docs/android.md).
set -uo pipefail

DIR=tools/service/sepolicy
RC=tools/service/init.scopedfs.rc
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
# compile <module.te> <out>: base + module (+ extra rules on stdin) to a binary policy and CIL
# TAIL: the neverallow rules and the rest after the module (default testdata/tail.conf).
compile() {
  local extra=$TMP/extra.te
  cat >"$extra"
  m4 -s "$DIR/testdata/macros.m4" "$DIR/testdata/base.conf" "$1" "$extra" \
    "${TAIL:-$DIR/testdata/tail.conf}" >"$2.conf" &&
    checkpolicy -M -c 30 -o "$2.bin" "$2.conf" >"$2.log" 2>&1 &&
    checkpolicy -b -M -C -o "$2.cil" "$2.bin" >>"$2.log" 2>&1
}

check "scopedfsd.te compiles with checkpolicy" compile "$DIR/scopedfsd.te" "$TMP/policy" </dev/null ||
  cat "$TMP/policy.log"
check "secilc compiles the policy checkpolicy wrote back as CIL" \
  secilc -M true -c 30 -f /dev/null -o "$TMP/policy2.bin" "$TMP/policy.cil"

# The rules the daemon needs, as the compiled policy holds them (CIL: one allow per line).
has_rule() {  # has_rule <source> <target> <class> <perm...>: every perm is allowed
  local line
  line=$(grep -F "(allow $1 $2 ($3 (" "$TMP/policy.cil") || return 1
  for perm in "${@:4}"; do [[ " ${line//[()]/ } " == *" $perm "* ]] || return 1; done
}
check "opens and uses /dev/fuse" has_rule scopedfsd fuse_device chr_file open read write ioctl
check "mounts and unmounts FUSE" has_rule scopedfsd fuse filesystem mount unmount
check "mounts on /mnt/user" has_rule scopedfsd mnt_user_file dir mounton
check "has the capabilities of the .rc" has_rule scopedfsd self capability sys_admin \
  dac_read_search dac_override fowner chown
check "reads and writes the lower tree" has_rule scopedfsd media_rw_data_file file open read write \
  create rename unlink setattr
check "creates and removes lower directories" has_rule scopedfsd media_rw_data_file dir add_name \
  remove_name create rmdir reparent
check "walks /data/media to reach it" has_rule scopedfsd media_userdir_file dir search
check "reads packages.list" has_rule scopedfsd packages_list_file file open read
for caller in appdomain shell adbd system_server dumpstate; do
  check "reads the domain of callers in $caller" has_rule scopedfsd $caller file open read
done
check "it is a platform (core) domain" grep -qE "^\(typeattributeset coredomain \(.*\bscopedfsd\b" \
  "$TMP/policy.cil"
check "init starts it in its domain" grep -qF "(typetransition init scopedfsd_exec process scopedfsd)" \
  "$TMP/policy.cil"
check "its control socket gets its type" \
  grep -qF "(typetransition scopedfsd socket_device sock_file scopedfsd_socket)" "$TMP/policy.cil"
# FUSE over io_uring: the rings' anonymous inodes get the daemon's own type, and the commands on
# /dev/fuse are allowed; nothing more of io_uring (sqpoll, override_creds) is.
check "serves FUSE over io_uring: IORING_OP_URING_CMD on /dev/fuse" \
  has_rule scopedfsd fuse_device io_uring cmd
check "its rings are anonymous inodes of its own type" \
  grep -qF '(typetransition scopedfsd scopedfsd anon_inode [io_uring] scopedfsd_io_uring)' \
  "$TMP/policy.cil"
check "it makes, maps, reads and writes its rings" \
  has_rule scopedfsd scopedfsd_io_uring anon_inode create map read write
check "no io_uring permission beyond cmd" \
  bash -c "! grep -E '^\(allow scopedfsd .*\(io_uring \(.*(sqpoll|override_creds)' '$TMP/policy.cil'"
check "no anonymous inode but its own rings" \
  bash -c "! grep -E '^\(allow scopedfsd [a-z_]+ \(anon_inode ' '$TMP/policy.cil' | grep -v ' scopedfsd_io_uring '"
check "no rule targets every file, file system, device or domain" \
  bash -c "! grep -E '^\(allow scopedfsd (domain|file_type|fs_type|dev_type) ' '$TMP/policy.cil'"

# file_contexts: each type is declared (a rule naming it compiles), and lookups find them.
types=$(grep -v '^#' "$DIR/file_contexts" | awk 'NF { split($2, c, ":"); print c[3] }' | sort -u)
equals "file_contexts names the module's two file types" "$(echo $types)" \
  "scopedfsd_exec scopedfsd_socket"
for t in $types; do
  check "file_contexts type $t is declared" compile "$DIR/scopedfsd.te" "$TMP/fc_$t" \
    <<<"allow scopedfsd $t:file getattr;"
done
lookup() { selabel_lookup -b file -f "$DIR/file_contexts" -k "$1" | sed 's/^Default context: //'; }
equals "the binary's label" "$(lookup /system/bin/scopedfsd)" "u:object_r:scopedfsd_exec:s0"
equals "user 10's socket label" "$(lookup /dev/socket/scopedfsd_10)" "u:object_r:scopedfsd_socket:s0"

# The .rc: every service runs in the module's domain.
equals "services in the .rc" "$(grep -c '^service ' "$RC")" 2
equals "each service has the module's seclabel" \
  "$(grep -E '^\s+seclabel ' "$RC" | awk '{print $2}' | sort -u)" "u:r:scopedfsd:s0"
equals "one seclabel per service" "$(grep -cE '^\s+seclabel ' "$RC")" 2

# The checks can fail: a misspelt type, or a permission its class lacks, does not compile.
sed 's/media_rw_data_file:file/media_rw_data_fil:file/' "$DIR/scopedfsd.te" >"$TMP/typo.te"
refuses() { ! compile "$@"; }
refuses_rule() { ! has_rule "$@"; }
check "a misspelt type is refused" refuses "$TMP/typo.te" "$TMP/typo" </dev/null
check "a permission the class lacks is refused" refuses "$DIR/scopedfsd.te" "$TMP/perm" \
  <<<'allow scopedfsd fuse_device:chr_file mount;'

# Android's neverallow rules (restated in tail.conf) hold the module: as AOSP ships them, without
# scopedfsd in the list of domains that may bypass file permissions, exactly the two capabilities
# the daemon needs are refused and nothing else.
sed -E '/dac_(override|read_search);$/ s/ -scopedfsd//' "$DIR/testdata/tail.conf" >"$TMP/tail_aosp.conf"
TAIL=$TMP/tail_aosp.conf compile "$DIR/scopedfsd.te" "$TMP/as_shipped" </dev/null
equals "without the platform change: refused by two neverallow rules" \
  "$(grep -c 'neverallow .* violated by' "$TMP/as_shipped.log")" 2
check "... dac_override's" grep -qF 'violated by allow scopedfsd scopedfsd:capability { dac_override }' \
  "$TMP/as_shipped.log"
check "... dac_read_search's" grep -qF 'violated by allow scopedfsd scopedfsd:capability { dac_read_search }' \
  "$TMP/as_shipped.log"
# Each rule below breaks one of the restated neverallow rules, and is refused.
refused_by_neverallow() {  # refused_by_neverallow <name> <rule>
  compile "$DIR/scopedfsd.te" "$TMP/nv_$1" <<<"$2" && return 1
  grep -q 'neverallow .* violated by' "$TMP/nv_$1.log"
}
sed 's/^type scopedfsd_socket, file_type, coredomain_socket;/type scopedfsd_socket, file_type;/' \
  "$DIR/scopedfsd.te" >"$TMP/vendor_socket.te"
check "(the socket mutant differs from the module)" bash -c "! cmp -s '$DIR/scopedfsd.te' '$TMP/vendor_socket.te'"
refused_module() {  # refused_module <module.te> <out>: refused by a neverallow rule
  compile "$1" "$2" </dev/null && return 1
  grep -q 'neverallow .* violated by' "$2.log"
}
check "a control socket of no platform socket type is refused" \
  refused_module "$TMP/vendor_socket.te" "$TMP/vendor_socket"
check "mounting a file system other than FUSE is refused" refused_by_neverallow mount \
  'allow scopedfsd proc:filesystem mount;'
check "mounting over /system is refused" refused_by_neverallow mounton_system \
  'allow scopedfsd system_file:dir mounton;'
check "tracing other uids' processes is refused" refused_by_neverallow ptrace \
  'allow scopedfsd self:capability sys_ptrace;'
check "an executable stack is refused" refused_by_neverallow execstack \
  'allow scopedfsd self:process execstack;'
check "another domain using its io_uring rings is refused" refused_by_neverallow rings \
  'allow untrusted_app scopedfsd_io_uring:anon_inode read;'
check "writing /system is refused" refused_by_neverallow system_write \
  'allow scopedfsd system_file:file write;'

# ... and a module without the io_uring rules fails the io_uring checks.
grep -vE 'io_uring' "$DIR/scopedfsd.te" >"$TMP/no_uring.te"
compile "$TMP/no_uring.te" "$TMP/no_uring" </dev/null
cp "$TMP/policy.cil" "$TMP/policy.cil.kept"
cp "$TMP/no_uring.cil" "$TMP/policy.cil"
check "a module without the io_uring rules lacks them" \
  refuses_rule scopedfsd fuse_device io_uring cmd
cp "$TMP/policy.cil.kept" "$TMP/policy.cil"

echo "sepolicy_test: $passes passed, $failures failed"
((failures == 0))
