// CheckMountedFuseFd on fds that are not a live, unserved /dev/fuse mount: each refusal carries the
// code main.cc turns into its exit status (InvalidArgument: 64, FailedPrecondition: 71). A live
// mount needs root and is tests/vold_fd_mount_test.cc's subject. And --transport's names.
#include "daemon/kernel/fuse_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

TEST(CheckMountedFuseFdTest, NegativeFdIsInvalid) {
  EXPECT_EQ(CheckMountedFuseFd(-2).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckMountedFuseFdTest, ClosedFdIsInvalid) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(CheckMountedFuseFd(fds[0]).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckMountedFuseFdTest, PipeIsInvalid) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  EXPECT_EQ(CheckMountedFuseFd(fds[0]).code(), absl::StatusCode::kInvalidArgument);
  close(fds[0]);
  close(fds[1]);
}

TEST(CheckMountedFuseFdTest, CharacterDeviceOtherThanFuseIsInvalid) {
  int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(CheckMountedFuseFd(fd).code(), absl::StatusCode::kInvalidArgument);
  close(fd);
}

TEST(CheckMountedFuseFdTest, UnmountedDevFuseHasNoMount) {
  int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "needs /dev/fuse: " << strerror(errno);
  EXPECT_EQ(CheckMountedFuseFd(fd).code(), absl::StatusCode::kFailedPrecondition);
  close(fd);
}

TEST(CheckMountedFuseFdTest, DevFuseOpenReadOnlyIsInvalid) {
  int fd = open("/dev/fuse", O_RDONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "needs /dev/fuse: " << strerror(errno);
  EXPECT_EQ(CheckMountedFuseFd(fd).code(), absl::StatusCode::kInvalidArgument);
  close(fd);
}

TEST(TransportTest, NamesRoundTrip) {
  for (Transport t : {Transport::kAuto, Transport::kUring, Transport::kDev}) {
    EXPECT_EQ(ParseTransport(TransportName(t)), t);
  }
  EXPECT_FALSE(ParseTransport("io_uring").has_value());
  EXPECT_FALSE(ParseTransport("").has_value());
}

}  // namespace
}  // namespace scopedfs::daemon
