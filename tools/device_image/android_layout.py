#!/usr/bin/env python3
"""Prints the debugfs commands that give a userdata image Android's own layout under /data/media.

Used by make_device_image.sh --profile=android. Reads the partition's tree (DATA_DIR, the image's
root) and packages.list, and gives every inode the owner, group, mode, inode flags (casefold,
project-id inheritance), project id, POSIX ACLs and SELinux label it has on a device once init and
vold have prepared /data and an app has created its files. Written in Python because the ACLs are
binary xattr values; labels come from libselinux (selabel_lookup) reading FILE_CONTEXTS, as
restorecon would label them.

Usage: android_layout.py DATA_DIR PACKAGES_LIST FILE_CONTEXTS BLOB_DIR > debugfs.cmds
BLOB_DIR receives the ACL values that `ea_set -f` reads.

Where the values come from (AOSP, read for facts): init.rc (/data 0771 system system,
/data/media 0550 media_rw media_rw and `chattr +F`, lost+found 0770 root root); vold's
FsCrypt.cpp (/data/media/<user> 02770 media_rw media_rw with a default ACL adding group media_rw)
and Utils.cpp (PrepareAndroidDirs: Android, Android/data, Android/obb, Android/media 02771 owned by
media_rw, groups ext_data_rw and ext_obb_rw, a default ACL on Android/obb; PrepareAppDirFromRoot:
Android/{data,obb,media}/<pkg> 02770 owned by the app, its uid added to the default ACL, project
id = uid - AID_APP_START + the range start, project-id inheritance). Below that the kernel's rules
apply: set-gid directories pass on their group and the bit, a default ACL becomes the child's
default (directories) and access ACL (masked by the mode), casefold and project-id inheritance pass
to subdirectories, the project id to every child of an inheriting directory.
"""

import os
import struct
import subprocess
import sys

AID_ROOT = 0
AID_SYSTEM = 1000
AID_MEDIA_RW = 1023
AID_EXT_DATA_RW = 1078
AID_EXT_OBB_RW = 1079
AID_APP_START = 10000
AID_USER_OFFSET = 100000
PROJECT_ID_EXT_DATA_START = 20000
PROJECT_ID_EXT_CACHE_START = 30000
PROJECT_ID_EXT_OBB_START = 40000

EXT4_EXTENTS_FL = 0x00080000  # mke2fs -d gives every inode extents; kept when flags are rewritten
EXT4_PROJINHERIT_FL = 0x20000000
EXT4_CASEFOLD_FL = 0x40000000

# POSIX ACL tags, as in the kernel's uapi posix_acl_xattr format.
ACL_USER_OBJ, ACL_GROUP, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER = 0x01, 0x08, 0x04, 0x10, 0x20
ACL_UNDEFINED_ID = 0xFFFFFFFF


def default_acl(mode, extra_gids):
    """The default ACL vold's SetDefaultAcl writes: owner, group, each extra gid, mask, other."""
    group = (mode >> 3) & 7
    acl = [(ACL_USER_OBJ, (mode >> 6) & 7, ACL_UNDEFINED_ID),
           (ACL_GROUP_OBJ, group, ACL_UNDEFINED_ID)]
    if extra_gids:
        acl += [(ACL_GROUP, group, gid) for gid in extra_gids]
        acl.append((ACL_MASK, group, ACL_UNDEFINED_ID))
    acl.append((ACL_OTHER, mode & 7, ACL_UNDEFINED_ID))
    return acl


def inherited_access_acl(parent_default, mode):
    """The access ACL a child gets from its parent's default ACL once its mode is `mode`.

    The kernel copies the default ACL and masks it with the create mode; the later chmod (vold's
    fs_prepare_dir, or the creator's mode) sets owner, mask (group if no mask) and other."""
    has_mask = any(tag == ACL_MASK for tag, _, _ in parent_default)
    acl = []
    for tag, perm, ident in parent_default:
        if tag == ACL_USER_OBJ:
            perm = (mode >> 6) & 7
        elif tag == ACL_MASK or (tag == ACL_GROUP_OBJ and not has_mask):
            perm = (mode >> 3) & 7
        elif tag == ACL_OTHER:
            perm = mode & 7
        acl.append((tag, perm, ident))
    return acl


def acl_blob(acl):
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in acl)


class Node:
    def __init__(self, uid, gid, mode, flags=0, projid=0, default=None, access=None):
        self.uid, self.gid, self.mode = uid, gid, mode
        self.flags, self.projid = flags, projid
        self.default, self.access = default, access


def child_of(parent, is_dir, uid, mode, gid=None):
    """A new object made in `parent` by `uid` with `mode`, under the kernel's inheritance rules."""
    if parent.mode & 0o2000:  # set-gid directory: its group, and the bit for subdirectories
        gid = parent.gid
        if is_dir:
            mode |= 0o2000
    flags = parent.flags & (EXT4_CASEFOLD_FL | EXT4_PROJINHERIT_FL) if is_dir else 0
    projid = parent.projid if parent.flags & EXT4_PROJINHERIT_FL else 0
    default = parent.default if is_dir else None
    access = inherited_access_acl(parent.default, mode) if parent.default else None
    return Node(uid, gid, mode, flags, projid, default, access)


def read_packages(path):
    apps = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 2:
                apps[fields[0]] = int(fields[1])
    return apps


def vold_node(parent, uid, gid, mode, projid=None, default=None, inherit=False):
    """A directory vold prepares: made in `parent`, then chown/chmod (and more) by vold."""
    node = child_of(parent, True, uid, mode, gid)
    node.uid, node.gid, node.mode = uid, gid, mode
    if parent.default:
        node.access = inherited_access_acl(parent.default, mode)
    if projid is not None:
        node.projid = projid
    if default is not None:
        node.default = default
    if inherit:
        node.flags |= EXT4_PROJINHERIT_FL
    return node


def layout(data_dir, apps):
    """Yields (path inside the image, is_dir, Node) for every object of the tree, parents first."""
    root = Node(AID_SYSTEM, AID_SYSTEM, 0o771)
    yield "/", True, root
    yield "/lost+found", True, Node(AID_ROOT, AID_ROOT, 0o770)  # mke2fs makes it; init's mode
    media = Node(AID_MEDIA_RW, AID_MEDIA_RW, 0o550, flags=EXT4_CASEFOLD_FL)
    yield "/media", True, media
    for user in sorted(os.listdir(os.path.join(data_dir, "media")), key=int):
        user_mode = 0o2770
        user_node = vold_node(media, AID_MEDIA_RW, AID_MEDIA_RW, user_mode,
                              default=default_acl(user_mode, [AID_MEDIA_RW]))
        base = "/media/" + user
        yield base, True, user_node
        yield from walk(data_dir, base, user_node, int(user), apps)


def android_dir_node(parent, rel, user, apps):
    """vold's node for the Android/ directories and app directories, or None for the others."""
    android_mode = 0o2771
    if rel == "Android":
        return vold_node(parent, AID_MEDIA_RW, AID_MEDIA_RW, android_mode)
    if rel == "Android/data":
        return vold_node(parent, AID_MEDIA_RW, AID_EXT_DATA_RW, android_mode)
    if rel == "Android/media":
        return vold_node(parent, AID_MEDIA_RW, AID_MEDIA_RW, android_mode)
    if rel == "Android/obb":
        return vold_node(parent, AID_MEDIA_RW, AID_EXT_OBB_RW, android_mode,
                         default=default_acl(android_mode, []))
    parts = rel.split("/")
    if len(parts) < 3 or parts[0] != "Android" or parts[1] not in ("data", "obb", "media"):
        return None
    package = parts[2]
    if package not in apps:
        sys.exit(f"android_layout: Android/{parts[1]}/{package} belongs to no app in packages.list")
    uid = user * AID_USER_OFFSET + apps[package]
    app_mode = 0o2770
    if parts[1] == "obb":
        gid, start = AID_EXT_OBB_RW, PROJECT_ID_EXT_OBB_START
    elif parts[1] == "data":
        gid, start = AID_EXT_DATA_RW, PROJECT_ID_EXT_DATA_START
        if len(parts) >= 4 and parts[3] == "cache":
            start = PROJECT_ID_EXT_CACHE_START
    else:
        gid, start = AID_MEDIA_RW, PROJECT_ID_EXT_DATA_START
    projid = uid - AID_APP_START + start
    if len(parts) == 3:  # the app's top directory: its own default ACL and inheritance
        extra = [uid] if parts[1] in ("data", "obb") else []
        return vold_node(parent, uid, gid, app_mode, projid=projid,
                         default=default_acl(app_mode, extra), inherit=True)
    if len(parts) == 4:  # vold makes the next level too (files/, cache/)
        return vold_node(parent, uid, gid, app_mode, projid=projid)
    return None


def walk(data_dir, base, parent, user, apps, rel=""):
    path = os.path.join(data_dir, base.lstrip("/"))
    for name in sorted(os.listdir(path)):
        child_rel = f"{rel}/{name}" if rel else name
        child_path = f"{base}/{name}"
        is_dir = os.path.isdir(os.path.join(path, name))
        node = android_dir_node(parent, child_rel, user, apps) if is_dir else None
        if node is None:
            # Made by its creator: shared storage through MediaProvider (media_rw stands in for
            # MediaProvider's uid, which differs per device), app directories by the app itself.
            owner = parent.uid if parent.uid >= AID_APP_START else AID_MEDIA_RW
            node = child_of(parent, is_dir, owner, 0o2770 if is_dir else 0o660, parent.gid)
        yield child_path, is_dir, node
        if is_dir:
            yield from walk(data_dir, child_path, node, user, apps, child_rel)


def label_of(file_contexts, android_path):
    out = subprocess.run(["selabel_lookup", "-b", "file", "-f", file_contexts, "-k", android_path],
                         capture_output=True, text=True, check=False)
    prefix = "Default context: "
    if out.returncode != 0 or not out.stdout.startswith(prefix):
        sys.exit(f"android_layout: no label for {android_path} in {file_contexts}: "
                 f"{out.stdout}{out.stderr}")
    return out.stdout[len(prefix):].strip()


def main(argv):
    if len(argv) != 5:
        sys.exit("usage: android_layout.py DATA_DIR PACKAGES_LIST FILE_CONTEXTS BLOB_DIR")
    data_dir, packages_list, file_contexts, blob_dir = argv[1:]
    apps = read_packages(packages_list)
    blobs = {}

    def blob_file(acl):
        data = acl_blob(acl)
        if data not in blobs:
            blobs[data] = os.path.join(blob_dir, f"acl{len(blobs)}")
            with open(blobs[data], "wb") as f:
                f.write(data)
        return blobs[data]

    for path, is_dir, node in layout(data_dir, apps):
        kind = 0o040000 if is_dir else 0o100000
        print(f"set_inode_field {path} uid {node.uid}")
        print(f"set_inode_field {path} gid {node.gid}")
        print(f"set_inode_field {path} mode 0{kind | node.mode:o}")
        print(f"set_inode_field {path} flags 0x{EXT4_EXTENTS_FL | node.flags:x}")
        print(f"set_inode_field {path} projid {node.projid}")
        if node.default:
            print(f"ea_set -f {blob_file(node.default)} {path} system.posix_acl_default")
        if node.access:
            print(f"ea_set -f {blob_file(node.access)} {path} system.posix_acl_access")
        android_path = "/data" + ("" if path == "/" else path)
        print(f"ea_set {path} security.selinux {label_of(file_contexts, android_path)}")


if __name__ == "__main__":
    main(sys.argv)
