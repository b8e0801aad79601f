// BackingFiles with a fake kernel: one backing id per node shared by its opens and closed with the
// last, never a mix of passthrough and userspace opens on one node, and a kernel that refuses
// passthrough leaves opens in userspace.
#include "daemon/backing_files.h"

#include <vector>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

class FakeKernel : public BackingIdSource {
 public:
  bool passthrough_enabled() const override { return enabled; }
  absl::StatusOr<int> BackingOpen(int fd) override {
    if (refuse) return absl::PermissionDeniedError("refused");
    opened.push_back(fd);
    return next_id++;
  }
  absl::Status BackingClose(int id) override {
    closed.push_back(id);
    return absl::OkStatus();
  }
  bool enabled = true;
  bool refuse = false;
  int next_id = 7;
  std::vector<int> opened;
  std::vector<int> closed;
};

TEST(BackingFilesTest, OpensOfANodeShareOneBackingIdClosedWithTheLast) {
  FakeKernel kernel;
  Stats stats;
  BackingFiles backing(/*wanted=*/true, &stats);
  backing.set_source(&kernel);
  Node node;
  bool userspace;
  EXPECT_EQ(backing.Attach(node, 3, &userspace), 7);
  EXPECT_FALSE(userspace);
  EXPECT_EQ(backing.Attach(node, 4, &userspace), 7);
  EXPECT_EQ(kernel.opened.size(), 1u);
  EXPECT_EQ(stats.backing_files.load(), 1u);
  backing.Detach(node, true);
  EXPECT_TRUE(kernel.closed.empty());
  backing.Detach(node, true);
  EXPECT_EQ(kernel.closed, std::vector<int>{7});
  EXPECT_EQ(stats.backing_files.load(), 0u);
}

TEST(BackingFilesTest, NoPassthroughWhileUserspaceOpensExist) {
  FakeKernel kernel;
  BackingFiles backing(/*wanted=*/false, nullptr);
  backing.set_source(&kernel);
  Node node;
  bool userspace;
  EXPECT_EQ(backing.Attach(node, 3, &userspace), -1);
  EXPECT_TRUE(userspace);
  // Passthrough now wanted by a new policy of the daemon: the node's userspace open still holds.
  BackingFiles wanted(/*wanted=*/true, nullptr);
  wanted.set_source(&kernel);
  EXPECT_EQ(wanted.Attach(node, 4, &userspace), -1);
  EXPECT_TRUE(userspace);
  wanted.Detach(node, false);
  backing.Detach(node, false);
  // All userspace opens gone: passthrough may start.
  EXPECT_EQ(wanted.Attach(node, 5, &userspace), 7);
  EXPECT_FALSE(userspace);
}

TEST(BackingFilesTest, RefusedOrDisabledPassthroughServesInUserspace) {
  FakeKernel kernel;
  kernel.refuse = true;
  BackingFiles backing(/*wanted=*/true, nullptr);
  backing.set_source(&kernel);
  Node node;
  bool userspace;
  EXPECT_EQ(backing.Attach(node, 3, &userspace), -1);
  EXPECT_TRUE(userspace);
  kernel.refuse = false;
  kernel.enabled = false;
  Node other;
  EXPECT_FALSE(backing.active());
  EXPECT_EQ(backing.Attach(other, 3, &userspace), -1);
  EXPECT_TRUE(userspace);
  EXPECT_TRUE(kernel.opened.empty());
}

TEST(BackingFilesTest, NoSourceMeansNoPassthrough) {
  BackingFiles backing(/*wanted=*/true, nullptr);
  EXPECT_FALSE(backing.active());
}

}  // namespace
}  // namespace scopedfs::daemon
