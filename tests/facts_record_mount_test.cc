// Content facts kept on the lower tree (trusted.scopedfs.facts): a walk after a restart reads no
// file the daemon has read before, and a file whose content changed behind a restored mtime is
// read again and redacted as it now is. The counts are the daemon's (scopedfsctl stats); the
// location oracle is exiftool on the bytes each app read. Runs on the ext4 lower too.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

using ::testing::HasSubstr;

constexpr char kGpsLocation[] = "37.7749 -122.4194";  // what exiftool reads in tests/media/gps.jpg
constexpr char kTarget[] = "DCIM/Camera/IMG_target.jpg";
constexpr char kTargetByMount[] = "DCIM/Camera/IMG_target2.jpg";
constexpr char kHostile[] = "Pictures/Trip/IMG_hostile.jpg";

// A photo without location of exactly `size` bytes: clean.jpg with a comment segment after its
// start of image, so that a photo with GPS of that size can replace it without a change of size.
std::string CleanPhotoOfSize(const std::string& clean, size_t size) {
  size_t pad = size - clean.size();  // the COM segment: marker, length, payload
  size_t len = pad - 2;
  std::string out = clean.substr(0, 2);
  out += "\xff\xfe";
  out += static_cast<char>(len >> 8);
  out += static_cast<char>(len & 0xff);
  out += std::string(len - 2, 'c');
  out += clean.substr(2);
  return out;
}

// A walk as `ls -lR` and a gallery's thumbnails do: every entry stat'ed, the first bytes of
// every other file read. value: the files seen.
AppResult Walk(const App& app) {
  return app.Run("walk", [] {
    AppResult r;
    std::vector<std::string> dirs = {"."};
    int files = 0;
    while (!dirs.empty()) {
      std::string dir = dirs.back();
      dirs.pop_back();
      DIR* d = opendir(dir.c_str());
      if (d == nullptr) continue;
      while (struct dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string path = dir + "/" + name;
        struct stat st;
        if (lstat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
          dirs.push_back(path);
        } else if (S_ISREG(st.st_mode) && files++ % 2 == 0) {
          int fd = open(path.c_str(), O_RDONLY);
          char head[64];
          if (fd >= 0 && read(fd, head, sizeof(head)) < 0) r.err = errno;
          if (fd >= 0) close(fd);
        }
      }
      closedir(d);
    }
    r.value = files;
    return r;
  });
}

class FactsRecordMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(storage_.Prepare());
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
    gps_ = ReadFileOrDie("tests/media/gps.jpg");
    clean_ = CleanPhotoOfSize(ReadFileOrDie("tests/media/clean.jpg"), gps_.size());
    ASSERT_EQ(clean_.size(), gps_.size());
    ASSERT_EQ(Location(clean_), "") << "the padded clean photo has no location";
    const char* kSamples[] = {"gps.jpg", "gps.png", "gps.webp",  "gps.heic",
                              "loc.mp4", "loc.mov", "clean.jpg", "clean.mp4"};
    for (const char* sample : kSamples) {
      std::string bytes = ReadFileOrDie(absl::StrCat("tests/media/", sample));
      SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("DCIM/Camera/", sample), bytes, kCamera));
      SCOPEDFS_ASSERT_OK(
          storage_.WriteLower(absl::StrCat("Pictures/Trip/copy_", sample), bytes, kCamera));
      files_ += 2;
    }
    for (const char* path : {kTarget, kTargetByMount, kHostile}) {
      SCOPEDFS_ASSERT_OK(storage_.WriteLower(path, path == kHostile ? gps_ : clean_, kCamera));
      ++files_;
    }
    WaitUntilRecordable(kHostile);  // the last file written
    SCOPEDFS_ASSERT_OK(Start());
  }

  // A version younger than 20 ms is recorded at a later lookup, not at the first
  // (kRecordQuietAge, daemon/judge/facts_record.h): waits until `rel`'s ctime is that old.
  void WaitUntilRecordable(const char* rel) {
    struct stat st;
    ASSERT_EQ(stat(storage_.Lower(rel).c_str(), &st), 0);
    absl::Time recordable = absl::TimeFromTimespec(st.st_ctim) + absl::Milliseconds(20);
    absl::SleepFor(std::max(absl::ZeroDuration(), recordable - absl::Now()));
  }

  void TearDown() override {
    if (storage_.daemon_started()) {
      DaemonExit e = storage_.StopDaemon();
      EXPECT_TRUE(e.clean()) << e.ToString();
    }
    if (HasFailure()) std::cerr << "daemon log:\n" << storage_.DaemonLog();
  }

  absl::Status Start() {
    DaemonOptions o;
    o.control_socket = true;
    return storage_.StartDaemon(o);
  }
  void Restart() {
    DaemonExit e = storage_.StopDaemon();
    ASSERT_TRUE(e.clean()) << e.ToString();
    SCOPEDFS_ASSERT_OK(Start());
  }
  int64_t Counter(const std::string& name) {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (!stats.ok()) return -1;
    auto it = stats->find(name);
    return it == stats->end() ? 0 : it->second;
  }
  // What exiftool finds as GPS in `bytes` ("" for none).
  std::string Location(const std::string& bytes) {
    return GpsExiftoolFinds(bytes, absl::StrCat(::testing::TempDir(), "/copy", ++copies_, ".jpg"));
  }
  // The first walk, which reads every file and records what it learned.
  void FirstWalk() {
    AppResult walk = Walk(storage_.As(kSocial));
    ASSERT_TRUE(Succeeds(walk));
    ASSERT_EQ(walk.value, files_);
    EXPECT_GT(Counter("content_reads"), 0);
    // Records are written on the daemon's record writer, each once its version is 20 ms old.
    absl::StatusOr<DaemonStats> written = storage_.StatsOnceZero("facts_records_waiting");
    ASSERT_TRUE(written.ok()) << written.status();
    EXPECT_GE(Counter("facts_records_written"), files_);
    printf("[ figures ] the first walk read content %lld times and wrote %lld records\n",
           static_cast<long long>(Counter("content_reads")),
           static_cast<long long>(Counter("facts_records_written")));
  }
  // Overwrites `rel` on the lower tree with `bytes` (same size) and puts its times back.
  void ChangeBehindRestoredMtime(const std::string& rel, const std::string& bytes) {
    std::string path = storage_.Lower(rel);
    struct stat before;
    ASSERT_EQ(stat(path.c_str(), &before), 0);
    int fd = open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(futimens(fd, times), 0);
    close(fd);
    struct stat after;
    ASSERT_EQ(stat(path.c_str(), &after), 0);
    ASSERT_EQ(after.st_size, before.st_size);
    ASSERT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  }

  ScopedStorage storage_;
  std::string gps_;
  std::string clean_;
  int files_ = 0;
  int copies_ = 0;
};

// The walk: the second walk, by a new daemon, reads no file's content; every file's facts
// come from its record.
TEST_F(FactsRecordMountTest, AWalkAfterARestartReadsNoContent) {
  FirstWalk();
  Restart();
  AppResult walk = Walk(storage_.As(kSocial));
  ASSERT_TRUE(Succeeds(walk));
  EXPECT_EQ(walk.value, files_);
  EXPECT_EQ(Counter("content_reads"), 0);
  EXPECT_GE(Counter("facts_from_records"), files_);
  EXPECT_EQ(Counter("facts_records_rejected"), 0);
  EXPECT_EQ(Counter("location_scans"), 0);
  printf(
      "[ figures ] %s lower, %d files: the walk after the restart read %lld files' content, "
      "took %lld files' facts from records\n",
      LowerKindName(DefaultLowerKind()).c_str(), files_,
      static_cast<long long>(Counter("content_reads")),
      static_cast<long long>(Counter("facts_from_records")));
  // Facts from records judge as scanned facts do: the photo with GPS is redacted for social.
  AppResult social = storage_.As(kSocial).Read("DCIM/Camera/gps.jpg");
  ASSERT_TRUE(Succeeds(social));
  EXPECT_EQ(Location(social.data), "");
  AppResult gallery = storage_.As(kGallery).Read("DCIM/Camera/gps.jpg");
  ASSERT_TRUE(Succeeds(gallery));
  EXPECT_EQ(Location(gallery.data), kGpsLocation);
  EXPECT_EQ(Counter("content_reads"), 0);
}

// A photo recorded as without location gets GPS written into it on the lower tree while the
// daemon is down, and its mtime put back: the ctime gives it away, the file is read again, and
// social (no ACCESS_MEDIA_LOCATION) gets no GPS.
TEST_F(FactsRecordMountTest, AChangeBehindARestoredMtimeIsReadAgain) {
  FirstWalk();
  AppResult before = storage_.As(kSocial).Read(kTarget);
  ASSERT_TRUE(Succeeds(before));
  ASSERT_EQ(before.data, clean_) << "no location: social reads the photo as it is";
  DaemonExit e = storage_.StopDaemon();
  ASSERT_TRUE(e.clean()) << e.ToString();
  ChangeBehindRestoredMtime(kTarget, gps_);
  SCOPEDFS_ASSERT_OK(Start());
  AppResult walk = Walk(storage_.As(kSocial));
  ASSERT_TRUE(Succeeds(walk));
  AppResult social = storage_.As(kSocial).Read(kTarget);
  ASSERT_TRUE(Succeeds(social));
  EXPECT_EQ(social.data.size(), gps_.size());
  EXPECT_EQ(Location(social.data), "") << "social reads the new photo's GPS";
  AppResult gallery = storage_.As(kGallery).Read(kTarget);
  ASSERT_TRUE(Succeeds(gallery));
  EXPECT_EQ(Location(gallery.data), kGpsLocation);
  EXPECT_GE(Counter("facts_records_stale"), 1);
  EXPECT_GE(Counter("content_reads"), 1);
  // Only the changed photo was read: every other file's facts came from its record.
  EXPECT_LE(Counter("content_reads"), 2) << "a stat may sniff the head, the read scans it";
  EXPECT_GE(Counter("facts_from_records"), files_ - 1);
}

// Photos read at once after they were written: the lookup's sniff of the head and the open's scan
// each queue a record of the same version, both due at its quiet age (20 ms). The head's is
// written first and moves the ctime; the scan's record must still be written (at the version the
// first left), or the next daemon reads each photo again to scan it. The stop writes what still
// waits.
TEST_F(FactsRecordMountTest, APhotoReadAsSoonAsWrittenIsRecordedWithItsScan) {
  std::vector<std::string> fresh;
  for (int i = 0; i < 8; ++i) {
    fresh.push_back(absl::StrCat("DCIM/Camera/IMG_fresh", i, ".jpg"));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(fresh.back(), gps_, kCamera));
  }
  // At once after the writes: the versions are younger than their quiet age.
  AppResult heads = storage_.As(kSocial).Run("read the new photos", [&] {
    AppResult r;
    for (const std::string& path : fresh) {
      int fd = open(path.c_str(), O_RDONLY);
      char head[64];
      if (fd < 0 || read(fd, head, sizeof(head)) < 0) r.err = errno;
      if (fd >= 0) close(fd);
    }
    return r;
  });
  ASSERT_TRUE(Succeeds(heads));
  DaemonExit e = storage_.StopDaemon();
  ASSERT_TRUE(e.clean()) << e.ToString();
  for (const std::string& path : fresh) {
    char value[1100];
    EXPECT_GT(
        getxattr(storage_.Lower(path).c_str(), "trusted.scopedfs.facts", value, sizeof(value)), 4)
        << path << ": no record: " << strerror(errno);
  }
  SCOPEDFS_ASSERT_OK(Start());
  AppResult again = storage_.As(kSocial).Read(fresh.back());
  ASSERT_TRUE(Succeeds(again));
  EXPECT_EQ(Location(again.data), "");
  EXPECT_EQ(Counter("content_reads"), 0) << "the record holds no scan: the photo was read again";
  EXPECT_GE(Counter("facts_from_records"), 1);
}

// The same change made by the photo's owner through the mount (a write, then futimens with the
// old times at once), with the daemon running: no record of the old content survives to the next
// daemon (the SETATTR drops it, and its ctime is past the record's bound).
TEST_F(FactsRecordMountTest, AChangeThroughTheMountBehindARestoredMtimeIsReadAgain) {
  FirstWalk();
  struct stat old;
  ASSERT_EQ(stat(storage_.Lower(kTargetByMount).c_str(), &old), 0);
  App camera = storage_.As(kCamera);
  AppResult changed = camera.Run("write GPS, put the times back", [&] {
    AppResult r;
    int fd = open(kTargetByMount, O_WRONLY);
    if (fd < 0) return r.err = errno, r;
    if (pwrite(fd, gps_.data(), gps_.size(), 0) != static_cast<ssize_t>(gps_.size())) r.err = EIO;
    // At once, on the open file: no lookup in between learns the new bytes first.
    struct timespec times[2] = {old.st_atim, old.st_mtim};
    if (r.err == 0 && futimens(fd, times) != 0) r.err = errno;
    close(fd);
    return r;
  });
  ASSERT_TRUE(Succeeds(changed));
  struct stat now;
  ASSERT_EQ(stat(storage_.Lower(kTargetByMount).c_str(), &now), 0);
  ASSERT_EQ(now.st_mtim.tv_nsec, old.st_mtim.tv_nsec);
  ASSERT_EQ(now.st_mtim.tv_sec, old.st_mtim.tv_sec);
  Restart();
  AppResult social = storage_.As(kSocial).Read(kTargetByMount);
  ASSERT_TRUE(Succeeds(social));
  EXPECT_EQ(Location(social.data), "") << "social reads the new photo's GPS";
  EXPECT_GE(Counter("content_reads"), 1);
}

// A file the daemon makes carries no record, so its writer's close and a SETATTR of its times
// (tar sets them on every file) remove none; once a record is written on it, a SETATTR through
// the mount removes it. The counts are the daemon's (facts_records_dropped); the record is read
// on the lower tree.
TEST_F(FactsRecordMountTest, AFileMadeThroughTheMountHasARecordToDropOnlyOnceOneIsWritten) {
  constexpr char kMade[] = "DCIM/Camera/IMG_made.jpg";
  App camera = storage_.As(kCamera);
  auto set_times = [&](const char* what) {
    return camera.Run(what, [&] {
      AppResult r;
      struct timespec times[2] = {{1, 0}, {1700000000, 0}};
      if (utimensat(AT_FDCWD, kMade, times, 0) != 0) r.err = errno;
      return r;
    });
  };
  ASSERT_TRUE(Succeeds(camera.Run("create, write and close", [&] {
    AppResult r;
    int fd = open(kMade, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) return r.err = errno, r;
    if (write(fd, clean_.data(), clean_.size()) != static_cast<ssize_t>(clean_.size())) r.err = EIO;
    close(fd);
    return r;
  })));
  ASSERT_TRUE(Succeeds(set_times("set the times of the new file")));
  // The writer's close queued the head's record, written once the version is kRecordQuietAge old
  // (record_writer.h): on a slow machine before the SETATTR, which then removes it; otherwise
  // after, when the version has moved and nothing is written.
  int64_t written = Counter("facts_records_written");
  EXPECT_EQ(Counter("facts_records_dropped"), written)
      << "a record removed that was never written, or one written and not removed";
  WaitUntilRecordable(kMade);
  AppResult social = storage_.As(kSocial).Read(kMade);
  ASSERT_TRUE(Succeeds(social));
  absl::StatusOr<DaemonStats> recorded = storage_.StatsOnce(
      [written](const DaemonStats& s) {
        auto it = s.find("facts_records_written");
        return it != s.end() && it->second > written;
      },
      "facts_records_written");
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  char value[1100];
  std::string lower = storage_.Lower(kMade);
  ASSERT_GT(getxattr(lower.c_str(), "trusted.scopedfs.facts", value, sizeof(value)), 4)
      << "the read recorded the file's facts: " << strerror(errno);
  ASSERT_TRUE(Succeeds(set_times("set the times of the recorded file")));
  EXPECT_EQ(getxattr(lower.c_str(), "trusted.scopedfs.facts", value, sizeof(value)), -1)
      << "the record outlived a SETATTR of the times";
  EXPECT_EQ(errno, ENODATA);
  EXPECT_EQ(Counter("facts_records_dropped"), written + 1);
}

// Hostile bytes written as a record by root on the lower tree: rejected, counted, logged, and
// the file read and redacted as without a record; the daemon records it anew.
TEST_F(FactsRecordMountTest, AMalformedRecordIsRejectedCountedAndLogged) {
  FirstWalk();
  DaemonExit e = storage_.StopDaemon();
  ASSERT_TRUE(e.clean()) << e.ToString();
  const std::string hostile = "SFF1" + std::string(60, '\xff');
  ASSERT_EQ(setxattr(storage_.Lower(kHostile).c_str(), "trusted.scopedfs.facts", hostile.data(),
                     hostile.size(), 0),
            0)
      << strerror(errno);
  WaitUntilRecordable(kHostile);
  SCOPEDFS_ASSERT_OK(Start());
  AppResult social = storage_.As(kSocial).Read(kHostile);
  ASSERT_TRUE(Succeeds(social));
  EXPECT_EQ(Location(social.data), "");
  // Each read of it until the daemon's own record replaces it (written after a reply, so the
  // OPEN that follows the LOOKUP may read it again) is one rejection.
  EXPECT_GE(Counter("facts_records_rejected"), 1);
  EXPECT_LE(Counter("facts_records_rejected"), 3);
  EXPECT_GE(Counter("content_reads"), 1);
  EXPECT_THAT(storage_.DaemonLog(), HasSubstr("ignoring the facts record"));
  char value[1100];
  ssize_t n =
      getxattr(storage_.Lower(kHostile).c_str(), "trusted.scopedfs.facts", value, sizeof(value));
  ASSERT_GT(n, 4);
  EXPECT_NE(std::string(value, n), hostile) << "recorded anew after the read";
}

// An app, and root, through the mount, can neither write nor read a record: Android semantics
// serve no xattr at all (the kernel answers EOPNOTSUPP for the mount).
TEST_F(FactsRecordMountTest, NoCallerSetsARecordThroughTheMount) {
  FirstWalk();
  for (uid_t uid : {kCamera, kRoot}) {
    AppResult set = storage_.As(uid).SetXattr(kTarget, "trusted.scopedfs.facts", "SFF1forged");
    EXPECT_FALSE(set.ok()) << set;
    EXPECT_FALSE(storage_.As(uid).GetXattr(kTarget, "trusted.scopedfs.facts").ok());
  }
  char value[1100];
  ssize_t n =
      getxattr(storage_.Lower(kTarget).c_str(), "trusted.scopedfs.facts", value, sizeof(value));
  ASSERT_GT(n, 4);
  EXPECT_FALSE(absl::StrContains(std::string(value, n), "forged"));
}

}  // namespace
}  // namespace scopedfs::tests
