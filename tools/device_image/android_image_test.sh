#!/usr/bin/env bash
# Checks make_device_image.sh --profile=android offline, as this kernel cannot mount a casefolded
# ext4: dumpe2fs shows fs_mgr's format and boot-time tuning, e2fsck -fn finds the image clean, and
# debugfs reads back, inode by inode, the owners, modes, inode flags, project ids, default and
# access ACLs and SELinux labels that init and vold give /data/media on a device. The expected
# values below are written from AOSP's numbers (init.rc, vold's FsCrypt.cpp and Utils.cpp,
# android_filesystem_config.h, android_projectid_config.h), not read from the builder. The
# packages.list is parsed by libpackagelistparser's rules. Needs no root.
set -uo pipefail

BUILDER=tools/device_image/make_device_image.sh
CTL=tools/scopedfsctl
POLICY=policy/configs/android.textproto
TMP=${TEST_TMPDIR:-$(mktemp -d)}
export PATH="$PATH:/usr/sbin:/sbin"
failures=0
passes=0
equals() {  # equals <description> <actual> <expected>
  if [[ "$2" == "$3" ]]; then passes=$((passes + 1)); else
    printf 'FAIL: %s\n  got:      %s\n  expected: %s\n' "$1" "$2" "$3"
    failures=$((failures + 1))
  fi
}
check() {  # check <description> <command...>: the command must succeed
  local what=$1
  shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

out=$TMP/android
"$BUILDER" --profile=android --users=0,10 --size=64M "$out" >"$TMP/build.log" 2>&1 ||
  { cat "$TMP/build.log"; echo "FAIL: the builder failed"; exit 1; }
img=$out/userdata.img

# --- The format: fs_mgr's mke2fs arguments, Android's mke2fs.conf, fs_mgr's tune2fs at boot ------
header() { dumpe2fs -h "$img" 2>/dev/null | sed -n "s/^$1:[[:space:]]*//p"; }
equals "block size (mke2fs -b 4096)" "$(header 'Block size')" 4096
equals "inode size (-I 512, for project ids)" "$(header 'Inode size')" 512
features=" $(header 'Filesystem features') "
for f in has_journal ext_attr resize_inode dir_index filetype extent sparse_super large_file \
  huge_file dir_nlink extra_isize casefold quota project; do
  check "feature $f is on" test "${features/ $f /}" != "$features"
done
for f in flex_bg 64bit metadata_csum encrypt inline_data; do
  check "feature $f is off (not in Android's mke2fs.conf or fs_mgr's defaults)" \
    test "${features/ $f /}" == "$features"
done
equals "casefold encoding (tune2fs -E encoding=utf8)" "$(header 'Character encoding')" "utf8-12.1"
equals "default mount options (mke2fs.conf default_mntopts)" "$(header 'Default mount options')" \
  "user_xattr acl"
blocks=$(header 'Block count')
equals "1% of blocks reserved (reserved_ratio 1.0)" \
  "$((($(header 'Reserved block count') * 100 + blocks / 2) / blocks))" 1
equals "one inode per 16 KiB (inode_ratio 16384)" "$((blocks * 4096 / $(header 'Inode count')))" 16384
equals "no volume label (fs_mgr passes none)" "$(header 'Filesystem volume name')" "<none>"
for q in User Group Project; do
  check "$q quota inode present (tune2fs -Q usrquota,grpquota,prjquota)" \
    bash -c "dumpe2fs -h '$img' 2>/dev/null | grep -q '^$q quota inode: *[1-9]'"
done

check "e2fsck -fn finds the image clean" e2fsck -fn "$img" >"$TMP/fsck.log" 2>&1 ||
  cat "$TMP/fsck.log"

# --- The layout: debugfs reads each inode back --------------------------------------------------
# inode <image> <path>: "uid gid mode flags projid" (flags in hex, without EXTENTS_FL 0x80000)
inode() {
  debugfs -R "stat $2" "$1" 2>/dev/null | python3 -c '
import re, sys
text = sys.stdin.read()
mode = re.search(r"Mode: +(\d+)", text); flags = re.search(r"Flags: +(0x[0-9a-f]+)", text)
owner = re.search(r"User: +(\d+) +Group: +(\d+) +Project: +(\d+)", text)
if mode and flags and owner:
    print(owner[1], owner[2], mode[1], hex(int(flags[1], 16) & ~0x80000), owner[3])'
}
# acl <image> <path> <system.posix_acl_access|default>: the ACL as getfacl's short text, or "-"
acl() {
  debugfs -R "ea_get $2 $3" "$1" 2>/dev/null | python3 -c '
import struct, sys
for line in sys.stdin:
    if " = " not in line:
        continue
    raw = bytes(int(b, 16) for b in line.split(" = ", 1)[1].split())
    names = {1: "u:", 2: "u:{}", 4: "g:", 8: "g:{}", 16: "m:", 32: "o:"}
    out = []
    for i in range(4, len(raw) - 7, 8):
        tag, perm, ident = struct.unpack_from("<HHI", raw, i)
        rwx = "".join(c if perm & bit else "-" for c, bit in (("r", 4), ("w", 2), ("x", 1)))
        out.append(names[tag].format(ident) + ":" + rwx)
    print(",".join(out))
    break
else:
    print("-")'
}
label() {
  debugfs -R "ea_get $2 security.selinux" "$1" 2>/dev/null | sed -n 's/^security.selinux ([0-9]*) = "\(.*\)"$/\1/p'
}
# expect <path> <uid gid mode flags projid> <default ACL> <access ACL> <label type>
# flags: 0x40000000 casefold, 0x20000000 project-id inheritance.
CF=0x40000000
CF_PI=0x60000000
expect() {
  equals "$1: owner, group, mode, flags, project id" "$(inode "$img" "$1")" "$2"
  equals "$1: default ACL" "$(acl "$img" "$1" system.posix_acl_default)" "$3"
  equals "$1: access ACL" "$(acl "$img" "$1" system.posix_acl_access)" "$4"
  equals "$1: SELinux label" "$(label "$img" "$1")" "u:object_r:$5:s0"
}
USER_ACL="u::rwx,g::rwx,g:1023:rwx,m::rwx,o::---"  # FsCrypt.cpp: media_rw added to 02770
# init.rc: /data 0771 system system, /data/media 0550 media_rw media_rw and chattr +F.
expect / "1000 1000 0771 0x0 0" - - system_data_root_file
expect /lost+found "0 0 0770 0x0 0" - - system_data_file
expect /media "1023 1023 0550 $CF 0" - - media_userdir_file
for user in 0 10; do
  m=/media/$user
  camera=$((user * 100000 + 10065))
  expect "$m" "1023 1023 02770 $CF 0" "$USER_ACL" - media_rw_data_file
  # PrepareAndroidDirs: 02771, groups ext_data_rw (1078) and ext_obb_rw (1079); a default ACL on
  # obb; the others inherit /data/media/<user>'s.
  expect "$m/Android" "1023 1023 02771 $CF 0" "$USER_ACL" \
    "u::rwx,g::rwx,g:1023:rwx,m::rwx,o::--x" media_rw_data_file
  expect "$m/Android/data" "1023 1078 02771 $CF 0" "$USER_ACL" \
    "u::rwx,g::rwx,g:1023:rwx,m::rwx,o::--x" media_rw_data_file
  expect "$m/Android/obb" "1023 1079 02771 $CF 0" "u::rwx,g::rwx,o::--x" \
    "u::rwx,g::rwx,g:1023:rwx,m::rwx,o::--x" media_rw_data_file
  expect "$m/Android/media" "1023 1023 02771 $CF 0" "$USER_ACL" \
    "u::rwx,g::rwx,g:1023:rwx,m::rwx,o::--x" media_rw_data_file
  # PrepareAppDirFromRoot: 02770 owned by the app, project id uid - 10000 + 20000, inheritance,
  # the app's uid added as a group in the default ACL.
  app_acl="u::rwx,g::rwx,g:$camera:rwx,m::rwx,o::---"
  expect "$m/Android/data/com.example.camera" \
    "$camera 1078 02770 $CF_PI $((camera - 10000 + 20000))" "$app_acl" \
    "u::rwx,g::rwx,g:1023:rwx,m::rwx,o::---" media_rw_data_file
  expect "$m/Android/data/com.example.camera/files" \
    "$camera 1078 02770 $CF_PI $((camera - 10000 + 20000))" "$app_acl" "$app_acl" media_rw_data_file
  # A file the app made: its group from the set-gid directory, the project id inherited.
  expect "$m/Android/data/com.example.camera/files/settings.json" \
    "$camera 1078 0660 0x0 $((camera - 10000 + 20000))" - \
    "u::rw-,g::rwx,g:$camera:rwx,m::rw-,o::---" media_rw_data_file
  expect "$m/DCIM/Camera" "1023 1023 02770 $CF 0" "$USER_ACL" "$USER_ACL" media_rw_data_file
  expect "$m/DCIM/Camera/IMG_20240612_101500.jpg" "1023 1023 0660 0x0 0" - \
    "u::rw-,g::rwx,g:1023:rwx,m::rw-,o::---" media_rw_data_file
done
# Every inode has a label (restorecon would give one to each).
debugfs -R "ls -p /media/0/Download" "$img" 2>/dev/null | awk -F/ '$6 != "" && $6 != "." && $6 != ".." {print $6}' \
  >"$TMP/download"
equals "Download holds the three files" "$(tr '\n' ' ' <"$TMP/download")" \
  "boarding_pass.pdf invoice.pdf packing_list.txt "
while read -r name; do
  equals "Download/$name is labelled" "$(label "$img" "/media/0/Download/$name")" \
    "u:object_r:media_rw_data_file:s0"
done <"$TMP/download"
# The owners the daemon reads are there too.
equals "the camera's photo keeps its recorded creator" \
  "$(debugfs -R 'ea_get /media/0/DCIM/Camera/IMG_20240612_101500.jpg trusted.scopedfs.owner' "$img" 2>/dev/null |
    sed -n 's/^trusted.scopedfs.owner ([0-9]*) = "\(.*\)"$/\1/p')" 10065

# init creates /data/system and /data/misc with encryption=Require: a pre-made one fails its
# policy and init reboots into recovery. They are not in the image.
for d in /system /misc; do
  check "$d is not in the image" bash -c "! debugfs -R 'stat $d' '$img' 2>&1 | grep -q '^Inode:'"
done

# --- packages.list, by libpackagelistparser's rules ----------------------------------------------
# sscanf("%ms %u %d %ms %ms %ms %d %ld"): at least 6 fields; gids "none" or comma-separated gids.
packages_list_ok() {
  awk 'NF < 6 || NF > 8 || $2 !~ /^[0-9]+$/ || $3 !~ /^-?[0-9]+$/ ||
       ($6 != "none" && $6 !~ /^[0-9]+(,[0-9]+)*$/) || (NF >= 7 && $7 !~ /^-?[0-9]+$/) ||
       (NF == 8 && $8 !~ /^-?[0-9]+$/) { print FILENAME ":" NR ": " $0; bad = 1 }
       END { exit bad }' "$1"
}
check "packages.list parses as libpackagelistparser reads it" packages_list_ok "$out/packages.list"
equals "packages.list lists the five apps" "$(awk '{print $1 "=" $2}' "$out/packages.list" | sort | tr '\n' ' ')" \
  "com.example.camera=10065 com.example.chat=10062 com.example.files=10064 com.example.gallery=10061 com.example.music=10063 "
check "apps and packages.list validate against the Android policy" "$CTL" validate \
  --policy="$POLICY" --apps="$out/apps.textproto" --packages_list="$out/packages.list"

# --- The checks themselves can fail -----------------------------------------------------------
cp "$img" "$TMP/broken.img"
debugfs -w -R "set_inode_field /media/0/Android/obb gid 1023" "$TMP/broken.img" >/dev/null 2>&1
check "the inode check sees a wrong group" \
  test "$(inode "$TMP/broken.img" /media/0/Android/obb)" != "$(inode "$img" /media/0/Android/obb)"
debugfs -w -R "ea_rm /media/0/Android/obb system.posix_acl_default" "$TMP/broken.img" >/dev/null 2>&1
equals "the ACL check sees a missing ACL" "$(acl "$TMP/broken.img" /media/0/Android/obb system.posix_acl_default)" -
printf 'com.example.bad notanumber 0 /data/user/0/x default 3003 0 1\n' >"$TMP/bad.list"
rejects() { ! packages_list_ok "$1" >/dev/null; }
check "the packages.list check rejects a bad uid" rejects "$TMP/bad.list"
check "an unknown profile is refused" bash -c "! '$BUILDER' --profile=ios '$TMP/x' 2>/dev/null"

echo "android_image_test: $passes passed, $failures failed"
((failures == 0))
