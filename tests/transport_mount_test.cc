// Which transport serves (--transport): with io_uring asked for, the daemon's counters show the
// ring answering an app's requests when the kernel offers it (enable_uring Y), and the daemon
// refuses to start (71, with the reason) when it does not; auto follows the kernel; dev never
// uses the ring; a vold-style adopted fd is served the same way. The tests never change
// /sys/module/fuse/parameters/enable_uring: tools/test.sh runs the suite once with it N and once
// with it Y, and each case checks what the value it finds implies.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

bool KernelOffersUring() {
  std::ifstream in("/sys/module/fuse/parameters/enable_uring");
  std::string value;
  return in >> value && value == "Y";
}

class TransportMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(storage_.Prepare());
    SCOPEDFS_ASSERT_OK(storage_.CreateDefaultLayout());
  }
  void TearDown() override {
    if (storage_.daemon_started()) {
      DaemonExit e = storage_.StopDaemon();
      EXPECT_TRUE(e.clean()) << "scopedfsd did not exit cleanly on SIGTERM: " << e.ToString();
    }
    EXPECT_FALSE(storage_.IsMounted()) << "a mount was left behind";
    if (HasFailure()) std::cerr << "--- scopedfsd log ---\n" << storage_.DaemonLog() << "---\n";
    storage_.Teardown();
  }

  absl::Status Start(const std::string& transport, bool vold_mount = false) {
    DaemonOptions options;
    options.control_socket = true;
    options.vold_mount = vold_mount;
    options.extra_flags = {absl::StrCat("--transport=", transport)};
    return storage_.StartDaemon(options);
  }

  // An app's everyday requests: create, write, read back, stat, list, rename, unlink, mkdir,
  // rmdir. Twelve or more round trips, each answered right whichever transport carries it.
  void Exercise() {
    App notes = As(kNotes);
    ASSERT_TRUE(Succeeds(notes.Create("Download/t.txt", "over the ring")));
    AppResult read = notes.Read("Download/t.txt");
    ASSERT_TRUE(Succeeds(read));
    EXPECT_EQ(read.data, "over the ring");
    EXPECT_TRUE(Succeeds(notes.Stat("Download/t.txt")));
    AppResult list = notes.List("Download");
    ASSERT_TRUE(Succeeds(list));
    EXPECT_EQ(list.names, std::vector<std::string>{"t.txt"});
    EXPECT_TRUE(Succeeds(notes.Rename("Download/t.txt", "Download/u.txt")));
    EXPECT_TRUE(FailsWith(notes.Stat("Download/t.txt"), ENOENT));
    EXPECT_TRUE(Succeeds(notes.Unlink("Download/u.txt")));
    EXPECT_TRUE(Succeeds(notes.Mkdir("Download/d")));
    EXPECT_TRUE(Succeeds(notes.Rmdir("Download/d")));
  }

  DaemonStats Stats() {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : DaemonStats{};
  }

  App As(uid_t uid) const { return storage_.As(uid); }
  ScopedStorage storage_;
};

TEST_F(TransportMountTest, UringServesWhenOfferedAndRefusesToStartWhenNot) {
  absl::Status started = Start("uring");
  if (!KernelOffersUring()) {
    ASSERT_FALSE(started.ok()) << "enable_uring is N, yet --transport=uring started";
    EXPECT_TRUE(storage_.last_exit().exited) << storage_.last_exit().ToString();
    EXPECT_EQ(storage_.last_exit().code, 71) << storage_.DaemonLog();  // base::kExitMount
    EXPECT_TRUE(absl::StrContains(storage_.DaemonLog(), "enable_uring")) << storage_.DaemonLog();
    return;
  }
  SCOPEDFS_ASSERT_OK(started);
  EXPECT_TRUE(absl::StrContains(storage_.DaemonLog(), "scopedfsd: transport: io_uring, "))
      << storage_.DaemonLog();
  ASSERT_NO_FATAL_FAILURE(Exercise());
  DaemonStats stats = Stats();
  EXPECT_EQ(stats["uring_serving"], 1);
  EXPECT_GE(stats["uring_requests"], 12);
}

TEST_F(TransportMountTest, AutoUsesUringExactlyWhenOffered) {
  SCOPEDFS_ASSERT_OK(Start("auto"));
  ASSERT_NO_FATAL_FAILURE(Exercise());
  DaemonStats stats = Stats();
  const bool offered = KernelOffersUring();
  EXPECT_EQ(stats["uring_serving"], offered ? 1 : 0);
  if (offered) {
    EXPECT_GE(stats["uring_requests"], 12);
  } else {
    EXPECT_EQ(stats["uring_requests"], 0);
    EXPECT_TRUE(absl::StrContains(storage_.DaemonLog(), "scopedfsd: transport: /dev/fuse ("))
        << storage_.DaemonLog();
  }
}

TEST_F(TransportMountTest, DevNeverUsesTheRing) {
  SCOPEDFS_ASSERT_OK(Start("dev"));
  ASSERT_NO_FATAL_FAILURE(Exercise());
  DaemonStats stats = Stats();
  EXPECT_EQ(stats["uring_serving"], 0);
  EXPECT_EQ(stats["uring_requests"], 0);
  EXPECT_TRUE(absl::StrContains(storage_.DaemonLog(), "transport: /dev/fuse (--transport=dev)"))
      << storage_.DaemonLog();
}

// vold opens /dev/fuse, mounts and hands the fd over: the ring is registered on that fd.
TEST_F(TransportMountTest, AdoptedFdServedOverTheSameTransport) {
  const bool offered = KernelOffersUring();
  SCOPEDFS_ASSERT_OK(Start(offered ? "uring" : "auto", /*vold_mount=*/true));
  ASSERT_NO_FATAL_FAILURE(Exercise());
  DaemonStats stats = Stats();
  EXPECT_EQ(stats["uring_serving"], offered ? 1 : 0);
  EXPECT_EQ(stats["passthrough_enabled"], 1);
}

TEST_F(TransportMountTest, UnknownTransportIsAUsageError) {
  EXPECT_FALSE(Start("fast").ok());
  EXPECT_TRUE(storage_.last_exit().exited);
  EXPECT_EQ(storage_.last_exit().code, 64) << storage_.DaemonLog();  // base::kExitUsage
  EXPECT_TRUE(absl::StrContains(storage_.DaemonLog(), "must be auto, uring or dev"))
      << storage_.DaemonLog();
}

}  // namespace
}  // namespace scopedfs::tests
