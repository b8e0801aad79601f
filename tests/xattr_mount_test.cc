// Extended attributes under POSIX semantics, where the mount serves the lower tree's: a symlink's
// own attributes as natively (never its target's), nothing for a caller that may not read the
// file, and a list that grows while it is read is never answered ERANGE to a buffer that holds
// it. Needs root and /dev/fuse.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

class XattrMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = policy_;
    return o;
  }
  std::string policy_ = "policy/configs/permissive.textproto";
};

// The attribute names of a list as listxattr returns it.
std::vector<std::string> Names(const char* list, ssize_t n) {
  std::vector<std::string> names;
  for (ssize_t i = 0; i < n;) {
    names.emplace_back(list + i);
    i += static_cast<ssize_t>(names.back().size()) + 1;
  }
  return names;
}

// As xfstests generic/062: root sets, reads, lists and removes trusted.* attributes of a symlink
// itself, and user.* ones are refused EPERM on it, as on the lower filesystem. The link's target
// has attributes of its own, which no call on the link reaches.
TEST_F(XattrMountTest, ASymlinksOwnAttributesAsNatively) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/target", "t"));
  ASSERT_EQ(setxattr(storage_.Lower("Download/target").c_str(), "trusted.target", "T", 1, 0), 0);
  SCOPEDFS_ASSERT_OK(storage_.SymlinkLower("target", "Download/lnk"));
  int code = RunAs(
      kRoot,
      [] {
        const char* lnk = "Download/lnk";
        if (lsetxattr(lnk, "trusted.name", "\xba\xbe", 2, 0) != 0) return 10 + errno % 100;
        if (lsetxattr(lnk, "trusted.name2", "\xde\xad", 2, XATTR_CREATE) != 0) return 2;
        if (lsetxattr(lnk, "trusted.name2", "x", 1, XATTR_CREATE) == 0 || errno != EEXIST) return 3;
        char v[16];
        if (lgetxattr(lnk, "trusted.name", v, sizeof(v)) != 2 || v[0] != '\xba') return 4;
        if (lgetxattr(lnk, "trusted.target", v, sizeof(v)) >= 0 || errno != ENODATA) return 5;
        char list[256];
        ssize_t n = llistxattr(lnk, list, sizeof(list));
        std::vector<std::string> names = Names(list, n);
        if (names != std::vector<std::string>{"trusted.name", "trusted.name2"} &&
            names != std::vector<std::string>{"trusted.name2", "trusted.name"}) {
          return 6;
        }
        if (lremovexattr(lnk, "trusted.name2") != 0) return 7;
        if (lsetxattr(lnk, "user.name", "x", 1, 0) == 0 || errno != EPERM) return 8;
        // Through the link (following it), the target's.
        if (getxattr(lnk, "trusted.target", v, sizeof(v)) != 1) return 9;
        return 0;
      },
      storage_.mountpoint());
  EXPECT_EQ(code, 0) << "step " << code << " (10+: lsetxattr's errno)";
  char v[16];
  EXPECT_EQ(lgetxattr(storage_.Lower("Download/lnk").c_str(), "trusted.name", v, sizeof(v)), 2)
      << "the attribute is not on the lower symlink";
  EXPECT_LT(lgetxattr(storage_.Lower("Download/lnk").c_str(), "trusted.name2", v, sizeof(v)), 0);
}

// listxattr is answered from one reading of the lower list: an attribute added between two
// readings cannot make the daemon answer ERANGE to a caller whose buffer holds the whole list.
TEST_F(XattrMountTest, AListThatGrowsIsNotAnsweredErange) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/busy", "b"));
  std::string lower = storage_.Lower("Download/busy");
  std::atomic<bool> stop{false};
  // The list only grows between two of the daemon's readings (then shrinks at once, by 500).
  std::thread churn([&] {
    while (!stop.load()) {
      for (int i = 0; i < 500 && !stop.load(); ++i) {
        setxattr(lower.c_str(), absl::StrCat("user.a", i).c_str(), "v", 1, 0);
      }
      for (int i = 0; i < 500; ++i) removexattr(lower.c_str(), absl::StrCat("user.a", i).c_str());
    }
  });
  AppResult r = As(kRoot).Run("listxattr while the list changes", [] {
    AppResult out;
    std::vector<char> buf(XATTR_LIST_MAX);
    for (int i = 0; i < 20000; ++i) {
      if (listxattr("Download/busy", buf.data(), buf.size()) < 0) {
        out.err = errno;
        out.value = i;
        return out;
      }
    }
    return out;
  });
  stop = true;
  churn.join();
  EXPECT_TRUE(Succeeds(r)) << "after " << r.value << " lists";
}

class ListingXattrMountTest : public XattrMountTest {
 protected:
  ListingXattrMountTest() { policy_ = AndroidListingUnderPosixSemantics(); }
  // android.textproto (LISTING: another app's file is found, and refused at open) with POSIX
  // semantics, under which the mount serves extended attributes.
  static std::string AndroidListingUnderPosixSemantics() {
    std::string policy = ReadFileOrDie("policy/configs/android.textproto");
    const std::string kAndroid = "semantics: SEMANTICS_ANDROID";
    size_t at = policy.find(kAndroid);
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos) policy.replace(at, kAndroid.size(), "semantics: SEMANTICS_POSIX");
    std::string path = absl::StrCat(::testing::TempDir(), "/android_listing_posix.textproto");
    FILE* f = fopen(path.c_str(), "w");
    if (f != nullptr) {
      fwrite(policy.data(), 1, policy.size(), f);
      fclose(f);
    }
    return path;
  }
};

// The daemon's own attributes (the creator, the content facts) are neither set nor read through
// the mount, by an app or by root (whom the kernel lets set trusted.*): a forged facts record
// would tell the daemon a photo has no location.
TEST_F(XattrMountTest, NoCallerSetsOrReadsTheDaemonsRecords) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/photo.jpg", JpegBytes(), kNotes));
  ASSERT_EQ(chown(storage_.Lower("Download/photo.jpg").c_str(), kNotes, kNotes), 0);
  ASSERT_EQ(setxattr(storage_.Lower("Download/photo.jpg").c_str(), "trusted.scopedfs.facts",
                     "lower", 5, 0),
            0);
  for (uid_t uid : {kNotes, kRoot}) {
    for (const char* name : {"trusted.scopedfs.facts", "trusted.scopedfs.owner"}) {
      EXPECT_TRUE(FailsWith(As(uid).SetXattr("Download/photo.jpg", name, "SFF1forged"), EPERM))
          << uid << " " << name;
    }
    EXPECT_TRUE(
        FailsWith(As(uid).GetXattr("Download/photo.jpg", "trusted.scopedfs.facts"), ENODATA))
        << uid;
  }
  char value[16];
  ssize_t n = getxattr(storage_.Lower("Download/photo.jpg").c_str(), "trusted.scopedfs.facts",
                       value, sizeof(value));
  EXPECT_EQ(std::string(value, n > 0 ? n : 0), "lower");
}

// A caller that may not read a file (its open is refused) reads none of its attributes either,
// though it finds the name: getxattr and listxattr answer as open(O_RDONLY) does.
TEST_F(ListingXattrMountTest, ACallerThatMayNotReadTheFileReadsNoAttributes) {
  constexpr char kFile[] = "Documents/notes.pdf";
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kFile, PdfBytes(), kNotes));
  // Under POSIX semantics the lower file's owner is its creator.
  ASSERT_EQ(chown(storage_.Lower(kFile).c_str(), kNotes, kNotes), 0);
  ASSERT_EQ(setxattr(storage_.Lower(kFile).c_str(), "user.comment", "secret", 6, 0), 0);
  ASSERT_TRUE(Succeeds(As(kCamera).Stat(kFile)));
  ASSERT_TRUE(FailsWith(As(kCamera).Open(kFile, O_RDONLY), EACCES));
  EXPECT_TRUE(FailsWith(As(kCamera).GetXattr(kFile, "user.comment"), EACCES));
  EXPECT_TRUE(FailsWith(As(kCamera).ListXattr(kFile), EACCES));
  AppResult owner = As(kNotes).GetXattr(kFile, "user.comment");
  ASSERT_TRUE(Succeeds(owner));
  EXPECT_EQ(owner.data, "secret");
}

// A POSIX ACL is a permission, not content: the kernel caches it for the inode from whichever
// caller's check asked first and reads it for every caller, so the daemon gives it to whoever
// finds the name, as the mode; a refusal would fail that caller's permission checks instead.
TEST_F(ListingXattrMountTest, AnAclIsShownToWhoeverFindsTheName) {
  constexpr char kFile[] = "Documents/shared.pdf";
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kFile, PdfBytes(), kNotes));
  ASSERT_EQ(chown(storage_.Lower(kFile).c_str(), kNotes, kNotes), 0);
  std::string setfacl = "setfacl -m u:12345:r " + storage_.Lower(kFile);
  ASSERT_EQ(system(setfacl.c_str()), 0) << setfacl;
  ASSERT_TRUE(FailsWith(As(kCamera).Open(kFile, O_RDONLY), EACCES));
  AppResult acl = As(kCamera).GetXattr(kFile, "system.posix_acl_access");
  EXPECT_TRUE(Succeeds(acl));
  EXPECT_FALSE(acl.data.empty());
}

}  // namespace
}  // namespace scopedfs::tests
