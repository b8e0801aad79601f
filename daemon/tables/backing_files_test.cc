// BackingFiles with a fake kernel: one backing id per node shared by its opens and kept idle after
// the last (bounded, dropped when the file loses a name), never a mix of passthrough and userspace
// opens on one node, and a kernel that refuses passthrough leaves opens in userspace.
#include "daemon/tables/backing_files.h"

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

class FakeKernel : public BackingIdSource {
 public:
  bool passthrough_enabled() const override { return enabled; }
  absl::StatusOr<int> BackingOpen(int fd) override {
    absl::MutexLock lock(&mu);
    if (refuse) return absl::PermissionDeniedError("refused");
    opened.push_back(fd);
    live.insert(next_id);
    return next_id++;
  }
  absl::Status BackingClose(int id) override {
    absl::MutexLock lock(&mu);
    closed.push_back(id);
    // Closing an id the kernel does not hold (twice, or never opened) is a daemon bug.
    EXPECT_EQ(live.erase(id), 1u) << "backing id " << id;
    return absl::OkStatus();
  }
  absl::Mutex mu;
  std::set<int> live;
  bool enabled = true;
  bool refuse = false;
  int next_id = 7;
  std::vector<int> opened;
  std::vector<int> closed;
};

TEST(BackingFilesTest, OpensOfANodeShareOneBackingIdKeptIdleAfterTheLast) {
  FakeKernel kernel;
  Stats stats;
  BackingFiles backing(/*wanted=*/true, &stats);
  backing.set_source(&kernel);
  auto node = std::make_shared<Node>();
  bool userspace;
  EXPECT_EQ(backing.Attach(node, 3, &userspace), 7);
  EXPECT_FALSE(userspace);
  EXPECT_EQ(backing.Attach(node, 4, &userspace), 7);
  EXPECT_EQ(kernel.opened.size(), 1u);
  EXPECT_EQ(stats.backing_files.load(), 1u);
  backing.Detach(node, true);
  backing.Detach(node, true);
  EXPECT_TRUE(kernel.closed.empty());
  EXPECT_EQ(stats.backing_files.load(), 1u);
  EXPECT_EQ(stats.backing_files_idle.load(), 1u);
  // The next open takes the idle id: no new registration.
  EXPECT_EQ(backing.Attach(node, 5, &userspace), 7);
  EXPECT_EQ(kernel.opened.size(), 1u);
  EXPECT_EQ(stats.backing_files_idle.load(), 0u);
  backing.Detach(node, true);
  EXPECT_EQ(backing.idle(), 1u);
}

TEST(BackingFilesTest, ALostNameClosesTheIdleIdOrTheLastOpensId) {
  FakeKernel kernel;
  Stats stats;
  BackingFiles backing(/*wanted=*/true, &stats);
  backing.set_source(&kernel);
  auto idle = std::make_shared<Node>();
  auto open = std::make_shared<Node>();
  bool userspace;
  EXPECT_EQ(backing.Attach(idle, 3, &userspace), 7);
  backing.Detach(idle, true);
  backing.DropIdle(idle);
  EXPECT_EQ(kernel.closed, std::vector<int>{7});
  EXPECT_EQ(backing.idle(), 0u);
  // Unlinked while open: its id is closed with its last open, never kept idle.
  EXPECT_EQ(backing.Attach(open, 4, &userspace), 8);
  backing.DropIdle(open);
  EXPECT_EQ(kernel.closed, std::vector<int>{7});
  backing.Detach(open, true);
  EXPECT_EQ(kernel.closed, (std::vector<int>{7, 8}));
  EXPECT_EQ(backing.idle(), 0u);
  EXPECT_EQ(stats.backing_files.load(), 0u);
  EXPECT_EQ(stats.backing_files_idle.load(), 0u);
}

TEST(BackingFilesTest, IdleIdsAreBoundedLeastRecentlyUsedFirst) {
  FakeKernel kernel;
  Stats stats;
  BackingFiles backing(/*wanted=*/true, &stats, /*max_idle=*/2);
  backing.set_source(&kernel);
  std::vector<std::shared_ptr<Node>> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(std::make_shared<Node>());
  bool userspace;
  for (int i = 0; i < 2; ++i) {
    backing.Attach(nodes[i], 3, &userspace);
    backing.Detach(nodes[i], true);
  }
  // Node 0 used again: node 1 is now the least recently used.
  EXPECT_EQ(backing.Attach(nodes[0], 3, &userspace), 7);
  backing.Detach(nodes[0], true);
  EXPECT_EQ(backing.Attach(nodes[2], 3, &userspace), 9);
  backing.Detach(nodes[2], true);
  EXPECT_EQ(kernel.closed, std::vector<int>{8});
  EXPECT_EQ(backing.idle(), 2u);
  EXPECT_EQ(stats.backing_files.load(), 2u);
  // An evicted node registers anew at its next open.
  EXPECT_EQ(backing.Attach(nodes[1], 3, &userspace), 10);
  backing.Detach(nodes[1], true);
}

// Opens, closes and lost names of a few nodes from several threads, past a small idle bound: no
// id is closed twice or while an open holds it, and at the end every registered id is idle.
TEST(BackingFilesTest, ConcurrentOpensClosesAndDropsKeepTheCountsExact) {
  FakeKernel kernel;
  Stats stats;
  BackingFiles backing(/*wanted=*/true, &stats, /*max_idle=*/3);
  backing.set_source(&kernel);
  std::vector<std::shared_ptr<Node>> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(std::make_shared<Node>());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::shared_ptr<Node>& node = nodes[(i * 7 + t) % nodes.size()];
        bool userspace;
        int id = backing.Attach(node, 3, &userspace);
        ASSERT_FALSE(userspace);
        auto held = [&] {
          absl::MutexLock lock(&kernel.mu);
          return kernel.live.count(id) == 1;
        };
        EXPECT_TRUE(held()) << "handed out a closed id " << id;
        std::this_thread::yield();
        EXPECT_TRUE(held()) << "closed id " << id << " while an open held it";
        backing.Detach(node, true);
        if (t == 0 && i == 1000) backing.DropIdle(nodes[5]);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  absl::MutexLock lock(&kernel.mu);
  EXPECT_EQ(stats.backing_files.load(), kernel.live.size());
  EXPECT_EQ(stats.backing_files_idle.load(), kernel.live.size());
  EXPECT_EQ(backing.idle(), kernel.live.size());
  EXPECT_LE(kernel.live.size(), 3u);
  EXPECT_EQ(stats.backing_registrations.load(), kernel.opened.size());
}

TEST(BackingFilesTest, NoPassthroughWhileUserspaceOpensExist) {
  FakeKernel kernel;
  BackingFiles backing(/*wanted=*/false, nullptr);
  backing.set_source(&kernel);
  auto node = std::make_shared<Node>();
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
  auto node = std::make_shared<Node>();
  bool userspace;
  EXPECT_EQ(backing.Attach(node, 3, &userspace), -1);
  EXPECT_TRUE(userspace);
  kernel.refuse = false;
  kernel.enabled = false;
  auto other = std::make_shared<Node>();
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
