// Attacks on the namespace by hostile apps, as their own uids with real syscalls: a second name
// that carries more rights than the first (links, renames), moves that take the storage layout
// apart, and moves whose answer would count or classify what the mover cannot see. Each test
// passes only if the attack gains nothing.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kPhoto[] = "DCIM/Camera/IMG_0001.jpg";
constexpr char kSong[] = "Music/song.mp3";
constexpr char kGalleryData[] = "Android/data/com.example.gallery/files";
constexpr char kGalleryMedia[] = "Android/media/com.example.gallery";
constexpr char kMusicData[] = "Android/data/com.example.music";
constexpr char kMusicMedia[] = "Android/media/com.example.music";

// As `app`: a hard link from `from` to `to`, then every change the new name might allow: a write,
// a truncate and a user.* xattr. err: the link's errno (0 if made); what: each change that went
// through, which is what the attack was after.
AppResult LinkThenChange(const App& app, const std::string& from, const std::string& to) {
  return app.Run(absl::StrCat("link ", from, " ", to, " and change it"), [&] {
    AppResult r;
    if (link(from.c_str(), to.c_str()) != 0) {
      r.err = errno;
      return r;
    }
    int fd = open(to.c_str(), O_WRONLY);
    if (fd >= 0) {
      if (pwrite(fd, "XXXX", 4, 0) == 4) r.what += " wrote;";
      close(fd);
    }
    if (truncate(to.c_str(), 1) == 0) r.what += " truncated;";
    if (setxattr(to.c_str(), "user.x", "1", 1, 0) == 0) r.what += " set an xattr;";
    return r;
  });
}

// --- Under ANDROID semantics: no links at all, as on a device --------------------------------

class AndroidNamespaceTest : public MountTest {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    photo_ = ReadFileOrDie("tests/media/gps.jpg");
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kPhoto, photo_, kCamera));
    SCOPEDFS_ASSERT_OK(storage_.MkdirLower(kGalleryData, kGallery));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kSong, Mp3Bytes(), kNotes));
    SCOPEDFS_ASSERT_OK(storage_.MkdirLower(kMusicData, kMusic));
  }
  std::string photo_;
};

// The reported attack: gallery (images read-only, with ACCESS_MEDIA_LOCATION) links the camera's
// photo into its own Android/data and writes through the link. MediaProvider implements neither
// LINK nor SYMLINK, so on a device both fail: the kernel turns the daemon's ENOSYS into EPERM for
// a link (fuse_link), and passes it on for a symlink. So do they here, for every caller.
TEST_F(AndroidNamespaceTest, LinksAndSymlinksFailAsOnADevice) {
  std::string mine = absl::StrCat(kGalleryData, "/x.jpg");
  AppResult linked = LinkThenChange(As(kGallery), kPhoto, mine);
  EXPECT_TRUE(FailsWith(linked, EPERM)) << linked.what;
  // The music app and another app's MP3 (the report's second case).
  std::string song = absl::StrCat(kMusicData, "/song.mp3");
  AppResult music = LinkThenChange(As(kMusic), kSong, song);
  EXPECT_TRUE(FailsWith(music, EPERM)) << music.what;
  EXPECT_TRUE(FailsWith(As(kGallery).Symlink(std::string("../../../../") + kPhoto,
                                             absl::StrCat(kGalleryData, "/s.jpg")),
                        ENOSYS));
  // Not even root or the owner makes one through the mount.
  EXPECT_TRUE(FailsWith(As(kRoot).Link(kPhoto, "DCIM/Camera/copy.jpg"), EPERM));
  EXPECT_TRUE(FailsWith(As(kCamera).Link(kPhoto, "DCIM/Camera/copy.jpg"), EPERM));
  EXPECT_TRUE(FailsWith(As(kNotes).Symlink("x", "Download/s"), ENOSYS));
  absl::StatusOr<std::string> lower = storage_.ReadLower(kPhoto);
  ASSERT_TRUE(lower.ok());
  EXPECT_TRUE(SameBytes(*lower, photo_));
  EXPECT_FALSE(storage_.LowerExists(mine));
  EXPECT_FALSE(storage_.LowerExists("DCIM/Camera/copy.jpg"));
}

// --- The layout's move rules ------------------------------------------------------------------

// The reported attack: the all-files app moves Android/data into Download/, after which every app
// could list the package directories and the files app would own a new Android/data.
TEST_F(AndroidNamespaceTest, AllFilesAppCannotMoveTheLayoutApart) {
  ASSERT_TRUE(Succeeds(As(kFiles).Mkdir("Download/d")));
  ASSERT_TRUE(Succeeds(As(kFiles).Create("Download/f.txt", "f")));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.files", kFiles));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/obb/com.example.files", kFiles));
  struct Case {
    const char* from;
    const char* to;
    int err;
  };
  const Case cases[] = {
      {"Android/data", "Download/data", EPERM},
      {"Android/obb", "Download/obb", EPERM},
      {"Android/media", "Download/media", EPERM},
      // MediaProvider's do_rename refuses `Android` itself first, with EACCES.
      {"Android", "Download/Android", EACCES},
      {"DCIM", "Download/DCIM", EPERM},
      {"Android/data/com.example.files", "Download/mine", EPERM},
      // Into the root, into Android/ itself or an area-holding directory of it.
      {"Download/f.txt", "f.txt", EPERM},
      {"Download/d", "d", EPERM},
      {"Download/d", "Android/d", EPERM},
      {"Download/d", "Android/data/d", EPERM},
      {"Download/d", "Android/media/com.example.files", EPERM},
      // Android/data/<pkg> is a mount of its own on a device: a move into it crosses mounts.
      {"Download/d", "Android/data/com.example.files/d", EXDEV},
      {"Download/f.txt", "Android/obb/com.example.files/f.txt", EXDEV},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(FailsWith(As(kFiles).Rename(c.from, c.to), c.err)) << c.from << " -> " << c.to;
  }
  for (const char* kept :
       {"Android/data", "Android/obb", "Android/media", "DCIM", "Download/d", "Download/f.txt"}) {
    EXPECT_TRUE(storage_.LowerExists(kept)) << kept;
  }
  // Another app still sees no package directory but its own.
  AppResult listing = As(kSocial).List("Android/data");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_FALSE(Contains(listing.names, "com.example.gallery"));
  // What the rules allow still moves: within Download, and into the app's own Android/media.
  EXPECT_TRUE(Succeeds(As(kFiles).Rename("Download/d", "Download/e")));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/media/com.example.files", kFiles));
  EXPECT_TRUE(Succeeds(As(kFiles).Rename("Download/e", "Android/media/com.example.files/e")));
}

// The reported squat (issue 29): the music app made Android/foo, another package's media
// directory (which it then owned) and one of a package not installed. No app creates anything
// below Android/ but in its own Android/{data,obb,media}/<package>: a device refuses files there
// (MediaProvider's insertFileIfNecessaryForFuse: EPERM), and so do we for directories
// (`nothing-else-under-android` in the policy), by create, mkdir or rename.
TEST_F(AndroidNamespaceTest, NoAppCreatesUnderAndroidButInItsOwnDirectories) {
  const App music = As(kMusic);
  for (const char* dir :
       {"Android/foo", "Android/media/com.example.notes", "Android/media/com.not.installed"}) {
    EXPECT_TRUE(FailsWith(music.Mkdir(dir), EPERM)) << dir;
    EXPECT_FALSE(storage_.LowerExists(dir)) << dir;
  }
  // Another package's private directory is not even there for it.
  EXPECT_TRUE(FailsWith(music.Mkdir("Android/data/com.example.notes"), ENOENT));
  // Files directly below Android/ and Android/media (a name in Android/data or Android/obb is
  // another package's directory: ENOENT, as on a device).
  for (const char* file : {"Android/x.txt", "Android/media/x.mp3"}) {
    EXPECT_TRUE(FailsWith(music.Create(file, "x"), EPERM)) << file;
    EXPECT_FALSE(storage_.LowerExists(file)) << file;
  }
  EXPECT_TRUE(FailsWith(music.Create("Android/data/x.txt", "x"), ENOENT));
  EXPECT_FALSE(storage_.LowerExists("Android/data/x.txt"));
  // Its own media directory it makes, and anything in it.
  EXPECT_TRUE(Succeeds(music.Mkdir("Android/media/com.example.music")));
  EXPECT_TRUE(Succeeds(music.Mkdir("Android/media/com.example.music/sub")));
  EXPECT_TRUE(Succeeds(music.Create("Android/media/com.example.music/sub/a.txt", "a")));
  // The notes app makes its own; the music app creates nothing in it.
  ASSERT_TRUE(Succeeds(As(kNotes).Mkdir("Android/media/com.example.notes")));
  EXPECT_TRUE(FailsWith(music.Mkdir("Android/media/com.example.notes/d"), EPERM));
  EXPECT_TRUE(FailsWith(music.Create("Android/media/com.example.notes/n.txt", "x"), EPERM));
  // Nor does a rename put anything in those places.
  ASSERT_TRUE(Succeeds(music.Mkdir("Download/d")));
  ASSERT_TRUE(Succeeds(music.Create("Download/f.txt", "f")));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"Download/d", "Android/foo"},
           {"Download/d", "Android/media/com.not.installed"},
           {"Download/d", "Android/media/com.example.notes/d"},
           {"Download/f.txt", "Android/f.txt"},
           {"Download/f.txt", "Android/media/f.txt"},
           {"Download/f.txt", "Android/media/com.example.notes/f.txt"}}) {
    EXPECT_TRUE(FailsWith(music.Rename(from, to), EPERM)) << from << " -> " << to;
    EXPECT_FALSE(storage_.LowerExists(to)) << to;
  }
  // Into its own, it may.
  EXPECT_TRUE(Succeeds(music.Rename("Download/f.txt", "Android/media/com.example.music/f.txt")));
  EXPECT_TRUE(Succeeds(music.Rename("Download/d", "Android/media/com.example.music/d")));
}

// A move is judged for everything it carries, directories included: the camera's empty folder
// moved into the social app's Android/media would become the social app's to rename and remove.
TEST_F(AndroidNamespaceTest, DirectoryMoveIsJudgedForTheDirectoriesItCarries) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/cam", kCamera));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/cam/sub", kCamera));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/media/com.example.social", kSocial));
  EXPECT_TRUE(FailsWith(As(kSocial).Rmdir("Download/cam/sub"), EACCES));
  EXPECT_TRUE(
      FailsWith(As(kFiles).Rename("Download/cam", "Android/media/com.example.social/cam"), EXDEV));
  EXPECT_TRUE(storage_.LowerExists("Download/cam/sub"));
  // A directory no app gains anything over moves.
  EXPECT_TRUE(Succeeds(As(kFiles).Rename("Download/cam", "Documents/cam")));
}

// --- Moves tell nothing about what the mover cannot see ---------------------------------------

class HiddenEntriesMoveTest : public AndroidNamespaceTest {
 protected:
  // The social app's own directory in Download, holding `hidden` files of the notes app (which the
  // social app cannot see) made of `content`.
  void Fill(const std::string& dir, int hidden, const std::string& content) {
    ASSERT_TRUE(Succeeds(As(kSocial).Mkdir(dir)));
    ASSERT_TRUE(Succeeds(As(kSocial).Create(dir + "/mine.txt", "mine")));
    for (int i = 0; i < hidden; ++i) {
      SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat(dir, "/h", i), content, kNotes));
    }
    AppResult listing = As(kSocial).List(dir);
    ASSERT_TRUE(Succeeds(listing));
    ASSERT_EQ(listing.names.size(), 1u) << "the notes app's files are hidden from social";
  }
};

// The report: a move refused only past 4,096 entries, hidden ones included, let an app bisect to
// the exact number of other apps' hidden files in its own directory. The answer now depends on
// one bit only: whether the tree holds anything the mover cannot see.
TEST_F(HiddenEntriesMoveTest, AnswerDoesNotCountHiddenEntries) {
  Fill("Download/none", 0, "");
  Fill("Download/one", 1, PdfBytes());
  Fill("Download/many", 5000, PdfBytes(64));
  EXPECT_TRUE(Succeeds(As(kSocial).Rename("Download/none", "Download/none2")));
  AppResult one = As(kSocial).Rename("Download/one", "Download/one2");
  AppResult many = As(kSocial).Rename("Download/many", "Download/many2");
  EXPECT_EQ(one.err, many.err) << one << " / " << many;
  EXPECT_TRUE(FailsWith(one, EXDEV));
  EXPECT_TRUE(storage_.LowerExists("Download/one/h0"));
  EXPECT_TRUE(storage_.LowerExists("Download/many/h4999"));
}

// The report's second half: moved into another app's Android/media/<pkg>, the answer told
// whether that app would gain a read, i.e. the hidden file's kind. A variant: the same into the
// mover's own Android/data, and a hidden audio file against a hidden document.
TEST_F(HiddenEntriesMoveTest, AnswerDoesNotClassifyHiddenEntries) {
  Fill("Download/audio", 1, Mp3Bytes());
  Fill("Download/doc", 1, PdfBytes());
  // The mover's own media directory: nothing may be put in another package's (EPERM, whatever
  // the tree holds: NoAppCreatesUnderAndroidButInItsOwnDirectories).
  const std::string own_media = "Android/media/com.example.social";
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower(own_media, kSocial));
  for (const std::string& into : {own_media, std::string("Download/sub")}) {
    if (into == "Download/sub") {
      ASSERT_TRUE(Succeeds(As(kSocial).Mkdir(into)));
    }
    AppResult audio = As(kSocial).Rename("Download/audio", into + "/audio");
    AppResult doc = As(kSocial).Rename("Download/doc", into + "/doc");
    EXPECT_EQ(audio.err, doc.err) << into << ": " << audio << " / " << doc;
    EXPECT_TRUE(FailsWith(audio, EXDEV)) << into;
  }
}

// --- No tree walk under the namespace lock ---------------------------------------------------

class TreeCheckMountTest : public AndroidNamespaceTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.control_socket = true;
    return o;
  }
};

// A directory move's tree is judged before the namespace lock is taken (other apps' creates and
// renames wait for that lock), and the verdict is used under it when no name changed meanwhile:
// a quiet move of 3,000 files walks nothing while holding the lock.
TEST_F(TreeCheckMountTest, AQuietDirectoryMoveWalksNothingUnderTheLock) {
  ASSERT_TRUE(Succeeds(As(kSocial).Mkdir("Download/big")));
  for (int i = 0; i < 3000; ++i) {
    SCOPEDFS_ASSERT_OK(
        storage_.WriteLower(absl::StrCat("Download/big/f", i, ".txt"), "x", kSocial));
  }
  ASSERT_TRUE(Succeeds(As(kSocial).Rename("Download/big", "Documents/big")));
  absl::StatusOr<DaemonStats> stats = storage_.Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ((*stats)["tree_checks_unlocked"], 1);
  EXPECT_EQ((*stats)["tree_checks_locked"], 0);
  EXPECT_TRUE(storage_.LowerExists("Documents/big/f2999.txt"));
}

// --- POSIX semantics with the Android rules: links are made, and bound by construction --------

// The Android rules under POSIX semantics: apps make objects as themselves and mode bits apply
// too, so the attacked files are world-writable in the lower tree: only the policy stands between
// the attacker and them, as under ANDROID semantics.
class PosixRulesLinkTest : public MountTest {
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
    photo_ = ReadFileOrDie("tests/media/gps.jpg");
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kPhoto, photo_));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kSong, Mp3Bytes()));
    Own(kPhoto, kCamera, 0666);
    Own(kSong, kNotes, 0666);
    ASSERT_EQ(chmod(storage_.Lower("DCIM/Camera").c_str(), 0777), 0);
    for (const char* dir : {kGalleryData, kGalleryMedia}) {
      SCOPEDFS_ASSERT_OK(storage_.MkdirLower(dir));
      Own(dir, kGallery, 0755);
    }
    for (const char* dir : {kMusicData, kMusicMedia}) {
      SCOPEDFS_ASSERT_OK(storage_.MkdirLower(dir));
      Own(dir, kMusic, 0755);
    }
  }
  void Own(const std::string& rel, uid_t uid, mode_t mode) {
    ASSERT_EQ(chown(storage_.Lower(rel).c_str(), uid, uid), 0) << rel;
    ASSERT_EQ(chmod(storage_.Lower(rel).c_str(), mode), 0) << rel;
  }
  void ExpectUnchanged() {
    absl::StatusOr<std::string> photo = storage_.ReadLower(kPhoto);
    ASSERT_TRUE(photo.ok());
    EXPECT_TRUE(SameBytes(*photo, photo_));
    absl::StatusOr<std::string> song = storage_.ReadLower(kSong);
    ASSERT_TRUE(song.ok());
    EXPECT_TRUE(SameBytes(*song, Mp3Bytes()));
  }
  std::string policy_path_;
  std::string photo_;
};

// The reported attack, where the layout lets a link be made (the app's own Android/media, which is
// no mount of its own): the link would give gallery write, truncate and xattrs on a photo it may
// only read. Refused; and into Android/data, a separate mount on a device, EXDEV before any rule.
TEST_F(PosixRulesLinkTest, LinkGivesNoWriteOnAReadOnlyPhoto) {
  EXPECT_TRUE(FailsWith(As(kGallery).Open(kPhoto, O_WRONLY), EACCES));
  for (const char* dir : {kGalleryMedia, kGalleryData}) {
    AppResult r = LinkThenChange(As(kGallery), kPhoto, absl::StrCat(dir, "/x.jpg"));
    EXPECT_TRUE(FailsWith(r, EXDEV)) << dir << ":" << r.what;
    EXPECT_FALSE(storage_.LowerExists(absl::StrCat(dir, "/x.jpg")));
  }
  ExpectUnchanged();
}

TEST_F(PosixRulesLinkTest, LinkGivesNoWriteOnAnotherAppsSong) {
  EXPECT_TRUE(Succeeds(As(kMusic).Read(kSong)));
  EXPECT_TRUE(FailsWith(As(kMusic).Open(kSong, O_WRONLY), EACCES));
  AppResult r = LinkThenChange(As(kMusic), kSong, absl::StrCat(kMusicMedia, "/song.mp3"));
  EXPECT_TRUE(FailsWith(r, EXDEV)) << r.what;
  ExpectUnchanged();
}

// The check is no blanket refusal: a link that gives no app more than the photo's own name (the
// owner's, beside it) is made, and both names read the same.
TEST_F(PosixRulesLinkTest, LinkThatGivesNoOneMoreIsMade) {
  EXPECT_TRUE(Succeeds(As(kCamera).Link(kPhoto, "DCIM/Camera/IMG_0001_copy.jpg")));
  EXPECT_TRUE(SameBytes(As(kGallery).Read("DCIM/Camera/IMG_0001_copy.jpg").data, photo_));
  ExpectUnchanged();
}

}  // namespace
}  // namespace scopedfs::tests
