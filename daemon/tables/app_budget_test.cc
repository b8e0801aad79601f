// AppBudget: limits sized from the fd limit leave the daemon a reserve, one app stops at its
// share, many apps together stop at the pool and still leave every other app a floor.
#include "daemon/tables/app_budget.h"

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

TEST(AppBudgetTest, LimitsLeaveAReserveForTheDaemonAndRoot) {
  for (uint64_t nofile : {1024u, 20000u, 65536u}) {
    SCOPED_TRACE(nofile);
    AppBudget::Limits l = AppBudget::ForFdLimit(nofile);
    EXPECT_LE(l.fd_pool + 128, nofile);
    EXPECT_LT(l.fds_per_app, l.fd_pool);
    EXPECT_GT(l.fd_floor, 0u);
  }
}

TEST(AppBudgetTest, OneAppStopsAtItsShareAndGetsItBack) {
  AppBudget budget(AppBudget::ForFdLimit(1024));
  size_t share = budget.limits().fds_per_app;
  ASSERT_TRUE(budget.TakeFds(10062, share));
  EXPECT_FALSE(budget.TakeFds(10062));
  EXPECT_TRUE(budget.TakeFds(10063)) << "another app is not affected";
  budget.ReleaseFds(10062);
  EXPECT_TRUE(budget.TakeFds(10062));
  EXPECT_EQ(budget.fds_held(10062), share);
}

TEST(AppBudgetTest, AllAppsTogetherNeverTakeThePoolAndLeaveEachOtherAFloor) {
  AppBudget budget(AppBudget::ForFdLimit(1024));
  const AppBudget::Limits& l = budget.limits();
  // Apps take as much as they can, one after another, until none can take more.
  uid_t uid = 10000;
  for (; uid < 10100; ++uid) {
    while (budget.TakeFds(uid)) {
    }
    if (budget.fds_held(uid) <= l.fd_floor) break;
  }
  EXPECT_LE(budget.fds_held(), l.fd_pool);
  // The next app, holding nothing, still gets its floor.
  for (size_t i = 0; i < l.fd_floor; ++i) ASSERT_TRUE(budget.TakeFds(20000)) << i;
}

TEST(AppBudgetTest, MemoryIsChargedPerApp) {
  AppBudget budget(AppBudget::ForFdLimit(1024));
  uint64_t share = budget.limits().bytes_per_app;
  ASSERT_TRUE(budget.TakeBytes(10062, share));
  EXPECT_FALSE(budget.TakeBytes(10062, 1));
  EXPECT_TRUE(budget.TakeBytes(10063, 1));
  budget.ReleaseBytes(10062, share);
  EXPECT_EQ(budget.bytes_held(10062), 0u);
  EXPECT_EQ(budget.bytes_held(), 1u);
}

}  // namespace
}  // namespace scopedfs::daemon
