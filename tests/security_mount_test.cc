// Attacks by hostile apps against a real mount under the default Android policy (security issue,
// findings 1-10): each test is the attack as an app would run it, as its own uid, with real
// syscalls, plus at least one variant the report did not spell out. A test passes only if the
// attack gains nothing: no location byte, no write into another app's file, no set-uid file, no
// hint of a hidden name, no dead daemon.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

// The social app's own area that a move may enter: Android/media/<pkg> (Android/data/<pkg> is a
// separate mount on a device, so moves into it fail EXDEV before any rule is asked).
constexpr char kSocialDir[] = "Android/media/com.example.social";

// The GPS rationals exiftool wrote into tests/media/gps.jpg (37°46'29.64", 122°25'9.84"), big
// endian: found independently of the parsers.
std::string BigEndian(std::vector<uint32_t> values) {
  std::string out;
  for (uint32_t v : values) {
    for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
  return out;
}
const std::string kLat = BigEndian({37, 1, 46, 1, 741, 25});
const std::string kLon = BigEndian({122, 1, 25, 1, 246, 25});
bool HasGps(const std::string& data) {
  return data.find(kLat) != std::string::npos || data.find(kLon) != std::string::npos;
}

AppResult Fail(int err, std::string what) {
  AppResult r;
  r.err = err;
  r.what = std::move(what);
  return r;
}

std::string ReadFd(int fd) {
  std::string data;
  char buf[65536];
  off_t off = 0;
  ssize_t n;
  while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
    data.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return data;
}

class SecurityMountTest : public MountTest {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    gps_ = ReadFileOrDie("tests/media/gps.jpg");
    clean_ = ReadFileOrDie("tests/media/clean.jpg");
    ASSERT_TRUE(HasGps(gps_));
    ASSERT_FALSE(HasGps(clean_));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/IMG_0001.jpg", gps_, kCamera));
    SCOPEDFS_ASSERT_OK(storage_.MkdirLower(kSocialDir, kSocial));
  }
  std::string gps_;
  std::string clean_;
};

// --- Finding 1: decisions follow the object's current name ----------------------------------

// The reported attack: a directory fd held across a rename into the app's own area, then a link
// through it. Whatever the daemon allows, the app must not read the photo raw or write into it.
TEST_F(SecurityMountTest, LinkThroughDirFdHeldAcrossRenameGainsNothing) {
  AppResult r = As(kSocial).Run("link via renamed dir fd", [&] {
    if (mkdir("DCIM/d", 0755) != 0) return Fail(errno, "mkdir");
    int dfd = open("DCIM/d", O_RDONLY | O_DIRECTORY);
    if (dfd < 0) return Fail(errno, "open dir");
    std::string moved = std::string(kSocialDir) + "/d";
    if (rename("DCIM/d", moved.c_str()) != 0) return Fail(errno, "rename");
    AppResult out;
    if (linkat(AT_FDCWD, "DCIM/Camera/IMG_0001.jpg", dfd, "x.jpg", 0) != 0) {
      out.value = errno;  // refused: nothing gained
      close(dfd);
      return out;
    }
    // Through the name the link has now, walked afresh.
    std::string now = moved + "/x.jpg";
    int fd = open(now.c_str(), O_RDONLY);
    if (fd >= 0) {
      out.data = ReadFd(fd);
      close(fd);
    }
    int rw = open(now.c_str(), O_RDWR);
    if (rw >= 0) {
      out.err = EEXIST;  // opened for writing: a failure of the test
      out.what = "opened another app's photo read-write";
      if (pwrite(rw, "XXXX", 4, 0) != 4) out.what += " (write failed)";
      close(rw);
    }
    close(dfd);
    return out;
  });
  ASSERT_TRUE(Succeeds(r));
  EXPECT_FALSE(HasGps(r.data)) << "raw GPS read through the link";
  absl::StatusOr<std::string> lower = storage_.ReadLower("DCIM/Camera/IMG_0001.jpg");
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(*lower, gps_) << "the camera's photo was changed";
}

// Variant: a directory moved from the app's own area into DCIM keeps its fd, and a create through
// it is judged where the directory is now (DCIM accepts no text files: EPERM), not where it was.
TEST_F(SecurityMountTest, CreateThroughDirFdIsJudgedAtTheDirectorysNewName) {
  AppResult r = As(kSocial).Run("create via moved dir fd", [&] {
    std::string own = std::string(kSocialDir) + "/d";
    if (mkdir(own.c_str(), 0755) != 0) return Fail(errno, "mkdir");
    int dfd = open(own.c_str(), O_RDONLY | O_DIRECTORY);
    if (dfd < 0) return Fail(errno, "open dir");
    if (rename(own.c_str(), "DCIM/d") != 0) return Fail(errno, "rename");
    int fd = openat(dfd, "notes.txt", O_CREAT | O_EXCL | O_WRONLY, 0644);
    AppResult out;
    out.value = fd >= 0 ? 0 : errno;
    if (fd >= 0) close(fd);
    close(dfd);
    return out;
  });
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.value, EPERM) << ErrnoName(static_cast<int>(r.value));
  EXPECT_FALSE(storage_.LowerExists("DCIM/d/notes.txt"));
}

// Variant: the reverse direction works too (the create is allowed where the directory now is),
// and a directory removed under a held fd accepts nothing.
TEST_F(SecurityMountTest, HeldDirFdFollowsRenameAndRemoval) {
  AppResult r = As(kSocial).Run("held dir fds", [&] {
    if (mkdir("DCIM/e", 0755) != 0) return Fail(errno, "mkdir");
    int dfd = open("DCIM/e", O_RDONLY | O_DIRECTORY);
    std::string own = std::string(kSocialDir) + "/e";
    if (dfd < 0 || rename("DCIM/e", own.c_str()) != 0) return Fail(errno, "rename");
    AppResult out;
    int fd = openat(dfd, "notes.txt", O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return Fail(errno, "create in own area through moved fd");
    close(fd);
    if (unlinkat(dfd, "notes.txt", 0) != 0 || rmdir(own.c_str()) != 0) return Fail(errno, "rm");
    fd = openat(dfd, "late.txt", O_CREAT | O_EXCL | O_WRONLY, 0644);
    out.value = fd >= 0 ? 0 : errno;
    if (fd >= 0) close(fd);
    close(dfd);
    return out;
  });
  ASSERT_TRUE(Succeeds(r));
  EXPECT_NE(r.value, 0) << "created a file in a removed directory";
}

// --- Finding 3: no set-uid, set-gid or executable files from apps ------------------------------

TEST_F(SecurityMountTest, AppsNeverMakeSetuidSetgidOrExecutableFiles) {
  AppResult r = As(kNotes).Run("modes", [&] {
    int fd = open("Download/x", O_CREAT | O_EXCL | O_WRONLY, 06777);
    if (fd < 0) return Fail(errno, "create");
    if (fchmod(fd, 04755) != 0) return Fail(errno, "fchmod");
    close(fd);
    if (chmod("Download/x", 06755) != 0) return Fail(errno, "chmod");
    if (mkdir("Download/d", 02777 | S_ISVTX) != 0) return Fail(errno, "mkdir");
    if (chmod("Download/d", 06777) != 0) return Fail(errno, "chmod dir");
    return AppResult{};
  });
  ASSERT_TRUE(Succeeds(r));
  struct stat st;
  ASSERT_EQ(lstat(storage_.Lower("Download/x").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID | 0111), 0u) << std::oct << st.st_mode;
  ASSERT_EQ(lstat(storage_.Lower("Download/d").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID | S_ISVTX), 0u) << std::oct << st.st_mode;
  // Root keeps the set-id bits it creates with; a chmod changes nothing, root's included.
  AppResult root = As(kRoot).Run("root modes", [&] {
    int fd = open("Download/r", O_CREAT | O_EXCL | O_WRONLY, 04755);
    if (fd < 0) return Fail(errno, "create");
    close(fd);
    if (chmod("Download/r", 0600) != 0) return Fail(errno, "chmod");
    return AppResult{};
  });
  ASSERT_TRUE(Succeeds(root));
  ASSERT_EQ(lstat(storage_.Lower("Download/r").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 04664u) << std::oct << st.st_mode;
}

// --- Findings 4, 6 and 7: location is the file's, whatever name, class, rule or writes ---------

// A JPEG named .txt is not media, so all-files access reads it; it still carries its GPS.
TEST_F(SecurityMountTest, PhotoUnderANonMediaNameStaysRedacted) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/trip.txt", gps_, kNotes));
  AppResult files = As(kFiles).Read("Download/trip.txt");
  ASSERT_TRUE(Succeeds(files));
  EXPECT_EQ(files.data.size(), gps_.size());
  EXPECT_FALSE(HasGps(files.data));
  AppResult owner = As(kNotes).Read("Download/trip.txt");
  ASSERT_TRUE(Succeeds(owner));
  EXPECT_EQ(owner.data, gps_);
}

// The unredaction attack: an app that may write but reads redacted breaks the Exif marker, reads
// the "clean" file raw and writes the bytes back. Every write path is refused.
TEST_F(SecurityMountTest, RedactedReaderCannotWriteToUnredact) {
  const std::string path = "DCIM/Camera/IMG_0001.jpg";
  EXPECT_TRUE(FailsWith(As(kFiles).Open(path, O_WRONLY), EACCES));
  EXPECT_TRUE(FailsWith(As(kFiles).Open(path, O_RDWR), EACCES));
  EXPECT_TRUE(FailsWith(As(kFiles).Open(path, O_WRONLY | O_TRUNC), EACCES));
  EXPECT_TRUE(FailsWith(As(kFiles).Truncate(path, 10), EACCES));
  // Variant: a clean photo cannot be written either (it could hold location tomorrow).
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/clean.jpg", clean_, kCamera));
  EXPECT_TRUE(FailsWith(As(kFiles).Open("DCIM/Camera/clean.jpg", O_WRONLY), EACCES));
  AppResult read = As(kFiles).Read(path);
  ASSERT_TRUE(Succeeds(read));
  EXPECT_FALSE(HasGps(read.data));
  absl::StatusOr<std::string> lower = storage_.ReadLower(path);
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(*lower, gps_);
  // The entitled and the owner still write.
  EXPECT_TRUE(Succeeds(As(kCamera).Open(path, O_RDWR)));
}

// Runs `holder` as `uid`: it opens `path` read-only and calls `before(fd)`; then the camera app
// (the owner) rewrites the file with `content` through the mount; then the holder calls
// `after(fd)` on the fd it kept. Returns the holder's exit code: 0, or the first non-zero value
// `before` or `after` returned (2: the open failed, 3: the handshake broke).
int HoldWhileOwnerRewrites(const ScopedStorage& storage, uid_t uid, const std::string& path,
                           const std::string& content, const std::function<int(int)>& before,
                           const std::function<int(int)>& after) {
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return -1;
  pid_t holder = StartAs(
      uid,
      [&] {
        close(ready[0]);
        close(go[1]);
        int fd = open(path.c_str(), O_RDONLY);
        if (fd < 0) return 2;
        if (int code = before(fd)) return code;
        char c = 1;
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) return 3;
        return after(fd);
      },
      storage.mountpoint());
  close(ready[1]);
  close(go[0]);
  char c = 1;
  bool handshake = read(ready[0], &c, 1) == 1;
  bool rewritten = handshake && storage.As(kCamera).Write(path, content).ok();
  EXPECT_TRUE(rewritten) << "the owner could not rewrite " << path;
  if (write(go[1], &c, 1) != 1) ADD_FAILURE() << "the holder went away";
  close(ready[0]);
  close(go[1]);
  return WaitChild(holder);
}

bool MappedHasGps(void* map, size_t size) {
  return map != MAP_FAILED && HasGps(std::string(static_cast<const char*>(map), size));
}

// An fd on a clean photo, held while the owner writes location into it, never shows it: not by
// pread, not by a shared mapping made before or after.
TEST_F(SecurityMountTest, HeldFdOnCleanPhotoNeverShowsLocationWrittenLater) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/late.jpg", clean_, kCamera));
  size_t size = gps_.size();
  void* early = MAP_FAILED;
  int code = HoldWhileOwnerRewrites(
      storage_, kSocial, "DCIM/Camera/late.jpg", gps_,
      [&](int fd) {
        ReadFd(fd);
        early = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
        return 0;
      },
      [&](int fd) {
        if (HasGps(ReadFd(fd))) return 10;
        struct stat st;
        if (fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= size &&
            MappedHasGps(early, size)) {
          return 11;
        }
        return MappedHasGps(mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0), size) ? 12 : 0;
      });
  EXPECT_EQ(code, 0)
      << "10: pread, 11: earlier shared mapping, 12: later shared mapping showed the new GPS";
}

// Variant: a file that is empty when opened (a photo still being written, no format yet) and
// held by an app with all-files access while its owner writes a geotagged JPEG into it.
TEST_F(SecurityMountTest, HeldFdOnEmptyFileNeverShowsLocationWrittenLater) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/pending.jpg", "", kCamera));
  int code = HoldWhileOwnerRewrites(
      storage_, kFiles, "Download/pending.jpg", gps_, [](int) { return 0; },
      [](int fd) {
        // The kernel caches a file's attributes for a second: past that, the new size shows.
        usleep(1200 * 1000);
        std::string after = ReadFd(fd);
        if (after.empty()) return 4;  // the rewrite must be visible, filled
        return HasGps(after) ? 10 : 0;
      });
  EXPECT_EQ(code, 0) << "10: the held fd showed the GPS written after its open";
}

// Variant of finding 4: a HEIF whose brands say mp42, named .mp4. Its content is an image, so
// it is no video for the video apps, and whoever may read it gets its Exif GPS filled.
TEST_F(SecurityMountTest, HeifBrandedAsMp4KeepsNoExifGps) {
  std::string heif = ReadFileOrDie("tests/media/gps.heic");
  ASSERT_TRUE(HasGps(heif));
  uint32_t ftyp_size = (static_cast<uint8_t>(heif[0]) << 24) |
                       (static_cast<uint8_t>(heif[1]) << 16) |
                       (static_cast<uint8_t>(heif[2]) << 8) | static_cast<uint8_t>(heif[3]);
  ASSERT_EQ(heif.substr(4, 4), "ftyp");
  for (size_t at = 8; at + 4 <= ftyp_size; at += 4) {
    if (at == 12) continue;  // minor version
    heif.replace(at, 4, at == 8 ? "mp42" : "isom");
  }
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/VID_9.mp4", heif, kCamera));
  for (uid_t uid : {kSocial, kFiles}) {
    AppResult r = As(uid).Read("DCIM/Camera/VID_9.mp4");
    if (!r.ok()) continue;  // not media to this app, or uncertain and refused: nothing leaked
    EXPECT_FALSE(HasGps(r.data)) << r.what;
  }
  AppResult files = As(kFiles).Read("DCIM/Camera/VID_9.mp4");
  ASSERT_TRUE(Succeeds(files)) << "all-files access reads it (redacted)";
  AppResult owner = As(kCamera).Read("DCIM/Camera/VID_9.mp4");
  ASSERT_TRUE(Succeeds(owner));
  EXPECT_EQ(owner.data, heif);
}

// --- Finding 5: a link under another class's name raises nobody's read -------------------------

TEST_F(SecurityMountTest, LinkOrRenameUnderAnotherClassRaisesNoThirdAppsRead) {
  std::string video = ReadFileOrDie("tests/media/loc.mov");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Movies/v.mov", video, kCamera));
  ASSERT_TRUE(FailsWith(As(kMusic).Read("Movies/v.mov"), ENOENT));
  // What the audio-only app gets under a name: never the video, raw or otherwise (its track
  // handlers say video, so an audio name makes it no media at all); the daemon may refuse the
  // link (EXDEV) or allow it, but never raise the audio app's read.
  auto expect_unreadable_by_music = [&](const std::string& name) {
    SCOPED_TRACE(name);
    AppResult music = As(kMusic).Read(name);
    EXPECT_FALSE(music.ok()) << "the audio app read the video";
  };
  // Under ANDROID semantics there are no links at all (as on a device).
  EXPECT_TRUE(FailsWith(As(kSocial).Link("Movies/v.mov", "Music/leak.m4a"), EPERM));
  expect_unreadable_by_music("Music/leak.m4a");
  // Variants: all-files access renames it under an audio name in another directory, under an
  // audio name beside itself, and moves a directory holding it under such a name. The daemon may
  // refuse a move (EXDEV) or allow it, but never raise the audio app's read.
  std::string at = "Movies/v.mov";
  for (const char* to : {"Music/leak2.m4a", "Movies/v.m4a"}) {
    if (As(kFiles).Rename(at, to).ok()) at = to;
    expect_unreadable_by_music(at);
  }
  ASSERT_TRUE(Succeeds(As(kFiles).Mkdir("Movies/trip")));
  if (As(kFiles).Rename(at, "Movies/trip/v.m4a").ok()) at = "Movies/trip/v.m4a";
  As(kFiles).Rename("Movies/trip", "Music/trip");
  expect_unreadable_by_music("Music/trip/v.m4a");
  expect_unreadable_by_music("Movies/trip/v.m4a");
  expect_unreadable_by_music(at);
}

// --- Writes into a photo by a reader owed redaction: fallocate and copy_file_range -------------

// An app without ACCESS_MEDIA_LOCATION holds a writable fd of another app's file of no known
// format (allowed: all-files access); the owner then makes it a photo with location, in place.
// `change` is the app's next change through that fd; it must fail EACCES (docs/security.md: no
// write, truncate, fallocate or copy_file_range into another app's photo), leaving the photo as
// the owner wrote it.
void ExpectChangeOfAPhotoRefused(ScopedStorage& storage, const std::function<int(int fd)>& change) {
  constexpr char kShared[] = "Download/shared.bin";
  SCOPEDFS_ASSERT_OK(storage.WriteLower(kShared, Pattern(4096, 7), kNotes));
  SCOPEDFS_ASSERT_OK(storage.WriteLower("Download/source.bin", Pattern(4096, 9), kFiles));
  ASSERT_TRUE(Succeeds(storage.As(kFiles).Read(kShared)));  // its facts: no carrier format yet
  int opened[2], rewritten[2];
  ASSERT_EQ(pipe(opened), 0);
  ASSERT_EQ(pipe(rewritten), 0);
  std::string lower = storage.Lower(kShared);
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  std::thread owner([&] {
    char c;
    if (read(opened[0], &c, 1) == 1) {
      int fd = open(lower.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      if (fd >= 0) {
        (void)!write(fd, photo.data(), photo.size());
        close(fd);
      }
    }
    (void)!write(rewritten[1], "g", 1);
  });
  AppResult r = storage.As(kFiles).Run("change after the owner's rewrite", [&] {
    AppResult out;
    int fd = open(kShared, O_RDWR | O_CLOEXEC);
    (void)!write(opened[1], "o", 1);
    char c;
    (void)!read(rewritten[0], &c, 1);
    if (fd < 0) {
      out.err = 1000 + errno;  // the open itself failed
      return out;
    }
    out.err = change(fd);
    close(fd);
    return out;
  });
  owner.join();
  for (int fd : {opened[0], opened[1], rewritten[0], rewritten[1]}) close(fd);
  EXPECT_TRUE(FailsWith(r, EACCES)) << r;
  absl::StatusOr<std::string> now = storage.ReadLower(kShared);
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_TRUE(*now == photo) << "the photo changed (" << now->size() << " bytes)";
}

TEST_F(SecurityMountTest, FallocateIntoAnotherAppsPhotoIsRefused) {
  ExpectChangeOfAPhotoRefused(storage_,
                              [](int fd) { return fallocate(fd, 0, 0, 1 << 20) == 0 ? 0 : errno; });
}

TEST_F(SecurityMountTest, CopyFileRangeIntoAnotherAppsPhotoIsRefused) {
  ExpectChangeOfAPhotoRefused(storage_, [](int fd) {
    int src = open("Download/source.bin", O_RDONLY | O_CLOEXEC);
    if (src < 0) return 2000 + errno;
    loff_t in = 0, out = 0;
    ssize_t n = copy_file_range(src, &in, fd, &out, 4096, 0);
    int err = n < 0 ? errno : (n == 0 ? ENODATA : 0);
    close(src);
    return err;
  });
}

// --- Finding 8: directories do not count what the caller cannot see ---------------------------

TEST_F(SecurityMountTest, DirectoryAttributesDoNotCountHiddenEntries) {
  AppResult data1 = As(kSocial).Run("stat", [&] {
    AppResult out;
    struct stat a, d;
    if (stat("Android/data", &a) != 0 || stat("Documents", &d) != 0) return Fail(errno, "stat");
    out.data = absl::StrCat(a.st_nlink, " ", d.st_nlink, " ", d.st_size, " ", d.st_mtim.tv_sec, ".",
                            d.st_mtim.tv_nsec, " ", d.st_ctim.tv_sec);
    return out;
  });
  ASSERT_TRUE(Succeeds(data1));
  // Another app's private directory and a hidden file appear; to this app nothing changed.
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.notes", kNotes));
  sleep(1);
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Documents/secret.txt", "x")));
  AppResult data2 = As(kSocial).Run("stat", [&] {
    AppResult out;
    struct stat a, d;
    if (stat("Android/data", &a) != 0 || stat("Documents", &d) != 0) return Fail(errno, "stat");
    out.value = a.st_nlink;
    out.data = absl::StrCat(a.st_nlink, " ", d.st_nlink, " ", d.st_size, " ", d.st_mtim.tv_sec, ".",
                            d.st_mtim.tv_nsec, " ", d.st_ctim.tv_sec);
    return out;
  });
  ASSERT_TRUE(Succeeds(data2));
  EXPECT_EQ(data1.data, data2.data);
  // The promised answers themselves, with a subdirectory now hidden in Android/data.
  EXPECT_EQ(data2.value, 1) << "Android/data's link count counts what the app cannot see";
  // The kernel keeps one attribute set per inode, which any caller reads with
  // AT_STATX_DONT_SYNC: root's stat gets what the app gets (the hidden subdirectory not counted,
  // size 4096), not the lower directory's, or an app would read root's answer from the cache.
  struct stat lower;
  ASSERT_EQ(stat(storage_.Lower("Android/data").c_str(), &lower), 0);
  ASSERT_GT(lower.st_nlink, 2u) << "the lower directory lost its subdirectory";
  AppResult root = As(kRoot).Run("stat", [&] {
    AppResult out;
    struct stat a;
    if (stat("Android/data", &a) != 0) return Fail(errno, "stat");
    out.data = absl::StrCat(a.st_nlink, " ", a.st_size, " ", a.st_mode, " ", a.st_uid);
    return out;
  });
  ASSERT_TRUE(Succeeds(root));
  EXPECT_EQ(root.data, absl::StrCat(1, " ", 4096, " ", lower.st_mode, " ", lower.st_uid))
      << "root's stat (nlink size mode uid) is not the one every caller gets";
  AppResult cached = As(kSocial).Run("statx DONT_SYNC", [&] {
    AppResult out;
    struct statx stx;
    if (statx(AT_FDCWD, "Android/data", AT_STATX_DONT_SYNC, STATX_NLINK | STATX_SIZE, &stx) != 0) {
      return Fail(errno, "statx");
    }
    out.data = absl::StrCat(stx.stx_nlink, " ", stx.stx_size);
    return out;
  });
  ASSERT_TRUE(Succeeds(cached));
  EXPECT_EQ(cached.data, "1 4096") << "the app read from the kernel's cache what root was told";
  // Creating the hidden name fails without EEXIST (the chosen answer: EACCES, as for any create
  // the policy refuses), and the hidden file is untouched.
  EXPECT_TRUE(FailsWith(As(kSocial).Create("Documents/secret.txt", "y"), EACCES));
  EXPECT_TRUE(FailsWith(As(kSocial).Mkdir("Documents/secret.txt"), EACCES));
  absl::StatusOr<std::string> secret = storage_.ReadLower("Documents/secret.txt");
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ(*secret, "x");
}

// --- Finding 10: no case-only twins of the names the policy matches on -------------------------

TEST_F(SecurityMountTest, CaseVariantsOfStandardDirectoriesAreRefused) {
  EXPECT_TRUE(FailsWith(As(kCamera).Mkdir("dcim"), EEXIST));
  EXPECT_TRUE(FailsWith(As(kCamera).Mkdir("ANDROID"), EEXIST));
  EXPECT_TRUE(FailsWith(As(kCamera).Mkdir("Android/DATA"), EEXIST));
  // Variant: a rename onto a case twin, and a twin of a package directory.
  ASSERT_TRUE(Succeeds(As(kSocial).Mkdir("Download/tmp")));
  AppResult r = As(kSocial).Rename("Download/tmp", "DOWNLOAD");
  EXPECT_FALSE(r.ok()) << r;
  EXPECT_FALSE(As(kSocial).Mkdir("Android/media/COM.EXAMPLE.SOCIAL").ok());
  EXPECT_FALSE(storage_.LowerExists("dcim"));
  EXPECT_FALSE(storage_.LowerExists("ANDROID"));
  EXPECT_FALSE(storage_.LowerExists("DOWNLOAD"));
  EXPECT_FALSE(storage_.LowerExists("Android/media/COM.EXAMPLE.SOCIAL"));
  // Names are case-insensitive, as on a device: "dcim" names DCIM itself
  // (android_names_mount_test has the rest).
  AppResult dcim = As(kSocial).Stat("dcim");
  ASSERT_TRUE(Succeeds(dcim));
  EXPECT_TRUE(S_ISDIR(dcim.mode));
}

// --- Finding 2: a hostile HEIF cannot take the daemon down -------------------------------------

void Be16(std::string* s, uint32_t v) {
  s->push_back(static_cast<char>(v >> 8));
  s->push_back(static_cast<char>(v));
}
void Be32(std::string* s, uint32_t v) {
  Be16(s, v >> 16);
  Be16(s, v & 0xffff);
}
std::string Box(const std::string& type, const std::string& body) {
  std::string out;
  Be32(&out, static_cast<uint32_t>(8 + body.size()));
  return out + type + body;
}
std::string FullBox(const std::string& type, uint8_t version, const std::string& body) {
  return Box(type, std::string(1, static_cast<char>(version)) + std::string(3, '\0') + body);
}

// 10,000 Exif items and 10,000 iloc entries, all with item id 1, each pointing at a small Exif
// payload in mdat: a parser that pairs every item with every entry does 10^8 units of work and
// memory.
std::string HostileHeif() {
  std::string infes;
  for (int i = 0; i < 10000; ++i) {
    std::string body;
    Be16(&body, 1);  // item_ID
    Be16(&body, 0);  // protection index
    body += "Exif";
    body.push_back('\0');
    infes += FullBox("infe", 2, body);
  }
  std::string iinf_body;
  Be16(&iinf_body, 10000);
  // Exif item: a 4-byte offset to the TIFF header, then a big-endian TIFF with an empty IFD0.
  const std::string payload("\0\0\0\0MM\0*\0\0\0\x08\0\0\0\0\0\0", 18);
  // Sizes are fixed, so the payload's file offset is known before the boxes are built.
  const size_t ftyp_size = 8 + 16;
  const size_t hdlr_size = 12 + 4 + 4 + 13;
  const size_t iinf_size = 12 + 2 + 10000 * (12 + 9);
  const size_t iloc_size = 12 + 4 + 10000 * 16;
  const uint32_t data_at =
      static_cast<uint32_t>(ftyp_size + 12 + hdlr_size + iinf_size + iloc_size + 8);
  std::string iloc_body;
  iloc_body.push_back(0x44);  // offset_size 4, length_size 4
  iloc_body.push_back(0x00);  // base_offset_size 0, index_size 0
  Be16(&iloc_body, 10000);
  for (int i = 0; i < 10000; ++i) {
    Be16(&iloc_body, 1);  // item_ID
    Be16(&iloc_body, 0);  // construction method 0
    Be16(&iloc_body, 0);  // data reference index
    Be16(&iloc_body, 1);  // extent count
    Be32(&iloc_body, data_at);
    Be32(&iloc_body, static_cast<uint32_t>(payload.size()));
  }
  std::string hdlr_body(4, '\0');
  hdlr_body += "pict";
  hdlr_body += std::string(13, '\0');
  std::string meta = FullBox("meta", 0,
                             FullBox("hdlr", 0, hdlr_body) + FullBox("iinf", 0, iinf_body + infes) +
                                 FullBox("iloc", 1, iloc_body));
  std::string ftyp_body = "heic";
  Be32(&ftyp_body, 0);
  ftyp_body += "mif1heic";
  std::string file = Box("ftyp", ftyp_body) + meta;
  EXPECT_EQ(file.size() + 8, data_at) << "payload offset computed wrong";
  return file + Box("mdat", payload);
}

constexpr uint64_t kHostileMemory = uint64_t{1} << 30;

// The daemon's peak resident memory (VmHWM), in bytes; -1 if it cannot be read.
int64_t PeakRss(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "VmHWM:")) continue;
    std::string digits;
    for (char c : line) {
      if (c >= '0' && c <= '9') digits.push_back(c);
    }
    int64_t kb;
    return absl::SimpleAtoi(digits, &kb) ? kb * 1024 : -1;
  }
  return -1;
}

// The daemon runs under a 1 GiB address-space limit. Sanitizer builds reserve terabytes of shadow
// memory, which no such limit admits: they run without it, and in every build the daemon's peak
// resident memory is held to the same 1 GiB.
class HostileMediaMountTest : public SecurityMountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    o.address_space_limit = kHostileMemory;
#endif
    return o;
  }
};

TEST_F(HostileMediaMountTest, ProductOfItemsAndExtentsDoesNotStopTheDaemon) {
  std::string evil = HostileHeif();
  ASSERT_LT(evil.size(), 512u * 1024);
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/evil.heic", evil, kNotes));
  // A reader who would be redacted makes the daemon scan it. The file is past the scan's bounds,
  // so uncertain: its stat is unchanged and the open refused EACCES (docs/security.md). Meanwhile
  // another app's requests keep being answered.
  pid_t scanner = StartAs(
      kFiles,
      [] {
        struct stat st;
        if (stat("Download/evil.heic", &st) != 0) return 1;
        int fd = open("Download/evil.heic", O_RDONLY);
        if (fd >= 0) {
          close(fd);
          return 2;
        }
        return errno == EACCES ? 0 : 3;
      },
      storage_.mountpoint());
  for (int i = 0; i < 20; ++i) {
    AppResult r = As(kCamera).Read("DCIM/Camera/IMG_0001.jpg");
    ASSERT_TRUE(Succeeds(r)) << "request " << i << " while the hostile file was scanned";
    ASSERT_EQ(r.data, gps_);
  }
  EXPECT_EQ(WaitChild(scanner), 0) << "1: stat failed, 2: the uncertain file opened, 3: another "
                                      "errno than EACCES";
  ASSERT_TRUE(storage_.daemon_running());
  AppResult stat = As(kFiles).Stat("Download/evil.heic");
  ASSERT_TRUE(Succeeds(stat));
  EXPECT_EQ(stat.value, static_cast<int64_t>(evil.size()));
  EXPECT_TRUE(FailsWith(As(kFiles).Read("Download/evil.heic"), EACCES));
  // The owner reads it raw: nothing about it was lost.
  AppResult own = As(kNotes).Read("Download/evil.heic");
  ASSERT_TRUE(Succeeds(own));
  EXPECT_TRUE(own.data == evil) << "the owner's bytes changed";
  EXPECT_TRUE(Succeeds(As(kCamera).Stat("DCIM/Camera/IMG_0001.jpg")));
  int64_t peak = PeakRss(storage_.daemon_pid());
  ASSERT_GT(peak, 0);
  EXPECT_LT(static_cast<uint64_t>(peak), kHostileMemory) << "peak RSS " << peak;
}

}  // namespace
}  // namespace scopedfs::tests
