// AppBudget: limits sized from the fd limit leave the daemon a reserve, one app stops at its
// share, many apps together stop at the pool and still leave every other app a floor.
#include "daemon/tables/app_budget.h"

#include <string>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

TEST(AppBudgetTest, LimitsLeaveAReserveForTheDaemonAndRoot) {
  for (uint64_t nofile : {1024u, 20000u, 65536u}) {
    SCOPED_TRACE(nofile);
    AppBudget::Limits l = AppBudget::ForFdLimit(nofile);
    EXPECT_LE(l.fds.total + 128, nofile);
    EXPECT_LT(l.fds.per_app, l.fds.total);
    EXPECT_GT(l.fds.floor, 0u);
    EXPECT_LT(l.bytes.per_app, l.bytes.total);
  }
}

// The same mechanism counts fd units and bytes; each resource is its own pool.
class AppBudgetResourceTest : public testing::TestWithParam<AppBudget::Resource> {};

TEST_P(AppBudgetResourceTest, OneAppStopsAtItsShareAndGetsItBack) {
  const AppBudget::Resource r = GetParam();
  AppBudget budget(AppBudget::ForFdLimit(1024));
  uint64_t share = budget.limits().of(r).per_app;
  ASSERT_TRUE(budget.Take(r, 10062, share));
  EXPECT_FALSE(budget.Take(r, 10062));
  EXPECT_EQ(budget.held(r, 10062), share) << "a refused take takes nothing";
  EXPECT_TRUE(budget.Take(r, 10063)) << "another app is not affected";
  budget.Release(r, 10062);
  EXPECT_TRUE(budget.Take(r, 10062));
  EXPECT_EQ(budget.held(r, 10062), share);
  EXPECT_EQ(budget.held(r), share + 1);
  budget.Release(r, 10062, share);
  budget.Release(r, 10063);
  EXPECT_EQ(budget.held(r), 0u);
}

TEST_P(AppBudgetResourceTest, ReleasingMoreThanHeldGivesBackOnlyWhatIsHeld) {
  const AppBudget::Resource r = GetParam();
  AppBudget budget(AppBudget::ForFdLimit(1024));
  ASSERT_TRUE(budget.Take(r, 10062, 3));
  ASSERT_TRUE(budget.Take(r, 10063, 2));
  budget.Release(r, 10062, 10);
  budget.Release(r, 10064, 10);  // holds nothing
  EXPECT_EQ(budget.held(r, 10062), 0u);
  EXPECT_EQ(budget.held(r), 2u);
}

TEST_P(AppBudgetResourceTest, AllAppsTogetherStopAtThePool) {
  const AppBudget::Resource r = GetParam();
  AppBudget budget(AppBudget::ForFdLimit(1024));
  const AppBudget::Pool& pool = budget.limits().of(r);
  // Apps take as much as they can, in ever smaller pieces, until an app gets nothing.
  for (uid_t uid = 10000; uid < 10100; ++uid) {
    for (uint64_t piece = pool.per_app; piece > 0;) {
      if (!budget.Take(r, uid, piece)) piece /= 2;
    }
    if (budget.held(r, uid) == 0) break;
  }
  EXPECT_EQ(budget.held(r), pool.total);
  EXPECT_FALSE(budget.Take(r, 20000));
}

TEST_P(AppBudgetResourceTest, ResourcesAreCountedApart) {
  const AppBudget::Resource r = GetParam();
  const AppBudget::Resource other = r == AppBudget::kFds ? AppBudget::kBytes : AppBudget::kFds;
  AppBudget budget(AppBudget::ForFdLimit(1024));
  ASSERT_TRUE(budget.Take(r, 10062, budget.limits().of(r).per_app));
  EXPECT_TRUE(budget.Take(other, 10062));
  EXPECT_EQ(budget.held(other, 10062), 1u);
  budget.Release(r, 10062, budget.limits().of(r).per_app);
  EXPECT_EQ(budget.held(other, 10062), 1u) << "an app's other resource outlives this one";
  EXPECT_EQ(budget.held(r, 10062), 0u);
}

INSTANTIATE_TEST_SUITE_P(Resources, AppBudgetResourceTest,
                         testing::Values(AppBudget::kFds, AppBudget::kBytes), [](const auto& info) {
                           return std::string(info.param == AppBudget::kFds ? "Fds" : "Bytes");
                         });

TEST(AppBudgetTest, AllAppsTogetherNeverTakeThePoolAndLeaveEachOtherAFloor) {
  AppBudget budget(AppBudget::ForFdLimit(1024));
  const AppBudget::Limits& l = budget.limits();
  // Apps take as much as they can, one after another, until none can take more.
  uid_t uid = 10000;
  for (; uid < 10100; ++uid) {
    while (budget.Take(AppBudget::kFds, uid)) {
    }
    if (budget.held(AppBudget::kFds, uid) <= l.fds.floor) break;
  }
  EXPECT_LE(budget.held(AppBudget::kFds), l.fds.total);
  // The next app, holding nothing, still gets its floor.
  for (uint64_t i = 0; i < l.fds.floor; ++i) ASSERT_TRUE(budget.Take(AppBudget::kFds, 20000)) << i;
}

}  // namespace
}  // namespace scopedfs::daemon
