// The framework of the POSIX conformance tests (issue 11): every case runs the same syscalls, as
// the same credentials (uid, gid, supplementary groups, umask), once in a bare tmpfs and once
// through scopedfsd under policy/configs/permissive.textproto, and the two records must be equal.
// The groups live in tests/posix_compare_*_mount_test.cc; the one table of allowed differences
// lives in posix_compare.cc.
//
// A record holds each call's result (ok or the errno name), then, as root seen through the same
// side, the observed paths' type, permission bits, owner, group, link count (and size or rdev),
// and whether their ctime and mtime moved during the act. Times are compared as "moved or not":
// the act starts 20 ms after the "before" look, so any update is visible at tmpfs granularity.
//
// SCOPEDFS_POSIX_COMPARE_SELF=1 replaces the mount with a second bare tmpfs: native against native
// must show no difference at all (the allowed ones included), which proves the records are
// deterministic and the comparison sound; //tests:posix_compare_self_test runs every group so.
// A record whose case did not run to its end (a child that could not set up, or was killed) fails
// whatever the other side's record says.
// SCOPEDFS_POSIX_COMPARE_VERBOSE=1 prints every case's native record.
#ifndef SCOPEDFS_TESTS_POSIX_COMPARE_H_
#define SCOPEDFS_TESTS_POSIX_COMPARE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests::posix_compare {

inline constexpr gid_t kShared = 2000;   // a group some callers are in
inline constexpr gid_t kForeign = 3000;  // a group no unprivileged caller is in

// A difference docs/semantics.md's table allows: why (the same reason as that table of remaining
// differences), and the exact lines that may differ, as RunGroup prints them. Any other line that
// differs in the same case still fails it.
struct AllowedDifference {
  std::string reason;
  std::string diff;
};
// "Group/case" -> its allowed difference; every other difference fails.
const std::map<std::string, AllowedDifference>& AllowedDifferences();

struct Cred {
  std::string name;
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
  mode_t umask = 022;
  // Only the effective ids change (seteuid, setegid), as conformance suites switch users: the real
  // and saved ids stay root's.
  bool effective_only = false;
};

inline const Cred kRootCred{"root", 0, 0, {}};
inline const Cred kNobody{"65534", 65534, 65534, {}};
inline const Cred kNobodyG{"65534+g2000", 65534, 65534, {kShared}};
inline const Cred kUser{"1234", 1234, 1234, {}};
inline const Cred kUserG{"1234+g2000", 1234, 1234, {kShared}};
inline const Cred kUser077{"1234 umask 077", 1234, 1234, {}, 077};
inline const Cred kNobody000{"65534 umask 000", 65534, 65534, {}, 0};

// "O_RDWR|O_CREAT|..." for a record line.
std::string FlagNames(int flags);

// Type, permission bits (set-id and sticky included), owner, group, links, and size or rdev.
std::string Fields(const struct stat& st);

// What a case's syscalls write their results into; runs in a forked child as the case's caller.
class Ctx {
 public:
  std::string out;
  int other = -1;      // a directory fd on another file system (for EXDEV)
  int lower = -1;      // the case directory reached without the mount (natively: itself)
  std::string unique;  // a name unique to this side and case, for use under `other`

  void Log(const std::string& what, const std::string& result);
  // Logs "ok" or the errno name of a call that returns -1 on failure; returns rc.
  long Do(const std::string& what, long rc);
  // open(2) and keep the fd (-1 on failure).
  int OpenFd(const std::string& path, int flags, mode_t mode = 0666);
  void Open(const std::string& path, int flags, mode_t mode = 0666);
  void Stat(const std::string& path);
  void Fstat(int fd, const std::string& label);
  void MtimeOf(const std::string& path);
  void Read(const std::string& path);
  void Write(const std::string& path, const std::string& data, int flags = O_WRONLY);
  // Runs `body` in a forked grandchild with the same credentials; logs its exit code's meaning:
  // body returns 0 or an errno.
  void InChild(const std::string& what, const std::function<int()>& body);
  // Logs whether two paths (lstat, not followed) name one inode: "same", "different" or an errno.
  void SameInode(const std::string& a, const std::string& b);
  // Looks at `before` (lstat), waits a time step, runs `act`, looks at `after`, and logs whether
  // ctime and mtime moved in between: for an object that changes its name during `act`.
  void Times(const std::string& before, const std::string& after, const std::function<void()>& act);
};

// A lower-tree object a case starts from, made as root (chown before chmod, so set-id bits stay).
struct Obj {
  enum Kind { kFile, kEmptyFile, kDir, kSymlink, kFifo, kHardlink, kBlock, kChar, kSocket } kind;
  std::string path;
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string target;  // symlink target, or hard link source
};
// "reg", "dir", "lnk", "fifo", "blk", "chr", "sock" (a hard link is "reg", an empty file too).
std::string KindName(Obj::Kind kind);
// A file holding "data", an empty file, a dir, a symlink, a FIFO, a hard link.
Obj F(std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0);
Obj E(std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0);
Obj D(std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0);
Obj L(std::string path, std::string target);
Obj P(std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0);
Obj H(std::string path, std::string source);
// An object of any kind but a hard link: a file holding "data", a dir, a FIFO, a block device 1:2,
// a char device 1:2, a socket (bound, then its listener closed), or a symlink to "target" (owned
// as given; symlinks have no mode of their own).
Obj Any(Obj::Kind kind, std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0);
// Every kind Any makes, and every kind but the directory.
const std::vector<Obj::Kind>& AllKinds();
const std::vector<Obj::Kind>& NonDirKinds();

using Body = std::function<void(Ctx&)>;

struct Case {
  std::string name;
  std::vector<Obj> setup;
  Cred who;
  Body act;
  std::vector<std::string> observe = {};  // paths root looks at before and after the act
  // Runs in the tree's root, not in a directory of its own (as a suite run at the mount's root):
  // its names must differ from every other such case's.
  bool at_root = false;
};

// An ACL xattr value (version 2, then {tag, perm, id} entries), as the kernel stores it.
std::string AclValue(const std::vector<std::tuple<uint16_t, uint16_t, uint32_t>>& entries);
inline constexpr uint16_t kAclUserObj = 0x01, kAclUser = 0x02, kAclGroupObj = 0x04, kAclMask = 0x10,
                          kAclOther = 0x20;
inline constexpr uint32_t kAclNoId = 0xffffffff;

// Drops a grandchild to `uid` (gid the same, no groups) with `mask`; 0 or the errno.
int Become(uid_t uid, mode_t mask);
// Drops a grandchild to the credentials `who`; 0 or the errno.
int BecomeCred(const Cred& who);

// One tree the cases run in: a bare tmpfs, or the scopedfsd mount.
struct Side {
  std::string name;  // "native" or "mount"
  std::string root;
  std::string lower;  // the same tree reached without the mount (for the bare tmpfs: root)
};

// Mounts the native tmpfs, the other file system and the daemon (or, in self mode, a second
// tmpfs) for each test; RunGroup compares every case of a group.
class PosixCompareTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Runs every case on both sides; one failure per unallowed difference, and a summary line.
  void RunGroup(const std::string& group, const std::vector<Case>& cases);

 private:
  std::string Record(const Side& side, const std::string& dir, const std::string& unique,
                     const Case& k);

  ScopedStorage storage_;
  std::vector<std::string> extra_mounts_;
  std::string other_fs_;
  Side native_;
  Side mount_;
  bool self_mode_ = false;
  bool verbose_ = false;
};

}  // namespace scopedfs::tests::posix_compare

#endif  // SCOPEDFS_TESTS_POSIX_COMPARE_H_
