// What an app is answered under Android semantics, where MediaProvider's FUSE daemon
// (jni/FuseDaemon.cpp) answers otherwise than POSIX would: renaming `Android` fails EACCES
// (do_rename), renameat2 takes RENAME_NOREPLACE only (EINVAL for RENAME_EXCHANGE), chmod and
// chown succeed and change nothing (pf_setattr), and new files get 0664 and new directories 0775
// whatever the mode asked and the umask (pf_create, pf_mknod, pf_mkdir); another app's
// Android/data/<pkg> is not there even for mkdir (ENOENT). And which media an app
// sees depends on its target SDK (READ_MEDIA_* from 33 on, READ_EXTERNAL_STORAGE below) and, under
// READ_MEDIA_VISUAL_USER_SELECTED, on what the user picked. Apps are real uids (fork +
// setresuid); the policy is the shipped android.textproto.
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
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

// Extra apps beside policy/configs/apps.textproto's, each targeting the SDK its name says.
constexpr uid_t kSdk33ReadStorage = 10101;  // READ_EXTERNAL_STORAGE only
constexpr uid_t kSdk29ReadStorage = 10103;  // READ_EXTERNAL_STORAGE only
constexpr uid_t kPicker = 10106;            // READ_MEDIA_VISUAL_USER_SELECTED, one photo picked
constexpr char kExtraApps[] = R"pb(
  app {
    package: "com.test.sdk33.res"
    uid: 10101
    target_sdk: 33
    permission: "android.permission.READ_EXTERNAL_STORAGE"
  }
  app {
    package: "com.test.sdk29.res"
    uid: 10103
    target_sdk: 29
    permission: "android.permission.READ_EXTERNAL_STORAGE"
  }
  app {
    package: "com.test.sdk34.picker"
    uid: 10106
    target_sdk: 34
    permission: "android.permission.READ_MEDIA_VISUAL_USER_SELECTED"
    user_selected: "DCIM/Camera/picked.jpg"
  }
)pb";

class AndroidAnswersMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = "policy/configs/android.textproto";
    o.apps = testing::TempDir() + "/android_answers_apps.textproto";
    std::ofstream out(o.apps);
    out << ReadFileOrDie("policy/configs/apps.textproto") << kExtraApps;
    return o;
  }
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
  }

  mode_t LowerMode(const std::string& rel) const {
    struct stat st;
    if (lstat(storage_.Lower(rel).c_str(), &st) != 0) return 0;
    return st.st_mode & 07777;
  }
};

TEST_F(AndroidAnswersMountTest, RenamingAndroidFailsEacces) {
  // An app with all-files access, one without, and root: do_rename refuses every caller.
  for (uid_t uid : {kFiles, kNotes, kRoot}) {
    EXPECT_TRUE(FailsWith(As(uid).Rename("Android", "Android2"), EACCES)) << uid;
    EXPECT_TRUE(FailsWith(As(uid).Rename("android", "Moved"), EACCES)) << uid;
  }
  EXPECT_TRUE(storage_.LowerExists("Android/data"));
  EXPECT_FALSE(storage_.LowerExists("Android2"));
  // Other default directories keep MediaProvider's answer for them (EPERM).
  EXPECT_TRUE(FailsWith(As(kFiles).Rename("DCIM", "Pics"), EPERM));
}

TEST_F(AndroidAnswersMountTest, RenameExchangeFailsEinvalNoreplaceWorks) {
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/a.txt", "a")));
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/b.txt", "b")));
  for (uid_t uid : {kNotes, kFiles, kRoot}) {
    EXPECT_TRUE(
        FailsWith(As(uid).Rename("Download/a.txt", "Download/b.txt", RENAME_EXCHANGE), EINVAL))
        << uid;
  }
  EXPECT_EQ(*storage_.ReadLower("Download/a.txt"), "a");
  EXPECT_EQ(*storage_.ReadLower("Download/b.txt"), "b");
  EXPECT_TRUE(
      FailsWith(As(kNotes).Rename("Download/a.txt", "Download/b.txt", RENAME_NOREPLACE), EEXIST));
  EXPECT_TRUE(Succeeds(As(kNotes).Rename("Download/a.txt", "Download/c.txt", RENAME_NOREPLACE)));
  EXPECT_EQ(*storage_.ReadLower("Download/c.txt"), "a");
}

TEST_F(AndroidAnswersMountTest, ChmodAndChownOfOwnFileSucceedAndChangeNothing) {
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/n.txt", "n")));
  AppResult before = As(kNotes).Stat("Download/n.txt");
  ASSERT_TRUE(Succeeds(before));
  struct stat lower_before;
  ASSERT_EQ(lstat(storage_.Lower("Download/n.txt").c_str(), &lower_before), 0);
  EXPECT_TRUE(Succeeds(As(kNotes).Chmod("Download/n.txt", 0600)));
  EXPECT_TRUE(Succeeds(As(kNotes).Chmod("Download/n.txt", 0777)));
  EXPECT_TRUE(Succeeds(As(kNotes).Chown("Download/n.txt", kNotes, kNotes)));
  EXPECT_TRUE(Succeeds(As(kNotes).Chown("Download/n.txt", kCamera, kCamera)));
  AppResult fchmod_result = As(kNotes).Run("fchmod", [] {
    int fd = open("Download/n.txt", O_RDWR | O_CLOEXEC);
    AppResult r;
    if (fd < 0) return r.err = errno, r;
    if (fchmod(fd, 0400) != 0) r.err = errno;
    close(fd);
    return r;
  });
  EXPECT_TRUE(Succeeds(fchmod_result));
  AppResult after = As(kNotes).Stat("Download/n.txt");
  ASSERT_TRUE(Succeeds(after));
  EXPECT_EQ(after.mode, before.mode) << std::oct << after.mode << " was " << before.mode;
  struct stat lower_after;
  ASSERT_EQ(lstat(storage_.Lower("Download/n.txt").c_str(), &lower_after), 0);
  EXPECT_EQ(lower_after.st_mode, lower_before.st_mode);
  EXPECT_EQ(lower_after.st_uid, lower_before.st_uid);
  EXPECT_EQ(lower_after.st_gid, lower_before.st_gid);
  // The owner still writes it: nothing was taken away either.
  EXPECT_TRUE(Succeeds(As(kNotes).Write("Download/n.txt", "again")));
  // Another app's file is still refused, as MediaProvider refuses a setattr it may not write.
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/IMG_1.jpg", JpegBytes(), kCamera));
  EXPECT_TRUE(FailsWith(As(kNotes).Chmod("DCIM/Camera/IMG_1.jpg", 0600), EACCES));
}

TEST_F(AndroidAnswersMountTest, NewFilesAre0664AndDirectories0775) {
  AppResult made = As(kNotes).Run("create and mkdir under umask 077", [] {
    umask(077);
    AppResult r;
    int fd = open("Download/f.txt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return r.err = errno, r;
    close(fd);
    if (mkdir("Download/d", 0700) != 0) return r.err = errno, r;
    if (mkdir("Download/d/e", 0) != 0) return r.err = errno, r;
    fd = open("Download/d/g.txt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
    if (fd < 0) return r.err = errno, r;
    close(fd);
    return r;
  });
  ASSERT_TRUE(Succeeds(made));
  EXPECT_EQ(LowerMode("Download/f.txt"), 0664u);
  EXPECT_EQ(LowerMode("Download/d"), 0775u);
  EXPECT_EQ(LowerMode("Download/d/e"), 0775u);
  EXPECT_EQ(LowerMode("Download/d/g.txt"), 0664u);
  AppResult seen = As(kNotes).Stat("Download/f.txt");
  ASSERT_TRUE(Succeeds(seen));
  EXPECT_EQ(seen.mode & 07777, 0664u);
  AppResult dir = As(kNotes).Stat("Download/d");
  ASSERT_TRUE(Succeeds(dir));
  EXPECT_EQ(dir.mode & 07777, 0775u);
}

// Another app's Android/data/<pkg> or Android/obb/<pkg> is not there for an app, even when it
// exists: the kernel's lookup finds nothing, so mkdir(2) (and an O_CREAT open) reaches the daemon,
// whose answer must be the device's. MediaProvider's isDirAccessAllowedForFuse and
// insertFileIfNecessaryForFuse answer ENOENT for another package's private path
// (isPrivatePackagePathNotAccessibleByCaller), whatever the lower holds: EACCES or EEXIST would
// tell the app that the package is installed. Android/media/<pkg> is shared, not private.
TEST_F(AndroidAnswersMountTest, MkdirOverAnotherAppsPrivateDirFailsEnoent) {
  for (const char* dir : {"Android/data/com.example.notes", "Android/obb/com.example.notes",
                          "Android/media/com.example.notes"}) {
    SCOPEDFS_ASSERT_OK(storage_.MkdirLower(dir, kNotes));
  }
  for (uid_t uid : {kMusic, kFiles}) {
    for (const char* dir : {"Android/data/com.example.notes", "Android/obb/com.example.notes"}) {
      EXPECT_TRUE(FailsWith(As(uid).Mkdir(dir), ENOENT)) << uid << " " << dir;
      EXPECT_TRUE(FailsWith(As(uid).Create(dir, "x"), ENOENT)) << uid << " " << dir;
      // The same answer as for a package that has no directory (nothing to tell them apart).
      EXPECT_TRUE(FailsWith(As(uid).Mkdir(absl::StrCat(dir, ".absent")), ENOENT)) << uid;
    }
    // The shared media directory is there for every app: the kernel answers EEXIST.
    EXPECT_TRUE(FailsWith(As(uid).Mkdir("Android/media/com.example.notes"), EEXIST)) << uid;
  }
  // The owner finds its own.
  EXPECT_TRUE(FailsWith(As(kNotes).Mkdir("Android/data/com.example.notes"), EEXIST));
  EXPECT_TRUE(storage_.LowerExists("Android/data/com.example.notes"));
  EXPECT_FALSE(storage_.LowerExists("Android/data/com.example.notes.absent"));
}

// A casefolded lower (Android's /data/media) takes "Muſic" (long s) for Music, as ext4's utf8
// folding does: the daemon finds it so on any lower, and judges it as Music, so the layout's
// rules for a default directory hold under that spelling. "Documenſ" folds to "documens", no
// default directory. tools/emulator/guest/casefold_check.sh asserts the same on a casefolded
// ext4 lower, whose kernel decides which spellings meet.
TEST_F(AndroidAnswersMountTest, NamesFoldAsOnACasefoldedLower) {
  const std::string music = "Mu\xc5\xbfic";
  const std::string documens = "Documen\xc5\xbf";
  ASSERT_TRUE(storage_.LowerExists("Music"));
  AppResult seen = As(kCamera).Stat(music);
  ASSERT_TRUE(Succeeds(seen));
  EXPECT_TRUE(FailsWith(As(kCamera).Mkdir(music), EEXIST));
  // Not moved or removed, even by the all-files app, which may move a custom directory.
  EXPECT_TRUE(FailsWith(As(kFiles).Rename(music, "Download/moved"), EPERM));
  EXPECT_TRUE(FailsWith(As(kFiles).Rmdir(music), EPERM));
  // A zero-width space is no part of a name to ext4's utf8 tables of Linux 6.12 and before.
  EXPECT_TRUE(FailsWith(As(kFiles).Rename("Mu\xe2\x80\x8bsic", "Download/moved"), EPERM));
  EXPECT_TRUE(storage_.LowerExists("Music"));
  EXPECT_FALSE(storage_.LowerExists("Download/moved"));
  // It takes audio from an app without permissions, into the lower's Music.
  EXPECT_TRUE(Succeeds(As(kCamera).Create(music + "/song.mp3", "x")));
  EXPECT_TRUE(storage_.LowerExists("Music/song.mp3"));
  // A spelling that folds to no default directory is a custom name.
  EXPECT_TRUE(FailsWith(As(kCamera).Create(documens + "/x.txt", "x"), ENOENT));
  EXPECT_TRUE(FailsWith(As(kCamera).Mkdir(documens), EPERM));
  EXPECT_FALSE(storage_.LowerExists(documens));
}

// An app targeting SDK 33 that holds only READ_EXTERNAL_STORAGE gets no other app's media; one
// targeting 29 with the same grant gets it all.
TEST_F(AndroidAnswersMountTest, TargetSdkDecidesWhatReadExternalStorageReads) {
  const std::string photo = ReadFileOrDie("tests/media/clean.jpg");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/IMG_1.jpg", photo, kCamera));
  AppResult modern = As(kSdk33ReadStorage).Read("DCIM/Camera/IMG_1.jpg");
  EXPECT_TRUE(FailsWith(modern, EACCES)) << "listing visibility: found, not opened";
  AppResult modern_list = As(kSdk33ReadStorage).List("DCIM/Camera");
  ASSERT_TRUE(Succeeds(modern_list));
  EXPECT_FALSE(Contains(modern_list.names, "IMG_1.jpg"));
  AppResult legacy = As(kSdk29ReadStorage).Read("DCIM/Camera/IMG_1.jpg");
  ASSERT_TRUE(Succeeds(legacy));
  EXPECT_TRUE(SameBytes(legacy.data, photo));
  AppResult legacy_list = As(kSdk29ReadStorage).List("DCIM/Camera");
  ASSERT_TRUE(Succeeds(legacy_list));
  EXPECT_TRUE(Contains(legacy_list.names, "IMG_1.jpg"));
}

// Partial access: the picked photo is listed and read, no other.
TEST_F(AndroidAnswersMountTest, PartialAccessSeesOnlyThePickedPhoto) {
  const std::string photo = ReadFileOrDie("tests/media/clean.jpg");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/IMG_1.jpg", photo, kCamera));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/picked.jpg", photo, kCamera));
  AppResult list = As(kPicker).List("DCIM/Camera");
  ASSERT_TRUE(Succeeds(list));
  EXPECT_TRUE(Contains(list.names, "picked.jpg"));
  EXPECT_FALSE(Contains(list.names, "IMG_1.jpg"));
  AppResult picked = As(kPicker).Read("DCIM/Camera/picked.jpg");
  ASSERT_TRUE(Succeeds(picked));
  EXPECT_TRUE(SameBytes(picked.data, photo));
  EXPECT_TRUE(FailsWith(As(kPicker).Read("DCIM/Camera/IMG_1.jpg"), EACCES));
  EXPECT_TRUE(FailsWith(As(kPicker).Write("DCIM/Camera/picked.jpg", "x"), EACCES));
}

}  // namespace
}  // namespace scopedfs::tests
