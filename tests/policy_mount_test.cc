// The default Android policy (policy/configs/android.textproto) end to end: a real scopedfsd mount,
// acted on by forked processes under the sample apps' uids, one rule or guarantee per test.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

// The sample device of README.md: each file with its creator.
constexpr char kPhoto[] = "DCIM/Camera/IMG_0001.jpg";             // camera
constexpr char kVideo[] = "DCIM/Camera/VID_0001.mp4";             // camera
constexpr char kSong[] = "Music/song.mp3";                        // music
constexpr char kTodo[] = "Documents/todo.txt";                    // notes
constexpr char kStatement[] = "Download/statement.pdf";           // notes
constexpr char kFakeJpeg[] = "Pictures/secret.jpg";               // notes; a PDF named .jpg
constexpr char kNotesDb[] = "Android/data/com.example.notes/db";  // notes

std::string Dirname(const std::string& path) { return path.substr(0, path.rfind('/')); }
std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

class PolicyMountTest : public MountTest {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kPhoto, JpegBytes(), kCamera));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kVideo, Mp4Bytes(), kCamera));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kSong, Mp3Bytes(), kMusic));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kTodo, "buy milk\n", kNotes));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kStatement, PdfBytes(), kNotes));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kFakeJpeg, PdfBytes(), kNotes));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kNotesDb, "sqlite", kNotes));
  }

  std::string LowerOrEmpty(const std::string& rel) {
    absl::StatusOr<std::string> data = storage_.ReadLower(rel);
    return data.ok() ? *data : "";
  }
};

// --- Visibility per app: lookup, readdir and read agree --------------------------------------

enum class View { kRaw, kRedacted, kHidden };

struct Row {
  const char* app;
  uid_t uid;
  // photo, video, song, todo, statement, fake jpeg, notes db
  View views[7];
};

void PrintTo(const Row& row, std::ostream* os) { *os << row.app << " (uid " << row.uid << ")"; }

constexpr View R = View::kRaw;
constexpr View X = View::kRedacted;
constexpr View H = View::kHidden;

class VisibilityTest : public PolicyMountTest, public testing::WithParamInterface<Row> {};

// A hidden file is ENOENT to stat and open and missing from its directory's listing (or the
// directory itself is hidden); a redacted one is visible, but these samples are only magic bytes
// and a pattern, not well-formed media, so no redacted copy can be vouched for and the read fails
// closed (EACCES, uncertain_location DENY); a raw one reads back byte for byte. Redacted reads of
// real media are location_mount_test's subject.
TEST_P(VisibilityTest, LookupReaddirAndReadMatchThePolicy) {
  const Row& row = GetParam();
  const App app = As(row.uid);
  const std::pair<const char*, std::string> files[7] = {
      {kPhoto, JpegBytes()},    {kVideo, Mp4Bytes()},    {kSong, Mp3Bytes()}, {kTodo, "buy milk\n"},
      {kStatement, PdfBytes()}, {kFakeJpeg, PdfBytes()}, {kNotesDb, "sqlite"}};
  for (int i = 0; i < 7; ++i) {
    const std::string path = files[i].first;
    const std::string& content = files[i].second;
    SCOPED_TRACE(absl::StrCat(row.app, " on ", path));
    AppResult stat = app.Stat(path);
    AppResult listing = app.List(Dirname(path));
    switch (row.views[i]) {
      case View::kHidden:
        EXPECT_TRUE(FailsWith(stat, ENOENT));
        if (listing.ok()) {
          EXPECT_FALSE(Contains(listing.names, Basename(path))) << listing;
        } else {
          EXPECT_TRUE(FailsWith(listing, ENOENT));
        }
        EXPECT_TRUE(FailsWith(app.Open(path, O_RDONLY), ENOENT));
        break;
      case View::kRedacted:
        EXPECT_TRUE(Succeeds(stat));
        ASSERT_TRUE(Succeeds(listing));
        EXPECT_TRUE(Contains(listing.names, Basename(path))) << listing;
        EXPECT_TRUE(FailsWith(app.Read(path), EACCES));
        break;
      case View::kRaw: {
        ASSERT_TRUE(Succeeds(stat));
        EXPECT_EQ(stat.value, static_cast<int64_t>(content.size()));
        ASSERT_TRUE(Succeeds(listing));
        EXPECT_TRUE(Contains(listing.names, Basename(path))) << listing;
        AppResult read = app.Read(path);
        ASSERT_TRUE(Succeeds(read));
        EXPECT_TRUE(SameBytes(read.data, content));
        break;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    SampleApps, VisibilityTest,
    testing::Values(
        // photo video song todo statement fake-jpeg notes-db
        Row{"gallery", kGallery, {R, R, H, H, H, H, H}},
        Row{"social", kSocial, {X, X, H, H, H, H, H}}, Row{"music", kMusic, {H, H, R, H, H, H, H}},
        Row{"files", kFiles, {X, X, R, R, R, R, H}}, Row{"camera", kCamera, {R, R, H, H, H, H, H}},
        Row{"legacy", kLegacy, {X, X, R, H, H, H, H}}, Row{"notes", kNotes, {H, H, H, R, R, R, R}},
        Row{"suite", kSuite, {X, H, H, H, H, H, H}}, Row{"root", kRoot, {R, R, R, R, R, R, R}},
        Row{"system", kSystem, {R, R, R, R, R, R, R}}, Row{"shell", 2000, {R, R, R, R, R, R, R}},
        Row{"media", 1013, {R, R, R, R, R, R, R}},
        Row{"unregistered_app", 10999, {H, H, H, H, H, H, H}}),
    [](const testing::TestParamInfo<Row>& info) { return std::string(info.param.app); });

// --- Who is not an app ------------------------------------------------------------------------

TEST_F(PolicyMountTest, RootListsOtherAppsPrivateDirectories) {
  AppResult listing = As(kRoot).List("Android/data");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_TRUE(Contains(listing.names, "com.example.notes")) << listing;
}

TEST_F(PolicyMountTest, RootWritesAndDeletesAnyAppsFiles) {
  EXPECT_TRUE(Succeeds(As(kRoot).Write(kTodo, "root was here\n")));
  EXPECT_EQ(LowerOrEmpty(kTodo), "root was here\n");
  EXPECT_TRUE(Succeeds(As(kRoot).Unlink(kNotesDb)));
  EXPECT_FALSE(storage_.LowerExists(kNotesDb));
}

TEST_F(PolicyMountTest, OtherUsersAppsSeeNothing) {
  // User 10's camera, even for a file recorded as its own, on user 0's storage.
  constexpr uid_t kUser10Camera = kUser10 + kCamera;
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/IMG_U10.jpg", JpegBytes(), kUser10Camera));
  const App app = As(kUser10Camera);
  EXPECT_TRUE(FailsWith(app.Stat("DCIM"), ENOENT));
  EXPECT_TRUE(FailsWith(app.Stat("DCIM/Camera/IMG_U10.jpg"), ENOENT));
  EXPECT_TRUE(FailsWith(app.List("."), ENOENT));
  EXPECT_TRUE(FailsWith(As(kUser10 + kSocial).Stat(kPhoto), ENOENT));
}

// --- The storage root -------------------------------------------------------------------------

TEST_F(PolicyMountTest, AppWithoutPermissionsListsTheRoot) {
  AppResult listing = As(kCamera).List(".");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_EQ(listing.names, DefaultTopLevelDirs());
}

TEST_F(PolicyMountTest, AppCannotChangeTheRoot) {
  struct stat before;
  ASSERT_EQ(stat(storage_.lower().c_str(), &before), 0);
  EXPECT_TRUE(FailsWith(As(kFiles).Chmod(".", 0777), EACCES));
  struct stat after;
  ASSERT_EQ(stat(storage_.lower().c_str(), &after), 0);
  EXPECT_EQ(after.st_mode, before.st_mode);
}

TEST_F(PolicyMountTest, NoFilesAtTheRoot) {
  EXPECT_TRUE(FailsWith(As(kNotes).Create("note.txt", "x"), EPERM));
  EXPECT_FALSE(storage_.LowerExists("note.txt"));
}

TEST_F(PolicyMountTest, MissingDefaultDirectoryMayBeRecreated) {
  ASSERT_EQ(rmdir(storage_.Lower("Podcasts").c_str()), 0);
  EXPECT_TRUE(Succeeds(As(kCamera).Mkdir("Podcasts")));
  EXPECT_TRUE(storage_.LowerExists("Podcasts"));
}

TEST_F(PolicyMountTest, CustomTopLevelDirectoryIsEperm) {
  EXPECT_TRUE(FailsWith(As(kCamera).Mkdir("MyApp"), EPERM));
  EXPECT_FALSE(storage_.LowerExists("MyApp"));
}

TEST_F(PolicyMountTest, CustomTopLevelDirectoryIsEpermEvenWithAllFilesAccess) {
  EXPECT_TRUE(FailsWith(As(kFiles).Mkdir("MyFiles"), EPERM));
  EXPECT_FALSE(storage_.LowerExists("MyFiles"));
}

TEST_F(PolicyMountTest, DefaultDirectoriesCannotBeRemovedRenamedOrChanged) {
  const App files = As(kFiles);
  EXPECT_TRUE(FailsWith(files.Rmdir("Ringtones"), EPERM));
  EXPECT_TRUE(FailsWith(files.Rename("Movies", "Films"), EPERM));
  EXPECT_TRUE(FailsWith(files.Chmod("DCIM", 0700), EPERM));
  EXPECT_TRUE(storage_.LowerExists("Ringtones"));
  EXPECT_TRUE(storage_.LowerExists("Movies"));
  EXPECT_FALSE(storage_.LowerExists("Films"));
}

// --- Per-app private areas --------------------------------------------------------------------

TEST_F(PolicyMountTest, OtherAppsDataDirectoryIsHidden) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.social"));
  const App social = As(kSocial);
  EXPECT_TRUE(FailsWith(social.Stat("Android/data/com.example.notes"), ENOENT));
  EXPECT_TRUE(FailsWith(social.Stat(kNotesDb), ENOENT));
  EXPECT_TRUE(FailsWith(social.List("Android/data/com.example.notes"), ENOENT));
  AppResult listing = social.List("Android/data");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_EQ(listing.names, std::vector<std::string>{"com.example.social"});
}

TEST_F(PolicyMountTest, AllFilesAccessDoesNotReachOtherAppsDataDirectory) {
  const App files = As(kFiles);
  EXPECT_TRUE(FailsWith(files.Stat("Android/data/com.example.notes"), ENOENT));
  EXPECT_TRUE(FailsWith(files.Read(kNotesDb), ENOENT));
  AppResult listing = files.List("Android/data");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_FALSE(Contains(listing.names, "com.example.notes")) << listing;
}

TEST_F(PolicyMountTest, OtherAppsObbDirectoryIsHidden) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Android/obb/com.example.notes/main.obb", "obb"));
  EXPECT_TRUE(FailsWith(As(kFiles).Stat("Android/obb/com.example.notes"), ENOENT));
  AppResult own = As(kNotes).Read("Android/obb/com.example.notes/main.obb");
  ASSERT_TRUE(Succeeds(own));
  EXPECT_EQ(own.data, "obb");
}

TEST_F(PolicyMountTest, OwnDataDirectoryHasFullAccessWhoeverCreatedTheFiles) {
  const App notes = As(kNotes);
  // Created by no one in particular (e.g. the installer): still the package's own.
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Android/data/com.example.notes/cache/x", "cached"));
  AppResult read = notes.Read("Android/data/com.example.notes/cache/x");
  ASSERT_TRUE(Succeeds(read));
  EXPECT_EQ(read.data, "cached");
  EXPECT_TRUE(Succeeds(notes.Mkdir("Android/data/com.example.notes/files")));
  // Any type may be created there: a PDF named .jpg would be EPERM in Download's neighbour DCIM.
  EXPECT_TRUE(Succeeds(notes.Create("Android/data/com.example.notes/files/a.jpg", PdfBytes())));
  EXPECT_TRUE(Succeeds(notes.Write("Android/data/com.example.notes/cache/x", "rewritten")));
  EXPECT_TRUE(Succeeds(notes.Rename("Android/data/com.example.notes/cache/x",
                                    "Android/data/com.example.notes/cache/y")));
  EXPECT_TRUE(Succeeds(notes.Unlink("Android/data/com.example.notes/cache/y")));
  EXPECT_TRUE(SameBytes(LowerOrEmpty("Android/data/com.example.notes/files/a.jpg"), PdfBytes()));
  EXPECT_FALSE(storage_.LowerExists("Android/data/com.example.notes/cache/y"));
}

TEST_F(PolicyMountTest, SharedUidPackagesShareTheirDataDirectories) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Android/data/com.example.suite.mail/inbox", "mail"));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Android/data/com.example.suite.calendar/cal", "cal"));
  EXPECT_TRUE(Succeeds(As(kSuite).Read("Android/data/com.example.suite.mail/inbox")));
  EXPECT_TRUE(Succeeds(As(kSuite).Read("Android/data/com.example.suite.calendar/cal")));
  EXPECT_TRUE(FailsWith(As(kNotes).Read("Android/data/com.example.suite.mail/inbox"), ENOENT));
}

// --- Owners -----------------------------------------------------------------------------------

TEST_F(PolicyMountTest, OwnerCreatesReadsWritesRenamesAndDeletes) {
  const App notes = As(kNotes);
  ASSERT_TRUE(Succeeds(notes.Create("Documents/plan.txt", "draft\n")));
  AppResult read = notes.Read("Documents/plan.txt");
  ASSERT_TRUE(Succeeds(read));
  EXPECT_EQ(read.data, "draft\n");
  ASSERT_TRUE(Succeeds(notes.Write("Documents/plan.txt", "final\n")));
  EXPECT_EQ(LowerOrEmpty("Documents/plan.txt"), "final\n");
  ASSERT_TRUE(Succeeds(notes.Rename("Documents/plan.txt", "Documents/done.txt")));
  EXPECT_FALSE(storage_.LowerExists("Documents/plan.txt"));
  EXPECT_EQ(LowerOrEmpty("Documents/done.txt"), "final\n");
  ASSERT_TRUE(Succeeds(notes.Unlink("Documents/done.txt")));
  EXPECT_FALSE(storage_.LowerExists("Documents/done.txt"));
}

TEST_F(PolicyMountTest, OwnerRecordedOnlyInTheXattrHasFullAccess) {
  // Lower file mode and uid say nothing (root, 0644): the recorded creator is what counts.
  const App camera = As(kCamera);
  EXPECT_TRUE(Succeeds(camera.Write(kPhoto, JpegBytes(8192))));
  EXPECT_TRUE(SameBytes(LowerOrEmpty(kPhoto), JpegBytes(8192)));
  EXPECT_TRUE(Succeeds(camera.Truncate(kPhoto, 100)));
  EXPECT_TRUE(SameBytes(LowerOrEmpty(kPhoto), JpegBytes(8192).substr(0, 100)));
}

TEST_F(PolicyMountTest, CreatedFileRecordsItsCreatorInTheLowerXattr) {
  ASSERT_TRUE(Succeeds(As(kSocial).Create("Download/meme.txt", "lol")));
  EXPECT_EQ(storage_.LowerOwner("Download/meme.txt"), std::optional<std::string>("10062"));
  ASSERT_TRUE(Succeeds(As(kSocial).Mkdir("Download/memes")));
  EXPECT_EQ(storage_.LowerOwner("Download/memes"), std::optional<std::string>("10062"));
}

// (The kernel keeps trusted.* from apps itself: ENODATA to read, EPERM to set; the mount serves
// no xattrs under ANDROID semantics, so listing is EOPNOTSUPP.)
TEST_F(PolicyMountTest, OwnerXattrIsNeitherReadableNorListableByApps) {
  ASSERT_TRUE(Succeeds(As(kSocial).Create("Download/meme.txt", "lol")));
  EXPECT_TRUE(
      FailsWith(As(kSocial).GetXattr("Download/meme.txt", "trusted.scopedfs.owner"), ENODATA));
  EXPECT_TRUE(FailsWith(As(kSocial).ListXattr("Download/meme.txt"), EOPNOTSUPP));
}

TEST_F(PolicyMountTest, OwnerXattrCannotBeSetByApps) {
  ASSERT_TRUE(Succeeds(As(kSocial).Create("Download/meme.txt", "lol")));
  EXPECT_TRUE(
      FailsWith(As(kSocial).SetXattr("Download/meme.txt", "trusted.scopedfs.owner", "0"), EPERM));
  EXPECT_EQ(storage_.LowerOwner("Download/meme.txt"), std::optional<std::string>("10062"));
}

// The kernel already keeps trusted.* from unprivileged callers; the daemon must keep it even
// from root through the mount, so the record cannot be read, forged or removed there at all.
TEST_F(PolicyMountTest, OwnerXattrIsReservedEvenForRootThroughTheMount) {
  const App root = As(kRoot);
  EXPECT_TRUE(FailsWith(root.GetXattr(kTodo, "trusted.scopedfs.owner"), EOPNOTSUPP));
  EXPECT_TRUE(FailsWith(root.SetXattr(kTodo, "trusted.scopedfs.owner", "0"), EOPNOTSUPP));
  EXPECT_TRUE(FailsWith(root.ListXattr(kTodo), EOPNOTSUPP));
  EXPECT_EQ(storage_.LowerOwner(kTodo), std::optional<std::string>("10067"));
}

// As MediaProvider's pf_setattr: an app's chown of its own file succeeds and changes nothing.
TEST_F(PolicyMountTest, ChownByAppSucceedsAndChangesNothing) {
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Documents/mine.txt", "x")));
  EXPECT_TRUE(Succeeds(As(kNotes).Chown("Documents/mine.txt", kNotes, kNotes)));
  struct stat st;
  ASSERT_EQ(lstat(storage_.Lower("Documents/mine.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, 0u);
}

// --- Other apps' files ------------------------------------------------------------------------

TEST_F(PolicyMountTest, OtherAppsDocumentIsEnoentForEveryAccess) {
  const App social = As(kSocial);
  EXPECT_TRUE(FailsWith(social.Read(kTodo), ENOENT));
  EXPECT_TRUE(FailsWith(social.Write(kTodo, "overwritten"), ENOENT));
  EXPECT_TRUE(FailsWith(social.Truncate(kTodo, 0), ENOENT));
  EXPECT_TRUE(FailsWith(social.Chmod(kTodo, 0600), ENOENT));
  EXPECT_EQ(LowerOrEmpty(kTodo), "buy milk\n");
}

TEST_F(PolicyMountTest, WritingOtherAppsMediaIsEaccesEvenWithReadPermission) {
  const App gallery = As(kGallery);
  EXPECT_TRUE(FailsWith(gallery.Open(kPhoto, O_WRONLY), EACCES));
  EXPECT_TRUE(FailsWith(gallery.Open(kPhoto, O_RDWR), EACCES));
  EXPECT_TRUE(FailsWith(gallery.Open(kPhoto, O_RDONLY | O_TRUNC), EACCES));
  EXPECT_TRUE(FailsWith(gallery.Truncate(kPhoto, 0), EACCES));
  // legacy reads audio through READ_EXTERNAL_STORAGE (music is the song's owner).
  EXPECT_TRUE(FailsWith(As(kLegacy).Write(kSong, "overwritten"), EACCES));
  EXPECT_TRUE(SameBytes(LowerOrEmpty(kPhoto), JpegBytes()));
  EXPECT_TRUE(SameBytes(LowerOrEmpty(kSong), Mp3Bytes()));
}

TEST_F(PolicyMountTest, UnparsableMediaFailsClosedForRedactedReader) {
  // social may read images but lacks ACCESS_MEDIA_LOCATION; the samples' metadata cannot be
  // parsed, so the read is refused rather than served raw.
  EXPECT_TRUE(Succeeds(As(kSocial).Stat(kPhoto)));
  EXPECT_TRUE(FailsWith(As(kSocial).Open(kPhoto, O_RDONLY), EACCES));
  EXPECT_TRUE(FailsWith(As(kSocial).Open(kVideo, O_RDONLY), EACCES));
}

TEST_F(PolicyMountTest, MediaClassComesFromContentNotTheName) {
  // A JPEG named .txt is not an image; a PDF named .jpg is not one either.
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/photo.txt", JpegBytes(), kCamera));
  EXPECT_TRUE(FailsWith(As(kGallery).Stat("Download/photo.txt"), ENOENT));
  EXPECT_TRUE(FailsWith(As(kGallery).Stat(kFakeJpeg), ENOENT));
  // Created as an image by name, then filled with a PDF: other apps judge the bytes.
  ASSERT_TRUE(Succeeds(As(kCamera).Create("DCIM/Camera/fake.jpg", PdfBytes())));
  EXPECT_TRUE(FailsWith(As(kGallery).Stat("DCIM/Camera/fake.jpg"), ENOENT));
  EXPECT_TRUE(Succeeds(As(kCamera).Stat("DCIM/Camera/fake.jpg")));
}

TEST_F(PolicyMountTest, NonOwnerDeleteOrRenameOfVisibleMediaIsEacces) {
  const App gallery = As(kGallery);
  EXPECT_TRUE(FailsWith(gallery.Unlink(kPhoto), EACCES));
  EXPECT_TRUE(FailsWith(gallery.Rename(kPhoto, "DCIM/Camera/mine.jpg"), EACCES));
  EXPECT_TRUE(FailsWith(As(kLegacy).Unlink(kSong), EACCES));
  EXPECT_TRUE(storage_.LowerExists(kPhoto));
  EXPECT_TRUE(storage_.LowerExists(kSong));
  EXPECT_FALSE(storage_.LowerExists("DCIM/Camera/mine.jpg"));
}

TEST_F(PolicyMountTest, NonOwnerDeleteOrRenameOfHiddenFileIsEnoent) {
  const App camera = As(kCamera);
  EXPECT_TRUE(FailsWith(camera.Unlink(kTodo), ENOENT));
  EXPECT_TRUE(FailsWith(camera.Rename(kTodo, "Documents/stolen.txt"), ENOENT));
  EXPECT_TRUE(FailsWith(As(kMusic).Unlink(kPhoto), ENOENT));
  EXPECT_TRUE(storage_.LowerExists(kTodo));
  EXPECT_TRUE(storage_.LowerExists(kPhoto));
  EXPECT_FALSE(storage_.LowerExists("Documents/stolen.txt"));
}

TEST_F(PolicyMountTest, AllFilesAccessReadsWritesAndDeletesSharedFiles) {
  const App files = As(kFiles);
  EXPECT_TRUE(Succeeds(files.Write(kTodo, "edited by files\n")));
  EXPECT_EQ(LowerOrEmpty(kTodo), "edited by files\n");
  EXPECT_TRUE(Succeeds(files.Rename(kStatement, "Download/statement-2024.pdf")));
  EXPECT_TRUE(Succeeds(files.Unlink("Download/statement-2024.pdf")));
  EXPECT_FALSE(storage_.LowerExists("Download/statement-2024.pdf"));
  // all-files-access precedes the create-type rules in the policy.
  EXPECT_TRUE(Succeeds(files.Create("DCIM/report.pdf", PdfBytes())));
}

// --- What may be created where ----------------------------------------------------------------

TEST_F(PolicyMountTest, CreatingTheWrongTypeForADirectoryIsEperm) {
  const App camera = As(kCamera);
  EXPECT_TRUE(FailsWith(camera.Create("DCIM/doc.pdf", PdfBytes()), EPERM));
  EXPECT_TRUE(FailsWith(camera.Create("Music/cover.jpg", JpegBytes()), EPERM));
  EXPECT_TRUE(FailsWith(camera.Create("Pictures/tune.mp3", Mp3Bytes()), EPERM));
  EXPECT_TRUE(FailsWith(camera.Create("Movies/still.jpg", JpegBytes()), EPERM));
  for (const char* path :
       {"DCIM/doc.pdf", "Music/cover.jpg", "Pictures/tune.mp3", "Movies/still.jpg"}) {
    EXPECT_FALSE(storage_.LowerExists(path)) << path;
  }
}

TEST_F(PolicyMountTest, CreatingTheRightTypeForADirectorySucceeds) {
  const App camera = As(kCamera);
  EXPECT_TRUE(Succeeds(camera.Create("DCIM/Camera/IMG_0002.jpg", JpegBytes())));
  EXPECT_TRUE(Succeeds(camera.Create("Pictures/shot.png", JpegBytes())));
  EXPECT_TRUE(Succeeds(camera.Create("Pictures/clip.mp4", Mp4Bytes())));
  EXPECT_TRUE(Succeeds(camera.Create("Movies/clip.mp4", Mp4Bytes())));
  EXPECT_TRUE(Succeeds(camera.Create("Music/track.mp3", Mp3Bytes())));
  EXPECT_TRUE(Succeeds(camera.Create("Ringtones/ring.mp3", Mp3Bytes())));
  EXPECT_TRUE(SameBytes(LowerOrEmpty("DCIM/Camera/IMG_0002.jpg"), JpegBytes()));
}

TEST_F(PolicyMountTest, DownloadAndDocumentsAcceptAnyType) {
  const App notes = As(kNotes);
  EXPECT_TRUE(Succeeds(notes.Create("Download/a.pdf", PdfBytes())));
  EXPECT_TRUE(Succeeds(notes.Create("Download/b.jpg", JpegBytes())));
  EXPECT_TRUE(Succeeds(notes.Create("Download/c", "no extension")));
  EXPECT_TRUE(Succeeds(notes.Create("Documents/d.mp4", Mp4Bytes())));
  EXPECT_TRUE(Succeeds(notes.Mkdir("Download/sub")));
  EXPECT_TRUE(Succeeds(notes.Create("Download/sub/e.bin", "e")));
}

TEST_F(PolicyMountTest, SubdirectoriesMayBeCreatedBelowDefaultDirectories) {
  EXPECT_TRUE(Succeeds(As(kCamera).Mkdir("DCIM/Trips")));
  EXPECT_TRUE(Succeeds(As(kCamera).Mkdir("DCIM/Trips/2024")));
  EXPECT_TRUE(Succeeds(As(kCamera).Create("DCIM/Trips/2024/a.jpg", JpegBytes())));
  EXPECT_EQ(storage_.LowerOwner("DCIM/Trips/2024"), std::optional<std::string>("10065"));
}

// --- Directories ------------------------------------------------------------------------------

TEST_F(PolicyMountTest, OtherAppsDirectoriesAreVisibleButReadOnly) {
  const App notes = As(kNotes);
  ASSERT_TRUE(Succeeds(notes.Mkdir("Documents/Work")));
  ASSERT_TRUE(Succeeds(notes.Mkdir("Documents/Work/Empty")));
  ASSERT_TRUE(Succeeds(notes.Create("Documents/Work/salary.txt", "1")));
  const App camera = As(kCamera);
  AppResult documents = camera.List("Documents");
  ASSERT_TRUE(Succeeds(documents));
  EXPECT_EQ(documents.names, std::vector<std::string>{"Work"});
  AppResult work = camera.List("Documents/Work");
  ASSERT_TRUE(Succeeds(work));
  EXPECT_EQ(work.names, std::vector<std::string>{"Empty"});
  EXPECT_TRUE(FailsWith(camera.Rmdir("Documents/Work/Empty"), EACCES));
  EXPECT_TRUE(FailsWith(camera.Rename("Documents/Work", "Documents/Mine"), EACCES));
  EXPECT_TRUE(storage_.LowerExists("Documents/Work/Empty"));
}

}  // namespace
}  // namespace scopedfs::tests
