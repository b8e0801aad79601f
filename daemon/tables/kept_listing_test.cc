#include "daemon/tables/kept_listing.h"

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

using Open = KeptListing::Open;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kFresh = 9 * kSecond;

TEST(KeptListingTest, TheFirstOpenFillsAndTheNextKeepsOnceListedWithoutContent) {
  KeptListing k;
  uint64_t fill = 0, fill2 = 0;
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &fill), Open::kFill);
  EXPECT_NE(fill, 0u);
  k.Listed(fill, /*content_free=*/true, 1 * kSecond);
  k.End();
  EXPECT_EQ(k.Begin("app", 7, 2 * kSecond, kFresh, &fill2), Open::kKeep);
  EXPECT_EQ(fill2, fill);
  k.End();
}

TEST(KeptListingTest, AnotherViewerNeverReadsTheKeptListing) {
  KeptListing k;
  uint64_t fill = 0, other = 0;
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &fill), Open::kFill);
  k.Listed(fill, true, 0);
  // While the app's open may still fill, another viewer neither reads nor empties the cache.
  EXPECT_EQ(k.Begin("other", 7, 0, kFresh, &other), Open::kUncached);
  k.End();
  // Once it ended, the other viewer's open empties it and fills its own.
  EXPECT_EQ(k.Begin("other", 7, 0, kFresh, &other), Open::kFill);
  EXPECT_NE(other, fill);
  // The app's listing is gone: its next open is not served the other's.
  uint64_t again = 0;
  EXPECT_EQ(k.Begin("app", 7, 0, kFresh, &again), Open::kUncached);
  k.End();
  EXPECT_EQ(k.Begin("app", 7, 0, kFresh, &again), Open::kFill);
}

TEST(KeptListingTest, ANewVersionFillsAgain) {
  KeptListing k;
  uint64_t fill = 0, next = 0;
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &fill), Open::kFill);
  k.Listed(fill, true, 0);
  k.End();
  EXPECT_EQ(k.Begin("app", 8, 0, kFresh, &next), Open::kFill);
  EXPECT_NE(next, fill);
  k.Listed(fill, true, 0);  // the old fill's listing does not vouch for the new one
  k.End();
  EXPECT_EQ(k.Begin("app", 8, 0, kFresh, &next), Open::kFill);
}

TEST(KeptListingTest, AListingThatDependsOnContentIsNeverKept) {
  KeptListing k;
  uint64_t fill = 0, next = 0;
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &fill), Open::kFill);
  k.Listed(fill, /*content_free=*/false, 0);
  k.End();
  EXPECT_EQ(k.Begin("app", 7, 0, kFresh, &next), Open::kUncached);
  // A later listing of the same fill does not make it content-free.
  k.Listed(fill, true, 0);
  EXPECT_EQ(k.Begin("app", 7, 0, kFresh, &next), Open::kUncached);
}

TEST(KeptListingTest, AStaleListingIsFilledAgain) {
  KeptListing k;
  uint64_t fill = 0, next = 0;
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &fill), Open::kFill);
  k.Listed(fill, true, 1 * kSecond);
  k.End();
  EXPECT_EQ(k.Begin("app", 7, 1 * kSecond + kFresh, kFresh, &next), Open::kFill);
  EXPECT_NE(next, fill);
}

TEST(KeptListingTest, AFillNotYetListedIsNotKept) {
  KeptListing k;
  uint64_t fill = 0, next = 0;
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &fill), Open::kFill);
  // Its listing has not been served yet: a second open of the app reads on its own.
  EXPECT_EQ(k.Begin("app", 7, 0, kFresh, &next), Open::kUncached);
  k.End();
  // Closed unread: the next open fills.
  EXPECT_EQ(k.Begin("app", 7, 0, kFresh, &next), Open::kFill);
}

TEST(KeptListingTest, KeepOpensCountUntilTheyEnd) {
  KeptListing k;
  uint64_t fill = 0, next = 0;
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &fill), Open::kFill);
  k.Listed(fill, true, 0);
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &next), Open::kKeep);
  k.End();  // the fill ends; the keep is still open
  EXPECT_EQ(k.Begin("other", 7, 0, kFresh, &next), Open::kUncached);
  k.End();
  EXPECT_EQ(k.Begin("other", 7, 0, kFresh, &next), Open::kFill);
}

TEST(KeptListingTest, AnUnknownVersionOrViewerIsNeverCached) {
  KeptListing k;
  uint64_t fill = 0;
  EXPECT_EQ(k.Begin("app", 0, 0, kFresh, &fill), Open::kUncached);
  EXPECT_EQ(k.Begin("", 7, 0, kFresh, &fill), Open::kUncached);
}

TEST(KeptListingTest, ViewerAtTellsWhomTheLatestFillAtAVersionWasFor) {
  KeptListing k;
  uint64_t fill = 0;
  EXPECT_EQ(k.ViewerAt(7), "");
  ASSERT_EQ(k.Begin("app", 7, 0, kFresh, &fill), Open::kFill);
  EXPECT_EQ(k.ViewerAt(7), "app");
  EXPECT_EQ(k.ViewerAt(8), "");
  k.End();
  ASSERT_EQ(k.Begin("other", 8, 0, kFresh, &fill), Open::kFill);
  EXPECT_EQ(k.ViewerAt(7), "");
  EXPECT_EQ(k.ViewerAt(8), "other");
  EXPECT_EQ(k.ViewerAt(0), "");
}

TEST(KeptListingSlotTest, MadeOnceAtFirstUse) {
  KeptListingSlot slot;
  KeptListing* first = &slot.Get();
  EXPECT_EQ(&slot.Get(), first);
}

}  // namespace
}  // namespace scopedfs::daemon
