// O_TMPFILE through the mount. Under ANDROID semantics there is none (EOPNOTSUPP, as on Android's
// own emulated storage). Under POSIX semantics the file is made nameless as the caller, and the
// policy still binds it: its creation is judged as a file in its directory, its linking as a
// create at the new name with the content it has by then, and the redaction of what it becomes
// is the same as for a file created by name. The permissive policy's O_TMPFILE cases are in
// posix_compare_mount_test (against a bare tmpfs).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

// exiftool's GPS rationals in tests/media/gps.jpg (latitude 37°46'29.64"), big endian.
bool HasGps(const std::string& data) {
  const unsigned char lat[] = {0, 0, 0, 37, 0, 0, 0, 1, 0, 0, 0, 46, 0, 0, 0, 1, 0, 0, 2, 0xe5};
  return data.find(std::string(reinterpret_cast<const char*>(lat), sizeof(lat))) !=
         std::string::npos;
}

// As the app: an O_TMPFILE in `dir` holding `content`, linked as `name` (nothing when empty)
// through /proc/self/fd, as glibc's documentation suggests. err: the first failing call.
AppResult TmpfileThenLink(const App& app, const std::string& dir, const std::string& content,
                          const std::string& name, int flags = O_RDWR) {
  return app.Run(absl::StrCat("O_TMPFILE in ", dir, " linked as ", name), [&] {
    AppResult r;
    int fd = open(dir.c_str(), O_TMPFILE | flags, 0644);
    if (fd < 0) {
      r.err = errno;
      r.what += ": open";
      return r;
    }
    if (write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
      r.err = errno;
      r.what += ": write";
    }
    struct stat st;
    if (r.err == 0 && fstat(fd, &st) != 0) r.err = errno;
    r.value = r.err == 0 ? st.st_uid : -1;
    r.mode = r.err == 0 ? st.st_nlink : 0;
    if (r.err == 0 && !name.empty() &&
        linkat(AT_FDCWD, absl::StrCat("/proc/self/fd/", fd).c_str(), AT_FDCWD, name.c_str(),
               AT_SYMLINK_FOLLOW) != 0) {
      r.err = errno;
      r.what += ": linkat";
    }
    close(fd);
    return r;
  });
}

class AndroidTmpfileTest : public MountTest {};

TEST_F(AndroidTmpfileTest, ThereIsNoTmpfileAndTheDaemonGoesOn) {
  EXPECT_TRUE(FailsWith(TmpfileThenLink(As(kSocial), "Download", "x", ""), EOPNOTSUPP));
  EXPECT_TRUE(FailsWith(TmpfileThenLink(As(kRoot), "Download", "x", ""), EOPNOTSUPP));
  EXPECT_TRUE(Succeeds(As(kSocial).Create("Download/after.txt", "still served")));
  EXPECT_EQ(As(kSocial).Read("Download/after.txt").data, "still served");
}

// The Android rules under POSIX semantics: apps create as themselves and mode bits apply too, so
// the shared directories are made writable for everyone in the lower tree.
class PosixRulesTmpfileTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = policy_path_;
    return o;
  }
  void SetUp() override {
    policy_path_ = AndroidRulesUnderPosixSemantics();
    ASSERT_FALSE(policy_path_.empty());
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* dir : {"Download", "Pictures", "DCIM"}) {
      ASSERT_EQ(chmod(storage_.Lower(dir).c_str(), 0777), 0) << dir;
    }
    gps_ = ReadFileOrDie("tests/media/gps.jpg");
    ASSERT_TRUE(HasGps(gps_));
  }
  std::string policy_path_;
  std::string gps_;
};

TEST_F(PosixRulesTmpfileTest, MadeAsTheCallerAndLinkedWhereARuleAllows) {
  AppResult made = TmpfileThenLink(As(kSocial), "Download", "notes", "Download/notes.txt");
  ASSERT_TRUE(Succeeds(made));
  EXPECT_EQ(made.value, kSocial) << "owner of the nameless file";
  EXPECT_EQ(made.mode, 0u) << "link count before the link";
  EXPECT_EQ(As(kSocial).Read("Download/notes.txt").data, "notes");
  struct stat st;
  ASSERT_EQ(stat(storage_.Lower("Download/notes.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kSocial);
  // Another app does not see it: other apps' documents are hidden.
  EXPECT_TRUE(FailsWith(As(kNotes).Stat("Download/notes.txt"), ENOENT));
}

TEST_F(PosixRulesTmpfileTest, ContentIsJudgedAtTheLinkNotAtTheCreate) {
  // A document may not go into Pictures, however it was made.
  EXPECT_TRUE(
      FailsWith(TmpfileThenLink(As(kSocial), "Download", "%PDF-1.4\n", "Pictures/d.pdf"), EPERM));
  // Not under an image's name either: the content decides.
  EXPECT_TRUE(
      FailsWith(TmpfileThenLink(As(kSocial), "Download", "%PDF-1.4\n", "Pictures/d.jpg"), EPERM));
  struct stat st;
  EXPECT_NE(lstat(storage_.Lower("Pictures/d.pdf").c_str(), &st), 0);
  EXPECT_NE(lstat(storage_.Lower("Pictures/d.jpg").c_str(), &st), 0);
  // A nameless file in DCIM has no type the rules allow there yet: refused, as a create of a
  // file with no media name would be.
  EXPECT_TRUE(FailsWith(TmpfileThenLink(As(kSocial), "DCIM", "x", ""), EPERM));
}

TEST_F(PosixRulesTmpfileTest, PhotoLinkedIntoPicturesIsRedactedForOthers) {
  ASSERT_TRUE(Succeeds(TmpfileThenLink(As(kSocial), "Download", gps_, "Pictures/p.jpg")));
  // The owner and an app with ACCESS_MEDIA_LOCATION read it whole; an app without, redacted.
  EXPECT_TRUE(HasGps(As(kSocial).Read("Pictures/p.jpg").data));
  EXPECT_TRUE(HasGps(As(kGallery).Read("Pictures/p.jpg").data));
  AppResult suite = As(kSuite).Read("Pictures/p.jpg");
  ASSERT_TRUE(Succeeds(suite));
  EXPECT_EQ(suite.data.size(), gps_.size());
  EXPECT_FALSE(HasGps(suite.data));
}

TEST_F(PosixRulesTmpfileTest, ExclusiveTmpfileIsNeverLinked) {
  EXPECT_TRUE(FailsWith(
      TmpfileThenLink(As(kSocial), "Download", "x", "Download/x.txt", O_RDWR | O_EXCL), ENOENT));
  struct stat st;
  EXPECT_NE(lstat(storage_.Lower("Download/x.txt").c_str(), &st), 0);
}

}  // namespace
}  // namespace scopedfs::tests
