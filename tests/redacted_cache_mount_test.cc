// The redacted view's name and attributes in the kernel's caches, under android.textproto's
// LISTING visibility, as real app uids, each test with --mount_reached_by_one_user and without
// it (the default). With it the redacted view's name and attributes are cached as the raw view's
// are (docs/visibility.md): an app owed the redacted view (com.example.social, no
// ACCESS_MEDIA_LOCATION) walking a camera folder a second time asks only the opens, while every
// app still reads its own view, by read and by mmap, also with the owner and the social app
// walking to the same photo at once; a redacted open reads to the size the file has now. Without
// it every walk of a redacted reader asks. exiftool is the oracle for what the social app reads.
// Needs root and /dev/fuse; skips, saying so, without them.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kPhoto[] = "Pictures/photo.jpg";       // camera's photo with GPS
constexpr char kGpsLocation[] = "37.7749 -122.4194";  // what exiftool reads in tests/media/gps.jpg

class RedactedCacheMountTest : public OneUserParamMountTest {
 protected:
  void SetUp() override {
    OneUserParamMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kPhoto, ReadFileOrDie("tests/media/gps.jpg"), kCamera));
  }
  // Requests three stats of `path` by `uid`, in one process, cost the daemon.
  int64_t AskedForThreeStats(uid_t uid, const std::string& path) {
    int64_t before = Asked();
    AppResult r = As(uid).StatRepeatedly(path, 3);
    EXPECT_TRUE(Succeeds(r));
    return Asked() - before;
  }
  // What exiftool finds as GPS in `bytes` ("" for none).
  std::string GpsIn(const std::string& bytes) {
    return GpsExiftoolFinds(bytes, absl::StrCat(storage_.work_dir(), "/copy", ++copies_, ".jpg"));
  }
  int copies_ = 0;
};

INSTANTIATE_TEST_SUITE_P(RedactedCache, RedactedCacheMountTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "OneUser" : "Default";
                         });

// A photo's view differs by app (a redacted inode for apps without location access). By
// default each walk of an app that reads it redacted asks its name, and each fstat of a redacted
// open its attributes. With the option the redacted view's name and attributes are cached as the
// raw view's are: the social app's later walks, its open and its fstats ask nothing. The owner,
// walking through the name the social app left, is sent back by OPEN's ESTALE to its own view and
// reads the raw bytes; the social app, walking through the owner's name then, still reads them
// redacted (exiftool finds no GPS in what it read).
TEST_P(RedactedCacheMountTest, RedactedViewsNamesAreCachedOnlyOnAOneUserMount) {
  const std::string raw = ReadFileOrDie(storage_.Lower(kPhoto));
  ASSERT_EQ(GpsIn(raw), kGpsLocation) << "the sample has no GPS";
  // The first read records the photo's facts on it, which moves its ctime (the open after asks
  // for the attributes again), and marks its atime stale in the kernel (the stat after asks).
  ASSERT_TRUE(Succeeds(As(kSocial).Read(kPhoto)));
  ASSERT_TRUE(Succeeds(As(kSocial).Stat(kPhoto)));
  int64_t asked = AskedForThreeStats(kSocial, kPhoto);
  if (cached()) {
    EXPECT_EQ(asked, 0) << "the redacted view's name or attributes were not cached";
  } else {
    EXPECT_GE(asked, 3) << "the redacted view's name was cached";
  }
  int64_t before = Asked(), getattrs = Served("getattr");
  AppResult social = As(kSocial).Run("open, fstat thrice, read", [] {
    AppResult out;
    int fd = open(kPhoto, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      out.err = errno;
      return out;
    }
    struct stat st;
    for (int i = 0; i < 3; ++i) {
      if (fstat(fd, &st) != 0) out.err = errno;
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) out.data.append(buf, static_cast<size_t>(n));
    if (n < 0) out.err = errno;
    close(fd);
    return out;
  });
  ASSERT_TRUE(Succeeds(social));
  if (cached()) {
    EXPECT_EQ(Asked() - before, 0)
        << "the redacted open's walk or fstat asked: " << Served("getattr") - getattrs
        << " GETATTRs";
  } else {
    EXPECT_GE(Served("getattr") - getattrs, 2) << "the redacted view's attributes were cached";
  }
  EXPECT_EQ(social.data.size(), raw.size());
  EXPECT_EQ(GpsIn(social.data), "") << "the social app read GPS";
  // The owner, then the social app again, through whatever name the other left.
  AppResult owner = As(kCamera).Read(kPhoto);
  ASSERT_TRUE(Succeeds(owner));
  EXPECT_TRUE(owner.data == raw) << "the owner did not read the raw bytes";
  AppResult again = As(kSocial).Read(kPhoto);
  ASSERT_TRUE(Succeeds(again));
  EXPECT_TRUE(again.data == social.data) << "the social app's second read differs";
  EXPECT_EQ(GpsIn(again.data), "") << "the social app read GPS after the owner's walk";
}

// The gallery workload's redacted app (tools/bench/metaops gallery): the social app lists a
// camera folder, stats each photo and reads its first 64 KiB, twice. Its second walk costs one
// OPEN per photo (and the close's FLUSH and RELEASE) and nothing else with the option: no
// LOOKUP, no GETATTR of a photo, and no READ, as the redacted pages kept from the first walk serve
// it (keep_cache while the file's version holds); by default a LOOKUP per photo at least. Every
// read is filled, with or without GPS in the photo.
TEST_P(RedactedCacheMountTest, AGalleryWalksSecondPassAsksOnlyTheOpens) {
  constexpr int kPhotos = 6;
  const std::string gps = ReadFileOrDie("tests/media/gps.jpg");
  for (int i = 0; i < kPhotos; ++i) {
    std::string name = absl::StrCat("DCIM/Camera/IMG_", i, ".jpg");
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(
        name, i % 2 == 0 ? gps : ReadFileOrDie("tests/media/clean.jpg"), kCamera));
  }
  auto walk = [] {
    AppResult out;
    DIR* d = opendir("DCIM/Camera");
    if (d == nullptr) {
      out.err = errno;
      return out;
    }
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      struct stat st;
      int fd = -1;
      char buf[65536];
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
          (fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC)) < 0 ||
          read(fd, buf, sizeof(buf)) <= 0) {
        out.err = errno;
      }
      if (fd >= 0) close(fd);
      ++out.value;
    }
    closedir(d);
    return out;
  };
  AppResult first = As(kSocial).Run("gallery walk", walk);
  ASSERT_TRUE(Succeeds(first));
  ASSERT_EQ(first.value, kPhotos);
  int64_t lookups = Served("lookup"), getattrs = Served("getattr"), reads = Served("read"),
          opens = Served("open");
  AppResult second = As(kSocial).Run("gallery walk", walk);
  ASSERT_TRUE(Succeeds(second));
  EXPECT_EQ(Served("open") - opens, kPhotos);
  EXPECT_EQ(Served("read") - reads, 0) << "the redacted pages were not kept across opens";
  if (cached()) {
    EXPECT_EQ(Served("lookup") - lookups, 0);
    // At most one, not the photos': the listing's directory may be asked once.
    EXPECT_LE(Served("getattr") - getattrs, 1);
  } else {
    EXPECT_GE(Served("lookup") - lookups, kPhotos);
  }
  for (int i = 0; i < kPhotos; i += 2) {
    AppResult r = As(kSocial).Read(absl::StrCat("DCIM/Camera/IMG_", i, ".jpg"));
    ASSERT_TRUE(Succeeds(r));
    EXPECT_EQ(GpsIn(r.data), "") << "IMG_" << i << ".jpg";
  }
}

// A listing's entries lead each app to its own view. After the social app (owed the redacted
// view) lists a camera folder, its opens of the photos ask no LOOKUP on the one-user mount: the
// listing's entries brought the redacted inodes (an entry of the raw view would send the open
// back with ESTALE, to be asked again), and what it reads has no GPS. By default the names are
// not cached, and every open walks to the photo again.
TEST_P(RedactedCacheMountTest, AListingsEntriesLeadToTheCallersOwnView) {
  // Half with GPS, half without: both are the redacted view for the social app (GPS written to
  // a clean photo later must never reach it through a raw inode).
  constexpr int kPhotos = 6;
  std::string gps = ReadFileOrDie("tests/media/gps.jpg");
  std::string clean = ReadFileOrDie("tests/media/clean.jpg");
  std::vector<std::string> paths;
  std::vector<std::string> contents;
  for (int i = 0; i < kPhotos; ++i) {
    paths.push_back(absl::StrCat("DCIM/Camera/IMG_", i, ".jpg"));
    contents.push_back(i % 2 == 0 ? gps : clean);
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(paths.back(), contents.back(), kCamera));
  }
  AppResult listed = As(kSocial).List("DCIM/Camera");
  ASSERT_TRUE(Succeeds(listed));
  ASSERT_EQ(listed.names.size(), static_cast<size_t>(kPhotos)) << listed;
  int64_t lookups = Served("lookup"), opens = Served("open");
  AppResult read = As(kSocial).Run("read every photo", [paths] {
    AppResult out;
    for (const std::string& path : paths) {
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        out.err = errno;
        return out;
      }
      char buf[1 << 16];
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.data.append(buf, static_cast<size_t>(n));
      close(fd);
      if (n < 0) {
        out.err = errno;
        return out;
      }
      ++out.value;
    }
    return out;
  });
  ASSERT_TRUE(Succeeds(read));
  ASSERT_EQ(read.value, kPhotos);
  size_t at = 0;
  for (int i = 0; i < kPhotos; ++i) {
    ASSERT_LE(at + contents[i].size(), read.data.size());
    EXPECT_EQ(GpsIn(read.data.substr(at, contents[i].size())), "") << paths[i];
    at += contents[i].size();
  }
  EXPECT_EQ(at, read.data.size());
  // An entry that led to another view costs its open an ESTALE and another OPEN.
  EXPECT_EQ(Served("open") - opens, kPhotos) << "an entry led an open to another view";
  if (cached()) {
    EXPECT_EQ(Served("lookup") - lookups, 0) << "an entry led an open to another view";
  } else {
    EXPECT_GE(Served("lookup") - lookups, kPhotos);
  }
}

// Over io_uring a redacted READ's bytes are read straight into the payload buffer of the ring
// entry the READ came in (redacted_reads_in_ring), over /dev/fuse into the daemon's own buffer;
// either way exiftool finds no GPS in what the social app read, and the gallery (location access)
// reads it raw.
TEST_P(RedactedCacheMountTest, RedactedReadsOverIoUringAreReadIntoTheRing) {
  absl::StatusOr<DaemonStats> before = storage_.Stats();
  ASSERT_TRUE(before.ok()) << before.status();
  AppResult r = As(kSocial).Read(kPhoto);
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(GpsIn(r.data), "");
  absl::StatusOr<DaemonStats> after = storage_.Stats();
  ASSERT_TRUE(after.ok()) << after.status();
  int64_t reads = (*after)["redacted_reads"] - (*before)["redacted_reads"];
  EXPECT_GT(reads, 0);
  EXPECT_EQ((*after)["redacted_reads_in_ring"] - (*before)["redacted_reads_in_ring"],
            (*after)["uring_serving"] == 1 ? reads : 0)
      << "uring_serving " << (*after)["uring_serving"];
  AppResult raw = As(kGallery).Read(kPhoto);
  ASSERT_TRUE(Succeeds(raw));
  EXPECT_EQ(GpsIn(raw.data), kGpsLocation);
}

// A change the kernel applies to the raw inode only (here one made to the lower file behind the
// daemon's back, as a passthrough write is) leaves the redacted inode's cached attributes behind:
// the redacted reader's next open drops them, so it reads the file to its new end.
TEST_P(RedactedCacheMountTest, ARedactedOpenReadsToTheSizeTheFileHasNow) {
  ASSERT_TRUE(Succeeds(As(kSocial).Read(kPhoto)));
  ASSERT_TRUE(Succeeds(As(kSocial).Stat(kPhoto)));
  int fd = open(storage_.Lower(kPhoto).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::string tail(8192, 'z');
  ssize_t wrote = write(fd, tail.data(), tail.size());
  close(fd);
  ASSERT_EQ(wrote, static_cast<ssize_t>(tail.size()));
  const std::string raw = ReadFileOrDie(storage_.Lower(kPhoto));
  AppResult social = As(kSocial).Read(kPhoto);
  ASSERT_TRUE(Succeeds(social));
  EXPECT_EQ(social.data.size(), raw.size()) << "read to a stale size";
  EXPECT_EQ(GpsIn(social.data), "") << "the social app read GPS";
}

// The owner and the social app each stat, open, read and map the photo 200 times at once, so each
// keeps meeting the inode the other's walk left in the kernel's name: every read and every
// mapping of the owner's is raw, every one of the social app's the same filled bytes (no GPS for
// exiftool), and no call fails.
TEST_P(RedactedCacheMountTest, TheOwnerAndARedactedReaderAlternatingEachGetTheirOwnView) {
  const std::string raw = ReadFileOrDie(storage_.Lower(kPhoto));
  AppResult filled = As(kSocial).Read(kPhoto);
  ASSERT_TRUE(Succeeds(filled));
  ASSERT_FALSE(filled.data == raw);
  EXPECT_EQ(GpsIn(filled.data), "") << "the social app read GPS";
  // Exit code: 0, 100 + errno of the first failure, 1 for a read or 2 for a mapping of the other
  // view's bytes.
  auto reader = [](const std::string& expected) {
    return [expected] {
      for (int i = 0; i < 200; ++i) {
        struct stat st;
        if (stat(kPhoto, &st) != 0) return 100 + errno;
        int fd = open(kPhoto, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 100 + errno;
        std::string got(expected.size() + 1, '\0');
        ssize_t n = pread(fd, got.data(), got.size(), 0);
        int err = errno;
        void* map = mmap(nullptr, expected.size(), PROT_READ, MAP_SHARED, fd, 0);
        int map_err = errno;
        close(fd);
        if (n < 0) return 100 + err;
        if (map == MAP_FAILED) return 100 + map_err;
        bool mapped_right = std::string(static_cast<const char*>(map), expected.size()) == expected;
        munmap(map, expected.size());
        got.resize(static_cast<size_t>(n));
        if (got != expected) return 1;
        if (!mapped_right) return 2;
      }
      return 0;
    };
  };
  pid_t owner = StartAs(kCamera, reader(raw), storage_.mountpoint());
  pid_t social = StartAs(kSocial, reader(filled.data), storage_.mountpoint());
  int owner_exit = WaitChild(owner);
  int social_exit = WaitChild(social);
  EXPECT_EQ(owner_exit, 0) << (owner_exit > 100 ? ErrnoName(owner_exit - 100) : "");
  EXPECT_EQ(social_exit, 0) << (social_exit > 100 ? ErrnoName(social_exit - 100) : "");
}

}  // namespace
}  // namespace scopedfs::tests
