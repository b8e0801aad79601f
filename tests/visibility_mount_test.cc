// The two visibility choices side by side (policy.proto Visibility): each test runs the same
// actions, as real app uids, once under android.textproto (LISTING, as MediaProvider answers) and
// once under android-strict.textproto (STRICT: the same rules, hidden names absent to every
// request). Another app's Download file is found by a stat but left out of listings and refused
// at open under LISTING, absent under STRICT; package-private names are absent under both; ls -l
// shows the lower tree's owners and modes, and no directory attribute counts hidden names; names
// a LOOKUP finds for everyone are cached by the kernel under LISTING, views that differ by caller
// never. Needs root and /dev/fuse; skips, saying so, without them.
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kListingPolicy[] = "policy/configs/android.textproto";
constexpr char kStrictPolicy[] = "policy/configs/android-strict.textproto";

// Another app's document, and notes' private file.
constexpr char kDoc[] = "Download/notes.pdf";
constexpr char kPrivateDir[] = "Android/data/com.example.notes";
constexpr char kPrivateFile[] = "Android/data/com.example.notes/files/x.txt";

// What ls -l shows of a name, as one app's stat saw it.
struct Seen {
  int err = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  nlink_t nlink = 0;
  off_t size = 0;
  time_t mtime = 0;
};

class VisibilityMountTest : public MountTest, public testing::WithParamInterface<bool> {
 protected:
  bool listing() const { return GetParam(); }
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = listing() ? kListingPolicy : kStrictPolicy;
    o.control_socket = true;
    return o;
  }
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kDoc, PdfBytes(), kNotes));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kPrivateFile, "private", kNotes));
  }

  Seen StatAs(uid_t uid, const std::string& path) {
    AppResult r = As(uid).Run(absl::StrCat("stat ", path), [path] {
      AppResult out;
      struct stat st;
      if (stat(path.c_str(), &st) != 0) {
        out.err = errno;
        return out;
      }
      out.data = absl::StrCat(st.st_uid, " ", st.st_gid, " ", st.st_mode, " ", st.st_nlink, " ",
                              st.st_size, " ", st.st_mtim.tv_sec);
      return out;
    });
    Seen seen;
    seen.err = r.err;
    if (r.err != 0) return seen;
    unsigned long long v[6];
    EXPECT_EQ(sscanf(r.data.c_str(), "%llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                     &v[4], &v[5]),
              6)
        << r.data;
    seen.uid = v[0];
    seen.gid = v[1];
    seen.mode = v[2];
    seen.nlink = v[3];
    seen.size = static_cast<off_t>(v[4]);
    seen.mtime = static_cast<time_t>(v[5]);
    return seen;
  }
  // One counter of the daemon's stats; -1, with a test failure, when it cannot be read.
  int64_t StatOf(const std::string& counter) {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (!stats.ok()) return -1;
    auto it = stats->find(counter);
    EXPECT_NE(it, stats->end()) << counter;
    return it == stats->end() ? -1 : it->second;
  }
  // The first `size` bytes of `path` as `uid` maps them (MAP_SHARED, read-only).
  AppResult MapAs(uid_t uid, const std::string& path, size_t size) {
    return As(uid).Run(absl::StrCat("mmap ", path), [path, size] {
      AppResult out;
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        out.err = errno;
        return out;
      }
      void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        out.err = errno;
      } else {
        out.data.assign(static_cast<const char*>(p), size);
        munmap(p, size);
      }
      close(fd);
      return out;
    });
  }
  struct stat LowerStat(const std::string& rel) {
    struct stat st = {};
    EXPECT_EQ(lstat(storage_.Lower(rel).c_str(), &st), 0) << rel;
    return st;
  }
};

INSTANTIATE_TEST_SUITE_P(Visibility, VisibilityMountTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Listing" : "Strict";
                         });

TEST_P(VisibilityMountTest, AnotherAppsDocumentIsFoundOnlyUnderListing) {
  Seen seen = StatAs(kCamera, kDoc);
  if (listing()) {
    ASSERT_EQ(seen.err, 0) << ErrnoName(seen.err);
    EXPECT_EQ(seen.size, static_cast<off_t>(PdfBytes().size()));
    EXPECT_TRUE(S_ISREG(seen.mode));
  } else {
    EXPECT_EQ(seen.err, ENOENT) << ErrnoName(seen.err);
  }
  // Under either, a name that does not exist is ENOENT, as is everything in another user's view.
  EXPECT_TRUE(FailsWith(As(kCamera).Stat("Download/nothing.pdf"), ENOENT));
  EXPECT_TRUE(FailsWith(As(10 * 100000 + kNotes).Stat(kDoc), ENOENT));
}

TEST_P(VisibilityMountTest, ListingsLeaveItOutUnderBoth) {
  AppResult camera = As(kCamera).List("Download");
  ASSERT_TRUE(Succeeds(camera));
  EXPECT_FALSE(Contains(camera.names, "notes.pdf"));
  // Also after a stat found it (under LISTING): a listing is judged, not served from the name.
  (void)StatAs(kCamera, kDoc);
  camera = As(kCamera).List("Download");
  ASSERT_TRUE(Succeeds(camera));
  EXPECT_FALSE(Contains(camera.names, "notes.pdf"));
  AppResult owner = As(kNotes).List("Download");
  ASSERT_TRUE(Succeeds(owner));
  EXPECT_TRUE(Contains(owner.names, "notes.pdf"));
}

TEST_P(VisibilityMountTest, OpensAndChangesAreRefused) {
  int hidden = listing() ? EACCES : ENOENT;
  EXPECT_TRUE(FailsWith(As(kCamera).Read(kDoc), hidden));
  EXPECT_TRUE(FailsWith(As(kCamera).Open(kDoc, O_WRONLY), hidden));
  EXPECT_TRUE(FailsWith(As(kCamera).Unlink(kDoc), hidden));
  EXPECT_TRUE(FailsWith(As(kCamera).Truncate(kDoc, 0), hidden));
  EXPECT_TRUE(FailsWith(As(kCamera).Chmod(kDoc, 0600), hidden));
  EXPECT_TRUE(FailsWith(As(kCamera).Rename(kDoc, "Download/mine.pdf"), hidden));
  absl::StatusOr<std::string> bytes = storage_.ReadLower(kDoc);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(SameBytes(*bytes, PdfBytes()));
  EXPECT_TRUE(Succeeds(As(kNotes).Read(kDoc)));
}

// A device answers EEXIST (the name is found); STRICT answers EACCES, as for any create the app
// may not make, since the name cannot be given away and "exists" would contradict ENOENT.
TEST_P(VisibilityMountTest, CreateOverAHiddenName) {
  int create_over = listing() ? EEXIST : EACCES;
  EXPECT_TRUE(FailsWith(As(kCamera).Create(kDoc, "mine"), create_over));
  EXPECT_TRUE(FailsWith(As(kCamera).Mkdir(kDoc), create_over));
  // O_CREAT without O_EXCL opens what is there: refused.
  EXPECT_TRUE(FailsWith(As(kCamera).Open(kDoc, O_WRONLY | O_CREAT), EACCES));
  // Moving its own file over it: refused without touching it.
  ASSERT_TRUE(Succeeds(As(kCamera).Create("Download/mine.pdf", "mine")));
  EXPECT_TRUE(FailsWith(As(kCamera).Rename("Download/mine.pdf", kDoc), EACCES));
  absl::StatusOr<std::string> bytes = storage_.ReadLower(kDoc);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(SameBytes(*bytes, PdfBytes()));
  EXPECT_EQ(storage_.LowerOwner(kDoc), absl::StrCat(kNotes));
}

TEST_P(VisibilityMountTest, PackagePrivateNamesStayAbsentForOtherApps) {
  for (const char* path : {kPrivateDir, kPrivateFile, "Android/obb/com.example.notes"}) {
    if (std::string(path).find("obb") != std::string::npos) {
      SCOPEDFS_ASSERT_OK(storage_.MkdirLower(path, kNotes));
    }
    EXPECT_TRUE(FailsWith(As(kCamera).Stat(path), ENOENT)) << path;
    EXPECT_TRUE(FailsWith(As(kFiles).Stat(path), ENOENT)) << path << ", all-files access";
  }
  EXPECT_TRUE(FailsWith(As(kCamera).Create(absl::StrCat(kPrivateDir, "/planted"), "x"), ENOENT));
  AppResult data = As(kCamera).List("Android/data");
  ASSERT_TRUE(Succeeds(data));
  EXPECT_FALSE(Contains(data.names, "com.example.notes"));
  EXPECT_TRUE(Succeeds(As(kNotes).Stat(kPrivateFile)));
  // Every walk into it asks, also the owner's: another app's next walk must be judged.
  EXPECT_GE(LookupsForThreeStats(kNotes, kPrivateFile), 3);
}

// ls -l: the lower tree's owner, group and mode (as vold sets them: media_rw, set-gid
// directories), for files under both; for directories, no attribute counts hidden names.
TEST_P(VisibilityMountTest, LsShowsTheLowerOwnersAndNoHiddenCounts) {
  constexpr uid_t kMediaRw = 1023;
  ASSERT_EQ(chown(storage_.Lower(kDoc).c_str(), kMediaRw, kMediaRw), 0);
  ASSERT_EQ(chmod(storage_.Lower(kDoc).c_str(), 0660), 0);
  ASSERT_EQ(chown(storage_.Lower("Download").c_str(), kMediaRw, kMediaRw), 0);
  ASSERT_EQ(chmod(storage_.Lower("Download").c_str(), 02770), 0);
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/trip", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/work", kNotes));
  struct stat lower_doc = LowerStat(kDoc);
  Seen doc = StatAs(kNotes, kDoc);
  ASSERT_EQ(doc.err, 0);
  EXPECT_EQ(doc.uid, kMediaRw);
  EXPECT_EQ(doc.gid, kMediaRw);
  EXPECT_EQ(doc.mode, lower_doc.st_mode);
  EXPECT_EQ(doc.nlink, lower_doc.st_nlink);

  Seen dir = StatAs(kCamera, "Download");
  ASSERT_EQ(dir.err, 0);
  struct stat lower_dir = LowerStat("Download");
  EXPECT_EQ(dir.uid, kMediaRw);
  EXPECT_EQ(dir.gid, kMediaRw);
  EXPECT_EQ(dir.mode, lower_dir.st_mode) << "set-gid kept";
  EXPECT_EQ(dir.size, 4096) << "the lower size counts every name (tmpfs: 20 bytes each)";
  if (listing()) {
    // Every subdirectory of Download is shown to every app: its link count hides nothing.
    EXPECT_EQ(dir.nlink, lower_dir.st_nlink);
    EXPECT_EQ(dir.nlink, 4u);
    EXPECT_EQ(dir.mtime, lower_dir.st_mtim.tv_sec);
  } else {
    EXPECT_EQ(dir.nlink, 1u);
  }
  // Android/data holds a directory per package: its link count would count them.
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.music", kMusic));
  EXPECT_EQ(StatAs(kCamera, "Android/data").nlink, 1u);

  // Hidden names, many of them, change neither the size nor the link count apps see; under
  // STRICT not the times either.
  for (int i = 0; i < 40; ++i) {
    SCOPEDFS_ASSERT_OK(
        storage_.WriteLower(absl::StrCat("Download/hidden", i, ".pdf"), "x", kNotes));
  }
  Seen after = StatAs(kCamera, "Download");
  ASSERT_EQ(after.err, 0);
  EXPECT_EQ(after.size, dir.size);
  EXPECT_EQ(after.nlink, dir.nlink);
  if (!listing()) {
    EXPECT_EQ(after.mtime, dir.mtime);
  }
}

// Names a LOOKUP finds for every caller are cached under LISTING (a second stat, and another
// app's, cost no LOOKUP); under STRICT every walk asks. A photo's view differs by caller (the
// redacted view is an inode of its own): the name is asked again at every walk of an app that
// reads it redacted, under both; its owner's (the raw view) is cached under LISTING.
TEST_P(VisibilityMountTest, NamesFoundByEveryoneAreCachedRedactedViewsAreNot) {
  int64_t first = LookupsForThreeStats(kNotes, kDoc);
  if (listing()) {
    EXPECT_LE(first, 2) << "three walks of a 2-name path asked once per name at most";
    EXPECT_EQ(LookupsForThreeStats(kCamera, kDoc), 0)
        << "another app, which may not open it, walks the cached names";
  } else {
    EXPECT_GE(first, 3);
  }
  // With GPS: the social app reads it redacted.
  SCOPEDFS_ASSERT_OK(
      storage_.WriteLower("Pictures/photo.jpg", ReadFileOrDie("tests/media/gps.jpg"), kCamera));
  EXPECT_GE(LookupsForThreeStats(kSocial, "Pictures/photo.jpg"), 3);
  int64_t owner = LookupsForThreeStats(kCamera, "Pictures/photo.jpg");
  if (listing()) {
    // The first walk finds the social app's redacted name and swaps it: two LOOKUPs.
    EXPECT_LE(owner, 2) << "the owner's raw view is cached";
  } else {
    EXPECT_GE(owner, 3);
  }
}

// Files whose view may differ by caller: of unknown content (source, text, binary, an empty
// file being written) and a photo with GPS, all the owner's. Under LISTING the name published
// with the owner's raw view is cached, so the owner's second walk of them asks no LOOKUP below
// the top level (before: one per file); under STRICT each walk asks.
TEST_P(VisibilityMountTest, TheOwnersSecondWalkAsksNoLookup) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"Download/src/main.c", "int main(void) { return 0; }\n"},
      {"Download/src/README", "plain text\n"},
      {"Download/src/blob.bin", Pattern(4096, 7)},
      {"Download/src/empty", ""},
      {"Pictures/mine.jpg", ReadFileOrDie("tests/media/gps.jpg")},
  };
  std::vector<std::string> paths;
  for (const auto& [path, content] : files) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(path, content, kNotes));
    paths.push_back(path);
  }
  auto walk = [&] {
    AppResult r = As(kNotes).Run("stat every file", [paths] {
      AppResult out;
      for (const std::string& path : paths) {
        struct stat st;
        if (stat(path.c_str(), &st) != 0 && out.err == 0) out.err = errno;
      }
      return out;
    });
    EXPECT_TRUE(Succeeds(r));
  };
  walk();
  int64_t before = Lookups();
  walk();
  int64_t second = Lookups() - before;
  // Each walk asks for its top-level name, which is never cached while another user's apps may
  // reach the mount (kernel_cache_mount_test); the names below it are what this test is about.
  int64_t walks = static_cast<int64_t>(paths.size());
  if (listing()) {
    EXPECT_EQ(second, walks) << "the owner's second walk asked again below the top level";
  } else {
    EXPECT_GE(second, 2 * walks);
  }
}

// A name cached with the owner's raw view never serves it to an app owed location-filled bytes.
// The social app (READ_MEDIA_IMAGES, no ACCESS_MEDIA_LOCATION) opening the camera's photo by path
// meets the raw inode under LISTING: DoOpen refuses it ESTALE (a denied OPEN in the stats), the
// kernel walks again asking, and the app gets its own redacted view, by read and by mmap, with no
// error. The owner, once the social app's redacted name is in the kernel, opens the photo O_RDWR
// by path and gets its raw view with passthrough: the redacted name was never cached.
TEST_P(VisibilityMountTest, ACachedRawViewSendsARedactedReaderToItsOwnView) {
  const std::string path = "Pictures/trip.jpg";
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  const std::string kSecret = "37,46.494N";  // the XMP latitude gps.jpg carries
  ASSERT_NE(photo.find(kSecret), std::string::npos);
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(path, photo, kCamera));
  ASSERT_TRUE(Succeeds(As(kCamera).Stat(path)));
  int64_t owner = LookupsForThreeStats(kCamera, path);
  if (listing()) {
    EXPECT_EQ(owner, 0) << "the owner's raw view was not cached";
  } else {
    EXPECT_GE(owner, 3);
  }

  int64_t denied = StatOf("open_denied");
  AppResult filled = As(kSocial).Read(path);
  ASSERT_TRUE(Succeeds(filled));
  EXPECT_EQ(filled.data.size(), photo.size());
  EXPECT_FALSE(filled.data == photo) << "read served the raw bytes";
  EXPECT_EQ(filled.data.find(kSecret), std::string::npos) << "read served the raw view";
  if (listing()) {
    EXPECT_GE(StatOf("open_denied") - denied, 1) << "the read never met the cached raw inode";
  }
  // The owner's walk caches its raw view again; the social app's mapping is filled too.
  ASSERT_TRUE(Succeeds(As(kCamera).Stat(path)));
  AppResult mapped = MapAs(kSocial, path, photo.size());
  ASSERT_TRUE(Succeeds(mapped));
  EXPECT_EQ(mapped.data, filled.data) << "mmap served other bytes than read";

  // The kernel now holds the social app's redacted name.
  int64_t passthrough = StatOf("open_passthrough");
  int64_t mediated = StatOf("open_mediated");
  AppResult own = As(kCamera).Run("open O_RDWR and read", [path] {
    AppResult out;
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      out.err = errno;
      return out;
    }
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) out.data.append(buf, static_cast<size_t>(n));
    if (n < 0) out.err = errno;
    close(fd);
    return out;
  });
  ASSERT_TRUE(Succeeds(own));
  EXPECT_TRUE(SameBytes(own.data, photo));
  EXPECT_EQ(StatOf("open_passthrough") - passthrough, 1);
  EXPECT_EQ(StatOf("open_mediated") - mediated, 0);
  // That walk swapped the name back to the raw view, which is cached again.
  int64_t again = LookupsForThreeStats(kCamera, path);
  if (listing()) {
    EXPECT_EQ(again, 0);
  } else {
    EXPECT_GE(again, 3);
  }
}

// Files of unknown content, cached with their owner's raw view, that the owner rewrites through
// the cached name as a photo with GPS: an empty photo being written (read by the social app, which
// holds READ_MEDIA_IMAGES but not ACCESS_MEDIA_LOCATION) and a text file (a name no image
// permission reaches: read by the all-files app, which lacks ACCESS_MEDIA_LOCATION too). Each
// reader gets the photo GPS-filled, by read and by mmap; the owner reads it raw.
TEST_P(VisibilityMountTest, ACachedFileOfUnknownContentRewrittenAsAPhotoIsReadRedacted) {
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  const std::string kSecret = "37,46.494N";  // the XMP latitude gps.jpg carries
  ASSERT_NE(photo.find(kSecret), std::string::npos);
  for (const auto& [path, reader] : std::vector<std::pair<std::string, uid_t>>{
           {"Pictures/draft.jpg", kSocial}, {"Download/plan.txt", kFiles}}) {
    SCOPEDFS_ASSERT_OK(
        storage_.WriteLower(path, path == "Download/plan.txt" ? "plain text\n" : "", kCamera));
    ASSERT_TRUE(Succeeds(As(kCamera).Stat(path)));
    int64_t owner = LookupsForThreeStats(kCamera, path);
    if (listing()) {
      EXPECT_EQ(owner, 0) << path << ": the owner's raw view was not cached";
    } else {
      EXPECT_GE(owner, 3) << path;
    }
    ASSERT_TRUE(Succeeds(As(kCamera).Write(path, photo)));
    AppResult filled = As(reader).Read(path);
    ASSERT_TRUE(Succeeds(filled));
    EXPECT_EQ(filled.data.size(), photo.size()) << path;
    EXPECT_EQ(filled.data.find(kSecret), std::string::npos) << path << ": read served the raw view";
    ASSERT_TRUE(Succeeds(As(kCamera).Stat(path)));
    AppResult mapped = MapAs(reader, path, photo.size());
    ASSERT_TRUE(Succeeds(mapped));
    EXPECT_EQ(mapped.data, filled.data) << path << ": mmap served other bytes than read";
    AppResult own = As(kCamera).Read(path);
    ASSERT_TRUE(Succeeds(own));
    EXPECT_TRUE(SameBytes(own.data, photo)) << path;
  }
}

// A file of no location-carrying format is cached under LISTING with the raw view's inode; once
// its owner rewrites it as a photo with GPS, an app owed location-filled bytes (all-files access,
// no ACCESS_MEDIA_LOCATION) that walks the cached name must still get them, by read and by mmap:
// its open of the raw inode fails ESTALE, and the kernel's second walk asks again.
TEST_P(VisibilityMountTest, ACachedNameNeverServesTheRawViewToARedactedReader) {
  const std::string path = "Download/trip.dat";
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(path, PdfBytes(), kNotes));
  AppResult before = As(kFiles).Read(path);
  ASSERT_TRUE(Succeeds(before));
  EXPECT_TRUE(SameBytes(before.data, PdfBytes()));
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  const std::string kSecret = "37,46.494N";  // the XMP latitude gps.jpg carries
  ASSERT_NE(photo.find(kSecret), std::string::npos);
  ASSERT_TRUE(Succeeds(As(kNotes).Write(path, photo)));
  AppResult filled = As(kFiles).Read(path);
  ASSERT_TRUE(Succeeds(filled));
  EXPECT_EQ(filled.data.size(), photo.size());
  EXPECT_EQ(filled.data.find(kSecret), std::string::npos) << "read served the raw view";
  AppResult mapped = As(kFiles).Run("mmap", [&] {
    AppResult out;
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) {
      out.err = errno;
      return out;
    }
    void* p = mmap(nullptr, photo.size(), PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      out.err = errno;
    } else {
      out.data.assign(static_cast<const char*>(p), photo.size());
      munmap(p, photo.size());
    }
    close(fd);
    return out;
  });
  ASSERT_TRUE(Succeeds(mapped));
  EXPECT_EQ(mapped.data.find(kSecret), std::string::npos) << "mmap served the raw view";
  // The owner reads its photo raw.
  AppResult own = As(kNotes).Read(path);
  ASSERT_TRUE(Succeeds(own));
  EXPECT_TRUE(SameBytes(own.data, photo));
}

// Two apps of different views alternating on one file, concurrently: the owner (raw view) and
// the social app (redacted view) each walk to it and read it 300 times. Every read of the owner's
// is raw and every read of the social app's is filled, and neither ever sees an error: each swap
// of the kernel's name costs requests, never an ESTALE, as every open follows a walk.
TEST_P(VisibilityMountTest, TwoAppsAlternatingEachReadTheirOwnViewWithoutError) {
  const std::string path = "Pictures/trip.jpg";
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(path, photo, kCamera));
  AppResult filled = As(kSocial).Read(path);
  ASSERT_TRUE(Succeeds(filled));
  ASSERT_FALSE(filled.data == photo);
  // Exit code: 0, or 100 + errno of the first failure, or 1 for a read of the other view's bytes.
  auto reader = [&](const std::string& expected) {
    return [&path, expected] {
      for (int i = 0; i < 300; ++i) {
        struct stat st;
        if (stat(path.c_str(), &st) != 0) return 100 + errno;
        int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 100 + errno;
        std::string got(expected.size() + 1, '\0');
        ssize_t n = pread(fd, got.data(), got.size(), 0);
        int err = errno;
        close(fd);
        if (n < 0) return 100 + err;
        got.resize(static_cast<size_t>(n));
        if (got != expected) return 1;
      }
      return 0;
    };
  };
  pid_t owner = StartAs(kCamera, reader(photo), storage_.mountpoint());
  pid_t social = StartAs(kSocial, reader(filled.data), storage_.mountpoint());
  int owner_exit = WaitChild(owner);
  int social_exit = WaitChild(social);
  EXPECT_EQ(owner_exit, 0) << (owner_exit > 100 ? ErrnoName(owner_exit - 100) : "");
  EXPECT_EQ(social_exit, 0) << (social_exit > 100 ? ErrnoName(social_exit - 100) : "");
}

// What an app can see of the cached raw name (docs/visibility.md): an O_PATH descriptor the social
// app takes through the owner's cached raw name holds the raw inode, and its reopen through
// /proc/self/fd fails ESTALE, as no walk precedes that open; an open by path then succeeds. Under
// STRICT nothing is cached: the descriptor holds the app's own view and reopens.
TEST_P(VisibilityMountTest, AReopenOfAnOPathDescriptorOfTheCachedRawViewFailsESTALE) {
  const std::string path = "Pictures/trip.jpg";
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(path, photo, kCamera));
  ASSERT_TRUE(Succeeds(As(kCamera).Stat(path)));
  AppResult reopened = As(kSocial).Run("reopen an O_PATH fd", [path] {
    AppResult out;
    int opath = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (opath < 0) {
      out.err = errno;
      return out;
    }
    int fd = open(absl::StrCat("/proc/self/fd/", opath).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      out.err = errno;
    } else {
      close(fd);
    }
    close(opath);
    return out;
  });
  if (listing()) {
    EXPECT_TRUE(FailsWith(reopened, ESTALE));
  } else {
    EXPECT_TRUE(Succeeds(reopened));
  }
  EXPECT_TRUE(Succeeds(As(kSocial).Read(path)));
}

// A name cached under LISTING is still refused to an app of another user, at its GETATTR.
TEST_P(VisibilityMountTest, CachedNamesAreRefusedToOtherUsers) {
  ASSERT_EQ(StatAs(kNotes, kDoc).err, 0);
  EXPECT_TRUE(FailsWith(As(10 * 100000 + kFiles).Stat(kDoc), ENOENT));
  EXPECT_TRUE(FailsWith(As(10 * 100000 + kFiles).Read(kDoc), ENOENT));
}

// A symlink's target is what it holds: readlink is judged as a read of the link, whoever walked
// to it. Another app finds notes' link in Download under LISTING (a stat does) but may not read
// it; the link in notes' private area is absent; an app of another user walking a name the
// owner's walk left cached is refused too; the owner reads both. Symlinks are not made under
// ANDROID semantics, but a lower tree may hold them.
TEST_P(VisibilityMountTest, ReadlinkIsJudgedAsAReadOfTheLink) {
  const std::string shared_link = "Download/notes-link";
  const std::string private_link = absl::StrCat(kPrivateDir, "/files/link");
  const std::string kTarget = "secret-target-of-notes";
  for (const std::string& link : {shared_link, private_link}) {
    SCOPEDFS_ASSERT_OK(storage_.SymlinkLower(kTarget, link));
    const std::string owner = absl::StrCat(kNotes);
    ASSERT_EQ(lsetxattr(storage_.Lower(link).c_str(), "trusted.scopedfs.owner", owner.data(),
                        owner.size(), 0),
              0)
        << link << ": " << ErrnoName(errno);
  }
  for (const std::string& link : {shared_link, private_link}) {
    AppResult own = As(kNotes).Readlink(link);
    ASSERT_TRUE(Succeeds(own)) << link;
    EXPECT_EQ(own.data, kTarget);
  }
  // Under LISTING an lstat finds the shared link, and the readlink then reaches the daemon
  // without a LOOKUP that could refuse it (stat follows the link: that is a readlink too).
  AppResult found = As(kCamera).Run("lstat", [&] {
    AppResult out;
    struct stat st;
    if (lstat(shared_link.c_str(), &st) != 0) out.err = errno;
    return out;
  });
  EXPECT_EQ(found.err, listing() ? 0 : ENOENT) << ErrnoName(found.err);
  AppResult camera = As(kCamera).Readlink(shared_link);
  EXPECT_TRUE(FailsWith(camera, listing() ? EACCES : ENOENT)) << camera.data;
  EXPECT_TRUE(FailsWith(As(kCamera).Readlink(private_link), ENOENT));
  // The owner's walk leaves the shared name cached under LISTING; another user's app walks it.
  ASSERT_TRUE(Succeeds(As(kNotes).Readlink(shared_link)));
  AppResult other_user = As(10 * 100000 + kFiles).Readlink(shared_link);
  EXPECT_TRUE(FailsWith(other_user, ENOENT)) << other_user.data;
  // A node held without a name walked by the caller: an O_PATH fd of each link, opened by root
  // (which may) and used by the camera app, as an fd passed between processes is.
  for (const std::string& link : {shared_link, private_link}) {
    AppResult held = As(kRoot).Run(absl::StrCat("readlinkat of a passed fd ", link), [&] {
      AppResult out;
      int fd = open(link.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || setgroups(0, nullptr) != 0 || setresgid(kCamera, kCamera, kCamera) != 0 ||
          setresuid(kCamera, kCamera, kCamera) != 0) {
        out.err = EPERM;  // the setup failed: not an answer of the daemon's
        out.data = absl::StrCat("setup: ", strerror(errno));
        return out;
      }
      char buf[PATH_MAX];
      ssize_t n = readlinkat(fd, "", buf, sizeof(buf));
      if (n < 0) {
        out.err = errno;
      } else {
        out.data.assign(buf, static_cast<size_t>(n));
      }
      close(fd);
      return out;
    });
    int want = listing() && link == shared_link ? EACCES : ENOENT;
    EXPECT_TRUE(FailsWith(held, want)) << link << ": " << held.data;
  }
  if (listing()) {
    // The refusal is audited as the read it is.
    bool audited = false;
    for (absl::string_view line : absl::StrSplit(storage_.DaemonLog(), '\n')) {
      audited = audited || (absl::StartsWith(line, "scopedfs: denied { read } uid=10065 ") &&
                            absl::StrContains(line, "path=\"Download/notes-link\""));
    }
    EXPECT_TRUE(audited) << storage_.DaemonLog();
  }
}

// The kernel may hold names cached under LISTING: a reload to the other visibility is refused,
// and the policy in force stays.
TEST_P(VisibilityMountTest, AReloadToTheOtherVisibilityIsRefused) {
  std::string other = listing() ? kStrictPolicy : kListingPolicy;
  std::string command =
      absl::StrCat("tools/scopedfsctl --socket=", storage_.control_socket(),
                   " reload --policy=", other, " --apps=policy/configs/apps.textproto 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) output.append(buf, n);
  int status = pclose(pipe);
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(output.find("remount to change it"), std::string::npos) << output;
  Seen seen = StatAs(kCamera, kDoc);
  EXPECT_EQ(seen.err, listing() ? 0 : ENOENT) << ErrnoName(seen.err);
}

}  // namespace
}  // namespace scopedfs::tests
