#include "daemon/kernel/after_reply.h"

#include <vector>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

TEST(AfterReplyTest, RunsAtOnceWithoutAScope) {
  std::vector<int> done;
  AfterReply::Run([&] { done.push_back(0); });
  EXPECT_EQ(done, std::vector<int>{0});
}

// A request's scope inside the transport's (io_uring: the commit comes after the handler): its
// work waits for the outer scope's end, in the order it was queued.
TEST(AfterReplyTest, AnInnerScopeHandsItsWorkToTheOuterOne) {
  std::vector<int> done;
  {
    AfterReply transport;
    AfterReply::Run([&] { done.push_back(1); });
    {
      AfterReply request;
      AfterReply::Run([&] { done.push_back(2); });
    }
    EXPECT_TRUE(done.empty()) << "run before the outer scope ended";
    AfterReply::Run([&] { done.push_back(3); });
  }
  EXPECT_EQ(done, (std::vector<int>{1, 2, 3}));
}

// /dev/fuse: the request's scope is the outermost; its work runs when it ends.
TEST(AfterReplyTest, TheOutermostScopeRunsItsWorkWhenItEnds) {
  std::vector<int> done;
  {
    AfterReply request;
    AfterReply::Run([&] { done.push_back(1); });
    EXPECT_TRUE(done.empty());
  }
  EXPECT_EQ(done, std::vector<int>{1});
}

}  // namespace
}  // namespace scopedfs::daemon
