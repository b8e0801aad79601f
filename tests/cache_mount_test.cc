// Caching for everyone where no decision depends on the caller (issue 10): under the permissive
// policy the kernel caches names for a second, so a repeated path walk costs no LOOKUP; a reload
// to a policy that hides names invalidates them before it returns, so no app sees a name the new
// policy hides. Under the Android policy every walk still asks.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

class CacheMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = policy_;
    o.control_socket = true;
    return o;
  }
  std::string policy_ = "policy/configs/permissive.textproto";
};

// A node keeps its parent known while the kernel may still reach it through an older name. A
// file with two hard links, a/f and b/f, is one node, recorded under the name it was last looked
// up by (b/f). The app holds it open through a/f; dropping the kernel's caches then forgets b/f
// and b, but not a/f, and a new open of a/f (a dentry the kernel still has, so the daemon sees
// OPEN of the node) must work as natively.
TEST_F(CacheMountTest, ANodeOutlivesTheParentOfItsLastName) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/a/f", "data", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Documents/b", kNotes));
  ASSERT_EQ(link(storage_.Lower("Documents/a/f").c_str(), storage_.Lower("Documents/b/f").c_str()),
            0);
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  pid_t app = StartAs(
      kNotes,
      [&] {
        close(ready[0]);
        close(go[1]);
        struct stat st;
        if (stat("Documents/a/f", &st) != 0) return 2;
        int held = open("Documents/a/f", O_RDONLY);
        if (held < 0) return 3;
        if (stat("Documents/b/f", &st) != 0) return 4;
        char c = 0;
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) return 5;
        int again = open("Documents/a/f", O_RDONLY);
        if (again < 0) return errno == ENOENT ? 6 : 7;
        char buf[8];
        if (read(again, buf, sizeof(buf)) != 4) return 8;
        close(again);
        close(held);
        return 0;
      },
      storage_.mountpoint());
  close(ready[1]);
  close(go[0]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  for (int i = 0; i < 2; ++i) {
    FILE* drop = fopen("/proc/sys/vm/drop_caches", "w");
    ASSERT_NE(drop, nullptr) << "cannot write /proc/sys/vm/drop_caches: " << strerror(errno);
    fputs("2\n", drop);
    fclose(drop);
  }
  absl::SleepFor(absl::Milliseconds(300));  // FORGETs reach the daemon asynchronously
  ASSERT_EQ(write(go[1], &c, 1), 1);
  EXPECT_EQ(WaitChild(app), 0) << "6: the open of a/f failed with ENOENT";
  close(ready[0]);
  close(go[1]);
  // The kernel had forgotten b: its next walk asks again (its names are otherwise cached).
  int64_t before = Lookups();
  EXPECT_TRUE(Succeeds(As(kNotes).Stat("Documents/b")));
  EXPECT_GT(Lookups(), before) << "b was still in the kernel's cache";
}

TEST_F(CacheMountTest, PermissiveNamesAreCachedForEveryone) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/a/b/c.txt", "x", kNotes));
  int64_t first = LookupsForThreeStats(kSocial, "Documents/a/b/c.txt");
  EXPECT_GE(first, 1);
  EXPECT_LE(first, 4) << "three walks of a 4-name path asked once per name at most";
  // Another app walks the same path: the names are the same for everyone, still cached.
  EXPECT_EQ(LookupsForThreeStats(kMusic, "Documents/a/b/c.txt"), 0);
}

// The permissive policy (POSIX semantics) with one rule in front: `social` sees no Documents.
// Names stay the same for everyone until a reload brings this in.
std::string WriteHidingPolicy() {
  std::string policy = ReadFileOrDie("policy/configs/permissive.textproto");
  size_t first_rule = policy.find("\nrule {");
  EXPECT_NE(first_rule, std::string::npos);
  policy.insert(first_rule + 1,
                absl::StrCat("rule { name: \"social-no-documents\" description: \"test\"\n"
                             "       app { uid { first: ",
                             kSocial,
                             " } } path { top_dir: \"Documents\" }\n"
                             "       action { outcome: OUTCOME_HIDE } }\n"));
  std::string path = absl::StrCat(::testing::TempDir(), "/hiding_policy.textproto");
  std::ofstream(path) << policy;
  return path;
}

TEST_F(CacheMountTest, AReloadHidesCachedNamesAtOnce) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/todo.txt", "x", kNotes));
  ASSERT_TRUE(Succeeds(As(kSocial).Stat("Documents/todo.txt")));  // cached for everyone now
  absl::StatusOr<std::string> reloaded =
      storage_.Ctl({"reload", absl::StrCat("--policy=", WriteHidingPolicy()),
                    "--apps=policy/configs/apps.textproto"});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  // The new policy hides Documents from social: at once, not when the kernel's cache would expire.
  EXPECT_TRUE(FailsWith(As(kSocial).Stat("Documents/todo.txt"), ENOENT));
  EXPECT_TRUE(Succeeds(As(kNotes).Stat("Documents/todo.txt")));
}

// The kernel was told at mount time whether it checks mode bits: a policy of the other
// semantics is refused, with a message that says so, and the old policy stays in force.
TEST_F(CacheMountTest, AReloadToOtherSemanticsIsRefused) {
  // scopedfsctl prints the daemon's reason on stderr: read both streams.
  std::string command = absl::StrCat("tools/scopedfsctl --socket=", storage_.control_socket(),
                                     " reload --policy=policy/configs/android.textproto "
                                     "--apps=policy/configs/apps.textproto 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) output.append(buf, n);
  int status = pclose(pipe);
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(output.find("ANDROID semantics but this mount was made with POSIX"), std::string::npos)
      << output;
  // Still the permissive POSIX policy: another app sees the document, the kernel checks modes.
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/todo.txt", "x", kNotes));
  EXPECT_TRUE(Succeeds(As(kSocial).Stat("Documents/todo.txt")));
}

// ls -l asks every file for its ACL. Under POSIX semantics the kernel caches ACLs
// (FUSE_POSIX_ACL), so root asking again costs no request. (An unprivileged caller's questions
// still reach the daemon, two requests each here: see docs/performance.md.)
TEST_F(CacheMountTest, AclQuestionsAreAnsweredFromTheKernelsCache) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/acl.txt", "x", kNotes));
  std::string path = "Documents/acl.txt";  // apps run in the mount
  auto ask = [&] {
    return As(kRoot).Run("getxattr acl", [&] {
      AppResult r;
      if (getxattr(path.c_str(), "system.posix_acl_access", nullptr, 0) < 0) r.err = errno;
      return r;
    });
  };
  EXPECT_TRUE(FailsWith(ask(), ENODATA));
  absl::StatusOr<int64_t> before = storage_.OpCount("xattr");
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(FailsWith(ask(), ENODATA));
  EXPECT_TRUE(FailsWith(ask(), ENODATA));
  absl::StatusOr<int64_t> after = storage_.OpCount("xattr");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(*after, *before) << "the ACL question reached the daemon again";
}

// What `ls -l` asks statx for (coreutils: no atime), and what stat, du and find ask for.
constexpr unsigned kLsMask =
    STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID | STATX_SIZE | STATX_MTIME | STATX_BLOCKS;
constexpr unsigned kStatMask = STATX_BASIC_STATS;

// `ls -lR DIR` into `out`: lists DIR, statx's every name for `mask` and, when `acls`, asks for its
// SELinux label and ACLs as ls does (a directory's default ACL too), then lists each
// subdirectory.
void ListLongInto(const std::string& dir, unsigned mask, bool acls, AppResult* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    out->err = errno;
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* ent = readdir(d)) {
    std::string name = ent->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name;
    struct statx st;
    if (statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, mask, &st) != 0) {
      out->err = errno;
      continue;
    }
    if (acls) {
      char value[256];
      std::vector<const char*> names = {"security.selinux", "system.posix_acl_access"};
      if (S_ISDIR(st.stx_mode)) names.push_back("system.posix_acl_default");
      for (const char* xattr : names) {
        if (lgetxattr(path.c_str(), xattr, value, sizeof(value)) < 0 && errno != ENODATA) {
          out->err = errno;
        }
      }
    }
    if (S_ISDIR(st.stx_mode)) subdirs.push_back(path);
    ++out->value;
  }
  closedir(d);
  for (const std::string& sub : subdirs) ListLongInto(sub, mask, acls, out);
}

// ListLongInto as `app`, in one process; value: the names seen.
AppResult ListLong(const App& app, const std::string& dir, bool acls, unsigned mask = kLsMask) {
  return app.Run("ls -lR", [&] {
    AppResult out;
    ListLongInto(dir, mask, acls, &out);
    return out;
  });
}

// How many requests of `op` the daemon answered while `body` ran.
int64_t RequestsDuring(ScopedStorage& storage, absl::string_view op,
                       const std::function<void()>& body) {
  absl::StatusOr<int64_t> before = storage.OpCount(op);
  EXPECT_TRUE(before.ok()) << before.status();
  body();
  absl::StatusOr<int64_t> after = storage.OpCount(op);
  EXPECT_TRUE(after.ok()) << after.status();
  return before.ok() && after.ok() ? *after - *before : -1;
}

// Documents/list: kListed names, of which two directories with a file each.
constexpr int kListed = 20;

class ListingMountTest : public CacheMountTest {
 protected:
  void SetUp() override {
    CacheMountTest::SetUp();
    for (int i = 0; i < kListed - 4; ++i) {
      SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("Documents/list/f", i), "x", kNotes));
    }
    for (int i = 0; i < 2; ++i) {
      SCOPEDFS_ASSERT_OK(
          storage_.WriteLower(absl::StrCat("Documents/list/d", i, "/f"), "x", kNotes));
    }
  }
};

// Under POSIX semantics a listing is READDIRPLUS: a cold `ls -l` learns every name's attributes
// from it instead of asking a LOOKUP per name.
TEST_F(ListingMountTest, AColdListingNeedsNoLookupPerName) {
  int64_t lookups = RequestsDuring(storage_, "lookup", [&] {
    AppResult r = ListLong(As(kRoot), "Documents/list", /*acls=*/false);
    EXPECT_TRUE(Succeeds(r));
    EXPECT_EQ(r.value, kListed);
  });
  EXPECT_LE(lookups, 2) << "Documents and list at most; the names came with the listing";
}

// A READDIRPLUS entry with attributes makes the kernel forget the inode's cached ACLs: names the
// kernel holds fresh, and directories listed since (only their atime is stale), are listed without
// them, so a second `ls -lR` asks for no ACL again (only security.selinux, which the kernel never
// caches).
TEST_F(ListingMountTest, AWarmListingKeepsTheKernelsCachedAcls) {
  ASSERT_TRUE(Succeeds(ListLong(As(kRoot), "Documents/list", /*acls=*/true)));
  int64_t xattrs = RequestsDuring(storage_, "xattr", [&] {
    EXPECT_TRUE(Succeeds(ListLong(As(kRoot), "Documents/list", /*acls=*/true)));
  });
  EXPECT_EQ(xattrs, kListed) << "one security.selinux question per name, no ACL question";
}

// Reading a file makes the kernel mark its attributes stale (atime): a listing after the reads
// brings them again, so stat'ing every name (as du and find do, atime included) costs no GETATTR
// per file.
TEST_F(ListingMountTest, AListingAfterReadsRefreshesTheirAttributes) {
  ASSERT_TRUE(Succeeds(ListLong(As(kRoot), "Documents/list", /*acls=*/false, kStatMask)));
  for (int i = 0; i < kListed - 4; ++i) {
    ASSERT_TRUE(Succeeds(As(kRoot).Read(absl::StrCat("Documents/list/f", i))));
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(Succeeds(As(kRoot).Read(absl::StrCat("Documents/list/d", i, "/f"))));
  }
  int64_t getattrs = RequestsDuring(storage_, "getattr", [&] {
    EXPECT_TRUE(Succeeds(ListLong(As(kRoot), "Documents/list", /*acls=*/false, kStatMask)));
  });
  EXPECT_LE(getattrs, 3) << "the listed directories' atime at most (list, d0, d1)";
}

// The one ACL the kernel never caches is the mount root's: the root inode is made at mount(2),
// before FUSE_INIT negotiates FUSE_POSIX_ACL, and fuse_init_inode marks such inodes
// ACL_DONT_CACHE for good. So a caller that is not the root directory's owner pays one ACL
// question for every path walk that starts at or crosses the mount root; a walk that starts
// below it (a cwd or a directory fd inside the mount) pays none.
TEST_F(CacheMountTest, OnlyWalksThroughTheMountRootAskItsAclAgain) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/a/b.txt", "x", kNotes));
  ASSERT_TRUE(Succeeds(As(kNotes).Stat("Documents/a/b.txt")));  // every ACL on the way cached
  int64_t from_root = RequestsDuring(storage_, "xattr", [&] {
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(Succeeds(As(kNotes).Stat("Documents/a/b.txt")));
  });
  EXPECT_LE(from_root, 3) << "one question per walk (the mount root's ACL) at most";
  int64_t from_inside = RequestsDuring(storage_, "xattr", [&] {
    AppResult r = As(kNotes).Run("stat from Documents", [] {
      AppResult out;
      int dir = open("Documents", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dir < 0) out.err = errno;
      struct stat st;
      for (int i = 0; dir >= 0 && i < 3; ++i) {
        if (fstatat(dir, "a/b.txt", &st, 0) != 0) out.err = errno;
      }
      if (dir >= 0) close(dir);
      return out;
    });
    EXPECT_TRUE(Succeeds(r));
  });
  EXPECT_LE(from_inside, 1) << "the open of Documents crosses the root once; the walks below it "
                               "find every ACL in the kernel's cache";
}

class AndroidCacheMountTest : public CacheMountTest {
 protected:
  AndroidCacheMountTest() { policy_ = "policy/configs/android.textproto"; }
};

// A file of unknown content has a redacted view for an app without ACCESS_MEDIA_LOCATION (the
// all-files app): its name is asked at each of that app's walks. Its owner's raw view is cached.
TEST_F(AndroidCacheMountTest, EveryWalkAsksWhenTheViewIsRedacted) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/todo.txt", "x", kNotes));
  EXPECT_GE(LookupsForThreeStats(kFiles, "Documents/todo.txt"), 3);
  // The first walk finds the redacted name and swaps it: two LOOKUPs, then none.
  EXPECT_LE(LookupsForThreeStats(kNotes, "Documents/todo.txt"), 2);
  EXPECT_EQ(LookupsForThreeStats(kNotes, "Documents/todo.txt"), 0);
}

// Android's view has no extended attributes (as MediaProvider, which implements no xattr op): the
// first question of each kind is answered ENOSYS, on which the kernel answers every later one
// EOPNOTSUPP itself for the whole mount, and ACL questions ENODATA (no ACL).
TEST_F(AndroidCacheMountTest, XattrsAreNotInTheView) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/todo.txt", "x", kNotes));
  std::string path = "Documents/todo.txt";  // apps run in the mount
  AppResult r = As(kNotes).Run("getxattr", [&] {
    AppResult out;
    char value[64];
    if (getxattr(path.c_str(), "system.posix_acl_access", nullptr, 0) >= 0 || errno != ENODATA) {
      out.err = EINVAL;
    }
    if (lgetxattr(path.c_str(), "security.selinux", value, sizeof(value)) >= 0 ||
        errno != EOPNOTSUPP) {
      out.err = EINVAL;
    }
    if (setxattr(path.c_str(), "user.tag", "a", 1, 0) == 0 || errno != EOPNOTSUPP) {
      out.err = EINVAL;
    }
    if (getxattr(path.c_str(), "user.tag", value, sizeof(value)) >= 0 || errno != EOPNOTSUPP) {
      out.err = EINVAL;
    }
    return out;
  });
  EXPECT_TRUE(Succeeds(r));
}

}  // namespace
}  // namespace scopedfs::tests
