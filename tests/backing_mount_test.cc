// Passthrough backing ids as the daemon's counters (scopedfsctl stats --json) show them: all
// opens of a file share one, it stays registered, idle, after the last close so that the next
// open registers nothing, it serves a writer although a reader registered it, and a file unlinked
// or renamed over through the mount keeps none (its space is freed as natively), nor does one the
// kernel forgot.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kFile[] = "Download/backed.txt";  // notes' own file
constexpr int kCycles = 100;

class BackingMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.control_socket = true;
    options.passthrough = true;
    return options;
  }

  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kFile, "backed", kNotes));
    if (Stats()["passthrough_enabled"] != 1) GTEST_SKIP() << "the kernel refused passthrough";
  }

  DaemonStats Stats() {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : DaemonStats{};
  }

  // RELEASE reaches the daemon after close() returns: waits (bounded) until `done` holds of the
  // counters, and returns the last ones seen.
  DaemonStats StatsWhen(const std::function<bool(DaemonStats&)>& done) {
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    DaemonStats stats = Stats();
    while (!done(stats) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));
      stats = Stats();
    }
    return stats;
  }

  // Opens `path` and reads a byte, kCycles times in one process of `uid`.
  AppResult OpenReadCloseCycles(uid_t uid, const std::string& path) {
    return As(uid).Run(absl::StrCat(kCycles, " open/read/close of ", path), [&] {
      AppResult r;
      for (int i = 0; i < kCycles && r.err == 0; ++i) {
        int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        char c;
        if (fd < 0 || read(fd, &c, 1) != 1) r.err = errno;
        if (fd >= 0 && close(fd) != 0) r.err = errno;
      }
      return r;
    });
  }

  // A root open of the file through the mount, held by the test until it goes.
  struct HeldOpen {
    explicit HeldOpen(const std::string& path) : fd(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
    ~HeldOpen() {
      if (fd >= 0) close(fd);
    }
    int fd;
  };
  std::string Mounted(absl::string_view rel) const {
    return absl::StrCat(storage_.mountpoint(), "/", rel);
  }
};

TEST_F(BackingMountTest, OpensOfAFileShareOneIdKeptForTheNextOpen) {
  DaemonStats before = Stats();
  {
    HeldOpen held(Mounted(kFile));
    ASSERT_GE(held.fd, 0) << strerror(errno);
    // Another app's opens while root's is held: all on root's backing id.
    ASSERT_TRUE(Succeeds(OpenReadCloseCycles(kNotes, kFile)));
    DaemonStats during = Stats();
    EXPECT_EQ(during["backing_registrations"] - before["backing_registrations"], 1);
    EXPECT_EQ(during["backing_files"] - before["backing_files"], 1);
    EXPECT_EQ(during["open_passthrough"] - before["open_passthrough"], kCycles + 1);
  }
  DaemonStats closed = StatsWhen(
      [&](DaemonStats& s) { return s["backing_files_idle"] == before["backing_files_idle"] + 1; });
  EXPECT_EQ(closed["backing_files_idle"] - before["backing_files_idle"], 1);
  EXPECT_EQ(closed["backing_files"] - before["backing_files"], 1);
  // Every later open and close of the file takes the idle id: nothing more is registered.
  ASSERT_TRUE(Succeeds(OpenReadCloseCycles(kNotes, kFile)));
  DaemonStats after = StatsWhen(
      [&](DaemonStats& s) { return s["backing_files_idle"] == before["backing_files_idle"] + 1; });
  EXPECT_EQ(after["backing_registrations"] - before["backing_registrations"], 1);
  EXPECT_EQ(after["open_passthrough"] - before["open_passthrough"], 2 * kCycles + 1);
  EXPECT_EQ(after["backing_files"] - before["backing_files"], 1);
}

// The kernel reopens the registered file for each open with the opener's flags: an id a reader
// registered serves a writer's passthrough writes.
TEST_F(BackingMountTest, AnIdLeftIdleByAReaderServesAWriter) {
  ASSERT_TRUE(Succeeds(As(kNotes).Read(kFile)));
  DaemonStats idle = StatsWhen([](DaemonStats& s) { return s["backing_files_idle"] >= 1; });
  ASSERT_GE(idle["backing_files_idle"], 1);
  AppResult wrote = As(kNotes).Run("write through the idle id", [] {
    AppResult r;
    int fd = open(kFile, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || pwrite(fd, "BACK", 4, 0) != 4) r.err = errno;
    if (fd >= 0 && close(fd) != 0) r.err = errno;
    return r;
  });
  ASSERT_TRUE(Succeeds(wrote));
  DaemonStats after = Stats();
  EXPECT_EQ(after["backing_registrations"], idle["backing_registrations"]);
  EXPECT_EQ(after["write_requests"], idle["write_requests"]) << "the write was not passthrough";
  absl::StatusOr<std::string> lower = storage_.ReadLower(kFile);
  ASSERT_TRUE(lower.ok()) << lower.status();
  EXPECT_EQ(*lower, "BACKed");
}

TEST_F(BackingMountTest, AnUnlinkClosesTheIdleId) {
  DaemonStats before = Stats();
  ASSERT_TRUE(Succeeds(As(kNotes).Read(kFile)));
  StatsWhen(
      [&](DaemonStats& s) { return s["backing_files_idle"] == before["backing_files_idle"] + 1; });
  ASSERT_TRUE(Succeeds(As(kNotes).Unlink(kFile)));
  DaemonStats after = Stats();
  EXPECT_EQ(after["backing_files"], before["backing_files"]);
  EXPECT_EQ(after["backing_files_idle"], before["backing_files_idle"]);
}

TEST_F(BackingMountTest, AFileUnlinkedWhileOpenKeepsNoIdleId) {
  DaemonStats before = Stats();
  {
    HeldOpen held(Mounted(kFile));
    ASSERT_GE(held.fd, 0) << strerror(errno);
    ASSERT_TRUE(Succeeds(As(kNotes).Unlink(kFile)));
    EXPECT_EQ(Stats()["backing_files"] - before["backing_files"], 1);
  }
  DaemonStats after =
      StatsWhen([&](DaemonStats& s) { return s["backing_files"] == before["backing_files"]; });
  EXPECT_EQ(after["backing_files"], before["backing_files"]);
  EXPECT_EQ(after["backing_files_idle"], before["backing_files_idle"]);
}

TEST_F(BackingMountTest, ARenameOverTheFileClosesItsIdleId) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/other.txt", "other", kNotes));
  DaemonStats before = Stats();
  ASSERT_TRUE(Succeeds(As(kNotes).Read(kFile)));
  StatsWhen(
      [&](DaemonStats& s) { return s["backing_files_idle"] == before["backing_files_idle"] + 1; });
  ASSERT_TRUE(Succeeds(As(kNotes).Rename("Download/other.txt", kFile)));
  DaemonStats after = Stats();
  EXPECT_EQ(after["backing_files"], before["backing_files"]);
  EXPECT_EQ(after["backing_files_idle"], before["backing_files_idle"]);
}

// Once the kernel forgets the file's inode (here: it drops its dentry cache), no open can use the
// node's id again: it goes.
TEST_F(BackingMountTest, AForgottenFileKeepsNoIdleId) {
  DaemonStats before = Stats();
  ASSERT_TRUE(Succeeds(As(kNotes).Read(kFile)));
  StatsWhen(
      [&](DaemonStats& s) { return s["backing_files_idle"] == before["backing_files_idle"] + 1; });
  FILE* drop = fopen("/proc/sys/vm/drop_caches", "w");
  if (drop == nullptr) GTEST_SKIP() << "cannot write /proc/sys/vm/drop_caches: " << strerror(errno);
  fputs("2\n", drop);
  fclose(drop);
  DaemonStats after = StatsWhen(
      [&](DaemonStats& s) { return s["backing_files_idle"] == before["backing_files_idle"]; });
  EXPECT_EQ(after["backing_files_idle"], before["backing_files_idle"]);
  EXPECT_EQ(after["backing_files"], before["backing_files"]);
}

}  // namespace
}  // namespace scopedfs::tests
