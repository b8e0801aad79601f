// What the daemon's own counters (scopedfsctl stats --json) prove: cleared opens get kernel
// passthrough, so their reads never reach the daemon; and open/close cycles leak no fds or backing
// files. Each claim is also shown failing with --passthrough=false, so the counters can tell.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr size_t kBigFile = 64 << 20;
constexpr char kBigPath[] = "Download/big.bin";  // notes' own file
constexpr int kCycles = 10000;
constexpr absl::Duration kSettle = absl::Seconds(20);

uint64_t Fnv1a(absl::string_view data, uint64_t h = 1469598103934665603ull) {
  for (char c : data) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// Reads `path` to the end in 1 MiB reads; value = bytes read, data = FNV-1a of the bytes.
AppResult ReadAndHash(const App& app, const std::string& path) {
  return app.Run(absl::StrCat("read+hash ", path), [&] {
    AppResult r;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      r.err = errno;
      return r;
    }
    std::string buf(1 << 20, '\0');
    uint64_t h = 1469598103934665603ull;
    for (;;) {
      ssize_t n = read(fd, buf.data(), buf.size());
      if (n < 0) {
        r.err = errno;
        break;
      }
      if (n == 0) break;
      h = Fnv1a(absl::string_view(buf.data(), static_cast<size_t>(n)), h);
      r.value += n;
    }
    close(fd);
    r.data = absl::StrCat(h);
    return r;
  });
}

// The daemon's open fds, each with what it refers to (/proc/<pid>/fd/<n>): a failure names the
// fd that came or went.
std::map<int, std::string> FdsOf(pid_t pid) {
  std::map<int, std::string> fds;
  std::string dir = absl::StrCat("/proc/", pid, "/fd");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return fds;
  while (dirent* e = readdir(d)) {
    int fd;
    if (!absl::SimpleAtoi(e->d_name, &fd)) continue;
    char target[PATH_MAX];
    ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof(target));
    fds[fd] = n < 0 ? std::string("?") : std::string(target, static_cast<size_t>(n));
  }
  closedir(d);
  return fds;
}

// The fds of `now` not in `then` (by number and target), one "fd -> target" a line.
std::string FdsNotIn(const std::map<int, std::string>& now,
                     const std::map<int, std::string>& then) {
  std::string out;
  for (const auto& [fd, target] : now) {
    auto it = then.find(fd);
    if (it == then.end() || it->second != target)
      absl::StrAppend(&out, "  ", fd, " -> ", target, "\n");
  }
  return out.empty() ? "  none\n" : out;
}

class StatsMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.control_socket = true;
    options.passthrough = passthrough();
    return options;
  }
  virtual bool passthrough() const { return true; }

  DaemonStats Stats() {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : DaemonStats{};
  }

  // Reads the 64 MiB file as its owner; returns the counters before and after.
  void ReadBigFile(DaemonStats* before, DaemonStats* after) {
    const std::string content = Pattern(kBigFile, 64);
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kBigPath, content, kNotes));
    *before = Stats();
    AppResult read = ReadAndHash(As(kNotes), kBigPath);
    *after = Stats();
    ASSERT_TRUE(Succeeds(read));
    EXPECT_EQ(read.value, static_cast<int64_t>(kBigFile));
    EXPECT_EQ(read.data, absl::StrCat(Fnv1a(content)));
  }

  // Waits (bounded) until the daemon's fd count is `fds`; returns the last count seen.
  int SettleFdCount(int fds) {
    absl::Time deadline = absl::Now() + kSettle;
    int now = -1;
    for (;;) {
      absl::StatusOr<int> count = storage_.DaemonFdCount();
      if (!count.ok()) return -1;
      now = *count;
      if (now == fds || absl::Now() > deadline) return now;
      absl::SleepFor(absl::Milliseconds(10));
    }
  }

  // Opens, reads one byte of and closes the owner's file kCycles times in one app process.
  AppResult OpenCloseCycles(const std::string& path) {
    return As(kNotes).Run(absl::StrCat(kCycles, " open/read/close of ", path), [&] {
      AppResult r;
      for (int i = 0; i < kCycles && r.err == 0; ++i) {
        int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        char c;
        if (fd < 0 || read(fd, &c, 1) != 1) r.err = errno;
        if (fd >= 0 && close(fd) != 0) r.err = errno;
        r.value = i + 1;
      }
      return r;
    });
  }

  // No fd and no backing file may outlive the opens that needed them.
  void ExpectNoLeakAfterCycles() {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/cycle.bin", "cycle", kNotes));
    // The baseline is taken before any request names the file, when the daemon holds only the
    // fds it opened before it said it serves. A stat of the file can return while the daemon
    // still holds an fd of it: the work the request owes after its reply (after_reply.h: the
    // facts record of a file whose head a lookup read holds a dup of its fd until it is written),
    // or a location scan still queued or running after the lookup's wait for it ended. A node
    // keeps no fd (node_table.h: a handle), so the count must come back to this one exactly once
    // the last RELEASE and the work after it are done.
    std::map<int, std::string> fds_then = FdsOf(storage_.daemon_pid());
    absl::StatusOr<int> fds_before = storage_.DaemonFdCount();
    ASSERT_TRUE(fds_before.ok()) << fds_before.status();
    DaemonStats before = Stats();

    AppResult cycles = OpenCloseCycles("Download/cycle.bin");
    ASSERT_TRUE(Succeeds(cycles));
    ASSERT_EQ(cycles.value, kCycles);

    // RELEASE reaches the daemon asynchronously after close(), and the work above after that:
    // wait for the last ones, then demand the exact starting figures.
    EXPECT_EQ(SettleFdCount(*fds_before), *fds_before)
        << "scopedfsd leaked fds; it holds now and did not then:\n"
        << FdsNotIn(FdsOf(storage_.daemon_pid()), fds_then) << "it held then and does not now:\n"
        << FdsNotIn(fds_then, FdsOf(storage_.daemon_pid()));
    DaemonStats after = Stats();
    // Every registered backing id is in use or idle, kept for the next open, and one file's
    // opens keep at most one idle (backing_mount_test shows them dropped).
    EXPECT_EQ(after["backing_files"] - after["backing_files_idle"],
              before["backing_files"] - before["backing_files_idle"])
        << "backing files leaked";
    EXPECT_LE(after["backing_files_idle"], before["backing_files_idle"] + 1);
    EXPECT_EQ(after["open_passthrough"] - before["open_passthrough"], passthrough() ? kCycles : 0);
  }
};

class UserspaceStatsMountTest : public StatsMountTest {
 protected:
  bool passthrough() const override { return false; }
};

// The permissive policy decides on nothing a file holds: removing files reads none of them.
class PermissiveStatsMountTest : public StatsMountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options = StatsMountTest::Options();
    options.policy = "policy/configs/permissive.textproto";
    return options;
  }
  // The stats once no location scan is queued.
  DaemonStats Idle() {
    absl::StatusOr<DaemonStats> stats = storage_.StatsOnceZero("scans_pending");
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : DaemonStats{};
  }
};

TEST_F(PermissiveStatsMountTest, UnlinkReadsNoContent) {
  constexpr int kFiles = 20;
  for (int i = 0; i < kFiles; ++i) {
    SCOPEDFS_ASSERT_OK(
        storage_.WriteLower(absl::StrCat("Download/rm/f", i), std::string(4096, 'x'), kNotes));
  }
  DaemonStats before = Idle();
  // Root, so the lower directory's owner (the harness) is no obstacle under POSIX semantics.
  int removed = RunAs(
      0,
      [&] {
        int gone = 0;
        for (int i = 0; i < kFiles; ++i) {
          if (unlink(absl::StrCat("Download/rm/f", i).c_str()) == 0) ++gone;
        }
        return gone == kFiles ? 0 : 1;
      },
      storage_.mountpoint());
  ASSERT_EQ(removed, 0);
  DaemonStats after = Idle();
  EXPECT_EQ(after["location_scans"], before["location_scans"]);
  EXPECT_EQ(after["content_reads"], before["content_reads"]);
}

TEST_F(StatsMountTest, KernelAcceptedPassthrough) { EXPECT_EQ(Stats()["passthrough_enabled"], 1); }

TEST_F(StatsMountTest, PassthroughReadsNeverReachTheDaemon) {
  DaemonStats before, after;
  ReadBigFile(&before, &after);
  EXPECT_EQ(after["open_passthrough"], before["open_passthrough"] + 1);
  EXPECT_EQ(after["read_requests"], before["read_requests"])
      << "64 MiB read through a passthrough open still reached the daemon";
}

TEST_F(UserspaceStatsMountTest, WithoutPassthroughTheSameReadsReachTheDaemon) {
  DaemonStats before, after;
  ReadBigFile(&before, &after);
  EXPECT_EQ(after["open_passthrough"], before["open_passthrough"]);
  // At most 1 MiB per READ request (max_read): 64 MiB needs at least 64.
  EXPECT_GE(after["read_requests"] - before["read_requests"], 64);
}

TEST_F(StatsMountTest, OpenCloseCyclesLeakNoFdsOrBackingFiles) { ExpectNoLeakAfterCycles(); }

TEST_F(UserspaceStatsMountTest, OpenCloseCyclesLeakNoFds) { ExpectNoLeakAfterCycles(); }

// Each op family is counted as itself: a MKNOD (here a FIFO, refused under ANDROID semantics) is
// a mknod, not a mkdir.
TEST_F(StatsMountTest, MknodIsCountedAsMknod) {
  absl::StatusOr<int64_t> mkdirs_before = storage_.OpCount("mkdir");
  ASSERT_TRUE(mkdirs_before.ok()) << mkdirs_before.status();
  AppResult made = As(kNotes).Run("mkfifo Download/pipe", [] {
    AppResult r;
    if (mkfifo("Download/pipe", 0600) != 0) r.err = errno;
    return r;
  });
  EXPECT_TRUE(FailsWith(made, EPERM));
  absl::StatusOr<int64_t> mknods = storage_.OpCount("mknod");
  ASSERT_TRUE(mknods.ok()) << mknods.status();
  EXPECT_EQ(*mknods, 1);
  absl::StatusOr<int64_t> mkdirs_after = storage_.OpCount("mkdir");
  ASSERT_TRUE(mkdirs_after.ok()) << mkdirs_after.status();
  EXPECT_EQ(*mkdirs_after, *mkdirs_before);
}

// The inode table follows the kernel: once the kernel forgets names (here: because it drops its
// dentry cache), their nodes go. Growth is bounded by what the kernel itself holds.
TEST_F(StatsMountTest, ForgottenNodesLeaveTheTable) {
  constexpr int kFiles = 500;
  for (int i = 0; i < kFiles; ++i) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("Download/many/f", i), "x", kNotes));
  }
  int64_t baseline = Stats()["nodes"];
  int visible = RunAs(
      kNotes,
      [&] {
        int seen = 0;
        struct stat st;
        for (int i = 0; i < kFiles; ++i) {
          if (stat(absl::StrCat("Download/many/f", i).c_str(), &st) == 0) ++seen;
        }
        return seen == kFiles ? 0 : 1;
      },
      storage_.mountpoint());
  ASSERT_EQ(visible, 0);
  EXPECT_GE(Stats()["nodes"], baseline + kFiles);
  FILE* drop = fopen("/proc/sys/vm/drop_caches", "w");
  if (drop == nullptr) GTEST_SKIP() << "cannot write /proc/sys/vm/drop_caches: " << strerror(errno);
  fputs("2\n", drop);
  fclose(drop);
  // FORGET requests are asynchronous (over io_uring too they come through /dev/fuse, read by the
  // session's reader, not the ring's threads): the daemon's node count is asked until it is back
  // to the baseline.
  absl::StatusOr<DaemonStats> forgotten =
      storage_.StatsOnce([&](const DaemonStats& s) { return s.at("nodes") <= baseline; }, "nodes");
  EXPECT_TRUE(forgotten.ok()) << forgotten.status() << " (baseline " << baseline << ")";
}

}  // namespace
}  // namespace scopedfs::tests
