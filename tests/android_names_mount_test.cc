// Case-insensitive names under ANDROID semantics, as on a device, whose /data/media is casefolded
// ext4: as app uids, open, stat, create, mkdir, unlink, rmdir and rename find a name in any case,
// at any depth; a new name that folds onto an existing one is that one; the kernel's name cache
// never serves a spelling whose object changed through another; and no spelling reaches what the
// exact name does not (package-private areas of other apps). POSIX semantics stay case-sensitive
// (posix_compare_*_mount_test).
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

class AndroidNamesTest : public MountTest {};

TEST_F(AndroidNamesTest, OpenAndStatFindTheLowerSpelling) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/Report.TXT", "report", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/Deep/Er/Notes.md", "deep", kNotes));
  App notes = As(kNotes);
  for (const char* path : {"Download/Report.TXT", "download/report.txt", "DOWNLOAD/REPORT.TXT",
                           "dOwNlOaD/rEpOrT.tXt"}) {
    SCOPED_TRACE(path);
    AppResult r = notes.Read(path);
    ASSERT_TRUE(Succeeds(r));
    EXPECT_EQ(r.data, "report");
    EXPECT_TRUE(Succeeds(notes.Stat(path)));
  }
  AppResult deep = notes.Read("documents/DEEP/er/notes.MD");
  ASSERT_TRUE(Succeeds(deep));
  EXPECT_EQ(deep.data, "deep");
  // Listings show the lower spelling, once.
  AppResult list = notes.List("download");
  ASSERT_TRUE(Succeeds(list));
  EXPECT_EQ(list.names, std::vector<std::string>{"Report.TXT"});
  EXPECT_TRUE(FailsWith(notes.Stat("download/report.txt2"), ENOENT));
}

TEST_F(AndroidNamesTest, NewNamesThatFoldOntoExistingOnesAreThoseOnes) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/a/b/c/File.txt", "old", kNotes));
  App notes = As(kNotes);
  // O_CREAT | O_EXCL, mkdir: EEXIST at every depth, as casefolded ext4 answers.
  EXPECT_TRUE(FailsWith(notes.Create("download/A/B/C/file.TXT", "new"), EEXIST));
  EXPECT_TRUE(FailsWith(notes.Mkdir("DOWNLOAD"), EEXIST));
  EXPECT_TRUE(FailsWith(notes.Mkdir("Download/A"), EEXIST));
  EXPECT_TRUE(FailsWith(notes.Mkdir("Download/a/B/C"), EEXIST));
  EXPECT_TRUE(FailsWith(notes.Mkdir("Download/a/b/c/FILE.txt"), EEXIST));
  // O_CREAT without O_EXCL opens the existing file, whose name stays as it was.
  EXPECT_TRUE(
      Succeeds(notes.Write("download/a/B/c/FILE.TXT", "new", O_WRONLY | O_CREAT | O_TRUNC)));
  EXPECT_EQ(*storage_.ReadLower("Download/a/b/c/File.txt"), "new");
  EXPECT_FALSE(storage_.LowerExists("Download/a/b/c/FILE.TXT"));
  EXPECT_FALSE(storage_.LowerExists("download"));
  EXPECT_FALSE(storage_.LowerExists("Download/A"));
  // A name that is new in every case is made as spelled.
  EXPECT_TRUE(Succeeds(notes.Create("download/A/b/C/Other.TXT", "x")));
  EXPECT_TRUE(storage_.LowerExists("Download/a/b/c/Other.TXT"));
}

TEST_F(AndroidNamesTest, UnlinkRmdirAndRenameTakeAnySpelling) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/gone.txt", "g", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/Empty", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/from.txt", "from", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/to.txt", "to", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/keep.txt", "keep", kNotes));
  App notes = As(kNotes);
  EXPECT_TRUE(Succeeds(notes.Unlink("download/GONE.txt")));
  EXPECT_FALSE(storage_.LowerExists("Download/gone.txt"));
  EXPECT_TRUE(Succeeds(notes.Rmdir("DOWNLOAD/empty")));
  EXPECT_FALSE(storage_.LowerExists("Download/Empty"));
  // Onto a case twin: it replaces the existing entry, which keeps its spelling (ext4's casefold
  // rewrites the existing directory entry's inode), and RENAME_NOREPLACE refuses it.
  EXPECT_TRUE(
      FailsWith(notes.Rename("Download/from.txt", "Download/TO.TXT", RENAME_NOREPLACE), EEXIST));
  EXPECT_TRUE(Succeeds(notes.Rename("DOWNLOAD/From.txt", "download/TO.TXT")));
  EXPECT_FALSE(storage_.LowerExists("Download/from.txt"));
  EXPECT_FALSE(storage_.LowerExists("Download/TO.TXT"));
  EXPECT_EQ(*storage_.ReadLower("Download/to.txt"), "from");
  // A rename of a name onto another spelling of itself reaches one inode by both names, so the
  // kernel ends it as a no-op, as a casefolded ext4 does: the name keeps its spelling.
  EXPECT_TRUE(Succeeds(notes.Rename("Download/keep.txt", "Download/KEEP.txt")));
  EXPECT_EQ(*storage_.ReadLower("Download/keep.txt"), "keep");
  EXPECT_FALSE(storage_.LowerExists("Download/KEEP.txt"));
}

// A large directory is searched through an index of its names (case_names.h): what the daemon
// adds and removes, and what is added behind its back, is found in any spelling all the same.
TEST_F(AndroidNamesTest, LargeDirectoriesAnswerAlike) {
  for (int i = 0; i < 300; ++i) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("Download/Big/file", i), "f", kNotes));
  }
  App notes = As(kNotes);
  EXPECT_EQ(notes.Read("download/BIG/FILE7").data, "f");
  EXPECT_TRUE(FailsWith(notes.Stat("Download/Big/nosuch"), ENOENT));
  EXPECT_TRUE(FailsWith(notes.Create("Download/Big/File7"), EEXIST));
  ASSERT_TRUE(Succeeds(notes.Create("Download/Big/New", "n")));
  EXPECT_TRUE(FailsWith(notes.Create("Download/Big/NEW"), EEXIST));
  EXPECT_TRUE(FailsWith(notes.Mkdir("Download/Big/new"), EEXIST));
  ASSERT_TRUE(Succeeds(notes.Unlink("Download/Big/nEw")));
  EXPECT_TRUE(FailsWith(notes.Stat("Download/Big/New"), ENOENT));
  ASSERT_TRUE(Succeeds(notes.Create("Download/Big/NEW", "again")));
  EXPECT_EQ(*storage_.ReadLower("Download/Big/NEW"), "again");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/Big/Behind", "b", kNotes));
  EXPECT_EQ(notes.Read("Download/Big/BEHIND").data, "b");
  EXPECT_TRUE(FailsWith(notes.Create("Download/Big/behind"), EEXIST));
}

// Twins made in the lower tree behind the daemon's back: the exact name reaches each; any other
// spelling reaches the first in byte order, whatever order the directory lists them in.
TEST_F(AndroidNamesTest, LowerTwinsResolveDeterministically) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/twin.txt", "lower", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/TWIN.txt", "upper", kNotes));
  App notes = As(kNotes);
  EXPECT_EQ(notes.Read("Download/twin.txt").data, "lower");
  EXPECT_EQ(notes.Read("Download/TWIN.txt").data, "upper");
  EXPECT_EQ(notes.Read("Download/Twin.txt").data, "upper");  // "TWIN.txt" < "twin.txt"
  EXPECT_EQ(notes.Read("Download/twin.TXT").data, "upper");
  AppResult list = notes.List("Download");
  EXPECT_TRUE(Contains(list.names, "twin.txt") && Contains(list.names, "TWIN.txt"));
}

// The package-private area of another app in another spelling answers exactly as its own
// spelling does, for every operation, and changes nothing; its owner reaches it in any spelling.
TEST_F(AndroidNamesTest, NoSpellingReachesAnotherAppsPrivateArea) {
  const std::string exact = "Android/data/com.example.gallery";
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower(exact, kGallery));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(exact + "/secret.txt", "secret", kGallery));
  App social = As(kSocial);
  for (const std::string dir :
       {"android/data/COM.EXAMPLE.GALLERY", "ANDROID/DATA/com.example.Gallery",
        "Android/data/Com.Example.Gallery"}) {
    SCOPED_TRACE(dir);
    auto same = [&](const AppResult& spelled, const AppResult& as_exact) {
      EXPECT_EQ(spelled.err, as_exact.err) << spelled << " vs " << as_exact;
      EXPECT_NE(spelled.err, 0) << spelled;
    };
    same(social.Stat(dir), social.Stat(exact));
    same(social.Stat(dir + "/secret.txt"), social.Stat(exact + "/secret.txt"));
    same(social.Read(dir + "/SECRET.txt"), social.Read(exact + "/secret.txt"));
    same(social.List(dir), social.List(exact));
    same(social.Create(dir + "/evil.txt", "x"), social.Create(exact + "/evil.txt", "x"));
    same(social.Mkdir(dir), social.Mkdir(exact));
    same(social.Mkdir(dir + "/sub"), social.Mkdir(exact + "/sub"));
    same(social.Unlink(dir + "/secret.txt"), social.Unlink(exact + "/secret.txt"));
    same(social.Rename(dir + "/secret.txt", "Download/stolen.txt"),
         social.Rename(exact + "/secret.txt", "Download/stolen.txt"));
    same(social.Rename("Download", dir + "/x"), social.Rename("Download", exact + "/x"));
    same(social.Rmdir(dir), social.Rmdir(exact));
  }
  EXPECT_EQ(*storage_.ReadLower(exact + "/secret.txt"), "secret");
  EXPECT_FALSE(storage_.LowerExists(exact + "/evil.txt"));
  EXPECT_FALSE(storage_.LowerExists(exact + "/sub"));
  EXPECT_FALSE(storage_.LowerExists("Download/stolen.txt"));
  EXPECT_FALSE(storage_.LowerExists("android"));
  EXPECT_FALSE(storage_.LowerExists("Android/data/COM.EXAMPLE.GALLERY"));
  // The owner's own area, in any spelling: decisions are made on the lower name.
  AppResult own = As(kGallery).Read("android/DATA/COM.example.GALLERY/Secret.TXT");
  ASSERT_TRUE(Succeeds(own));
  EXPECT_EQ(own.data, "secret");
  EXPECT_TRUE(Succeeds(As(kGallery).Create("ANDROID/data/com.example.GALLERY/mine.txt", "m")));
  EXPECT_TRUE(storage_.LowerExists(exact + "/mine.txt"));
}

// A hidden name in another spelling answers as the hidden name: a create over it is EACCES, as
// over the exact name (never EEXIST, which would reveal it), and makes no twin.
TEST_F(AndroidNamesTest, HiddenNamesStayHiddenInEverySpelling) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/Private.pdf", PdfBytes(), kNotes));
  App social = As(kSocial);
  AppResult exact = social.Create("Download/Private.pdf", "x");
  AppResult spelled = social.Create("download/PRIVATE.PDF", "x");
  EXPECT_EQ(spelled.err, exact.err) << spelled << " vs " << exact;
  EXPECT_NE(spelled.err, EEXIST);
  EXPECT_NE(spelled.err, 0);
  EXPECT_EQ(social.Stat("download/private.pdf").err, social.Stat("Download/Private.pdf").err);
  EXPECT_EQ(social.Mkdir("Download/PRIVATE.pdf").err, social.Mkdir("Download/Private.pdf").err);
  EXPECT_FALSE(storage_.LowerExists("Download/PRIVATE.PDF"));
  EXPECT_FALSE(storage_.LowerExists("Download/PRIVATE.pdf"));
}

// The name cache, under a policy whose names are cached for every caller (the permissive rules
// with ANDROID semantics), so that a stale dentry would be served if one were left.
class AndroidNamesCacheTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = policy_path_;
    return o;
  }
  void SetUp() override {
    std::string policy = ReadFileOrDie("policy/configs/permissive.textproto");
    const std::string kPosix = "semantics: SEMANTICS_POSIX";
    size_t at = policy.find(kPosix);
    ASSERT_NE(at, std::string::npos) << "permissive.textproto names no semantics";
    policy.replace(at, kPosix.size(), "semantics: SEMANTICS_ANDROID");
    policy_path_ = absl::StrCat(::testing::TempDir(), "/permissive_android.textproto");
    std::ofstream(policy_path_) << policy;
    MountTest::SetUp();
  }
  std::string policy_path_;
};

// touch foo; stat foo; unlink FOO: the kernel was told about FOO only, yet foo is gone too.
TEST_F(AndroidNamesCacheTest, ASpellingIsForgottenWhenAnotherRemovesIt) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/foo.txt", "foo"));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/bar.txt", "bar"));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/baz.txt", "baz"));
  App app = As(kNotes);
  ASSERT_TRUE(Succeeds(app.Stat("Download/foo.txt")));  // cached for every caller
  ASSERT_TRUE(Succeeds(app.Stat("Download/bar.txt")));
  ASSERT_TRUE(Succeeds(app.Unlink("Download/FOO.TXT")));
  ASSERT_TRUE(Succeeds(app.Rename("Download/BAR.txt", "Download/moved.txt")));
  // The notifier thread sends the invalidation right after the reply; allow it a moment.
  for (int i = 0; i < 50 && app.Stat("Download/foo.txt").err != ENOENT; ++i) usleep(20 * 1000);
  EXPECT_TRUE(FailsWith(app.Stat("Download/foo.txt"), ENOENT));
  EXPECT_TRUE(FailsWith(app.Stat("Download/bar.txt"), ENOENT));
  EXPECT_EQ(app.Read("Download/moved.txt").data, "bar");
  // Replaced through another spelling: the lower spelling shows the new object.
  ASSERT_TRUE(Succeeds(app.Stat("Download/baz.txt")));
  ASSERT_TRUE(Succeeds(app.Rename("Download/moved.txt", "Download/BAZ.TXT")));
  for (int i = 0; i < 50 && app.Read("Download/baz.txt").data != "bar"; ++i) usleep(20 * 1000);
  EXPECT_EQ(app.Read("Download/baz.txt").data, "bar");
}

// A name found by another spelling is never cached: after `cat FOO` (the lower foo) and
// `mv bar foo`, FOO is the new foo, not the object the kernel was last told about.
TEST_F(AndroidNamesCacheTest, ACaseMatchedNameIsNeverCached) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/foo.txt", "old"));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/bar.txt", "new"));
  App app = As(kNotes);
  EXPECT_EQ(app.Read("Download/FOO.TXT").data, "old");
  ASSERT_TRUE(Succeeds(app.Rename("Download/bar.txt", "Download/foo.txt")));
  AppResult r = app.Read("Download/FOO.TXT");
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.data, "new");
  EXPECT_TRUE(Succeeds(app.Unlink("Download/foo.txt")));
  EXPECT_TRUE(FailsWith(app.Stat("Download/FOO.TXT"), ENOENT));
}

}  // namespace
}  // namespace scopedfs::tests
