// UniqueFd: closes exactly once, moves ownership, and leaves errno alone on error paths.
#include "base/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "gtest/gtest.h"

namespace scopedfs::base {
namespace {

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

int OpenDevNull() { return open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(UniqueFdTest, DefaultHoldsNothing) {
  UniqueFd fd;
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.get(), -1);
}

TEST(UniqueFdTest, FailedOpenIsNotValid) {
  UniqueFd fd(open("/nonexistent/file", O_RDONLY | O_CLOEXEC));
  EXPECT_FALSE(fd.valid());
}

TEST(UniqueFdTest, ClosesWhenDestroyed) {
  int raw = OpenDevNull();
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, MoveConstructionTransfersOwnership) {
  int raw = OpenDevNull();
  ASSERT_GE(raw, 0);
  UniqueFd from(raw);
  {
    UniqueFd to(std::move(from));
    EXPECT_EQ(to.get(), raw);
    EXPECT_FALSE(
        from.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, MoveAssignmentClosesWhatWasHeld) {
  int first = OpenDevNull();
  int second = OpenDevNull();
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  UniqueFd fd(first);
  fd = UniqueFd(second);
  EXPECT_FALSE(IsOpen(first));
  EXPECT_TRUE(IsOpen(second));
  EXPECT_EQ(fd.get(), second);
}

TEST(UniqueFdTest, SelfMoveKeepsTheFd) {
  int raw = OpenDevNull();
  ASSERT_GE(raw, 0);
  UniqueFd fd(raw);
  UniqueFd& alias = fd;
  fd = std::move(alias);
  EXPECT_EQ(fd.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
}

TEST(UniqueFdTest, ReleaseDoesNotClose) {
  int raw = OpenDevNull();
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    EXPECT_EQ(fd.release(), raw);
    EXPECT_FALSE(fd.valid());
  }
  EXPECT_TRUE(IsOpen(raw));
  close(raw);
}

TEST(UniqueFdTest, ResetClosesAndKeepsErrno) {
  int raw = OpenDevNull();
  ASSERT_GE(raw, 0);
  UniqueFd fd(raw);
  errno = ENOSPC;
  fd.reset();
  EXPECT_EQ(errno, ENOSPC);
  EXPECT_FALSE(IsOpen(raw));
  EXPECT_FALSE(fd.valid());
}

TEST(UniqueFdTest, CloseReportsSuccessAndEmpties) {
  int raw = OpenDevNull();
  ASSERT_GE(raw, 0);
  UniqueFd fd(raw);
  EXPECT_EQ(fd.Close(), 0);
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(IsOpen(raw));
  EXPECT_EQ(fd.Close(), 0);  // nothing held: nothing to fail
}

TEST(UniqueFdTest, CloseReportsFailureWithErrno) {
  int raw = OpenDevNull();
  ASSERT_GE(raw, 0);
  ASSERT_EQ(close(raw), 0);  // the fd number is now stale: close(2) must fail with EBADF
  UniqueFd fd(raw);
  errno = 0;
  EXPECT_EQ(fd.Close(), -1);
  EXPECT_EQ(errno, EBADF);
  EXPECT_FALSE(fd.valid());
}

}  // namespace
}  // namespace scopedfs::base
