// Control framing over a socketpair (round trip, short reads, oversized, truncated and garbled
// frames, a peer that closes) and the server's file handling. Needs no root: the one test that
// talks to the server expects the answer its own uid gets.
#include "daemon/service/control_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "proto/control.pb.h"

namespace scopedfs::daemon {
namespace {

using base::UniqueFd;

struct Pair {
  UniqueFd a;
  UniqueFd b;
};

Pair SocketPair() {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0) << std::strerror(errno);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void SendRaw(int fd, const std::string& bytes) {
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

std::string Header(uint32_t len) {
  return std::string{static_cast<char>(len), static_cast<char>(len >> 8),
                     static_cast<char>(len >> 16), static_cast<char>(len >> 24)};
}

ControlRequest Reload(std::string policy) {
  ControlRequest request;
  request.mutable_reload()->set_policy(std::move(policy));
  return request;
}

TEST(ControlFrameTest, RoundTrip) {
  Pair p = SocketPair();
  ControlRequest sent = Reload("policy/configs/android.textproto");
  ASSERT_TRUE(WriteFrame(p.a.get(), sent).ok());
  ControlRequest got;
  ASSERT_TRUE(ReadFrame(p.b.get(), &got).ok());
  EXPECT_EQ(got.reload().policy(), "policy/configs/android.textproto");
}

TEST(ControlFrameTest, EmptyMessageRoundTrips) {
  Pair p = SocketPair();
  ControlResponse sent;  // serializes to zero bytes: a bare header
  ASSERT_TRUE(WriteFrame(p.a.get(), sent).ok());
  ControlResponse got;
  got.set_error("stale");
  ASSERT_TRUE(ReadFrame(p.b.get(), &got).ok());
  EXPECT_TRUE(got.error().empty());
}

// A frame that arrives a byte at a time, header included, is still read whole.
TEST(ControlFrameTest, ShortReadsAreJoined) {
  Pair p = SocketPair();
  std::string body;
  ASSERT_TRUE(Reload("a/policy.textproto").SerializeToString(&body));
  std::string frame = Header(static_cast<uint32_t>(body.size())) + body;
  std::thread writer([&] {
    for (char c : frame) {
      SendRaw(p.a.get(), std::string(1, c));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  ControlRequest got;
  absl::Status status = ReadFrame(p.b.get(), &got);
  writer.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(got.reload().policy(), "a/policy.textproto");
}

// Larger than a socket buffer: the writer blocks until the reader drains it, many recvs later.
TEST(ControlFrameTest, LargeFrameUnderTheLimitRoundTrips) {
  Pair p = SocketPair();
  std::string big(kMaxControlMessage / 2, 'x');
  absl::Status written;
  std::thread writer([&] { written = WriteFrame(p.a.get(), Reload(big)); });
  ControlRequest got;
  absl::Status status = ReadFrame(p.b.get(), &got);
  writer.join();
  ASSERT_TRUE(written.ok()) << written;
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(got.reload().policy(), big);
}

TEST(ControlFrameTest, OversizedFrameIsRejectedBeforeItsBody) {
  Pair p = SocketPair();
  SendRaw(p.a.get(), Header(kMaxControlMessage + 1));
  ControlRequest got;
  EXPECT_EQ(ReadFrame(p.b.get(), &got).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ControlFrameTest, OversizedMessageIsNotWritten) {
  Pair p = SocketPair();
  EXPECT_EQ(WriteFrame(p.a.get(), Reload(std::string(kMaxControlMessage, 'x'))).code(),
            absl::StatusCode::kInvalidArgument);
  p.a.reset();
  ControlRequest got;  // nothing was sent: the reader sees a clean close
  EXPECT_EQ(ReadFrame(p.b.get(), &got).code(), absl::StatusCode::kUnavailable);
}

TEST(ControlFrameTest, TruncatedBodyIsUnavailable) {
  Pair p = SocketPair();
  SendRaw(p.a.get(), Header(100) + std::string(10, '\0'));
  p.a.reset();
  ControlRequest got;
  EXPECT_EQ(ReadFrame(p.b.get(), &got).code(), absl::StatusCode::kUnavailable);
}

TEST(ControlFrameTest, TruncatedHeaderIsUnavailable) {
  Pair p = SocketPair();
  SendRaw(p.a.get(), std::string(2, '\x01'));
  p.a.reset();
  ControlRequest got;
  EXPECT_EQ(ReadFrame(p.b.get(), &got).code(), absl::StatusCode::kUnavailable);
}

TEST(ControlFrameTest, PeerClosingBeforeAnythingIsUnavailable) {
  Pair p = SocketPair();
  p.a.reset();
  ControlRequest got;
  EXPECT_EQ(ReadFrame(p.b.get(), &got).code(), absl::StatusCode::kUnavailable);
}

TEST(ControlFrameTest, UnparsableBodyIsInvalidArgument) {
  Pair p = SocketPair();
  SendRaw(p.a.get(), Header(3) + "\xff\xff\xff");  // a tag varint that never ends
  ControlRequest got;
  EXPECT_EQ(ReadFrame(p.b.get(), &got).code(), absl::StatusCode::kInvalidArgument);
}

// MSG_NOSIGNAL: a peer gone away is an error status, not a SIGPIPE that kills the daemon.
TEST(ControlFrameTest, WritingToAClosedPeerIsAnErrnoStatus) {
  Pair p = SocketPair();
  p.b.reset();
  absl::Status status = WriteFrame(p.a.get(), Reload("x"));
  EXPECT_EQ(status.code(), absl::ErrnoToStatusCode(EPIPE)) << status;
}

// Bazel's TEST_TMPDIR is too long for sockaddr_un's 108 bytes: sockets go in a short /tmp dir.
class ControlSocketTest : public testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/scopedfs-ctl-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr) << std::strerror(errno);
    dir_ = dir;
  }
  void TearDown() override {
    for (const char* name : {"/regular_file", "/ctl", "/stale", "/taken"})
      unlink((dir_ + name).c_str());
    rmdir(dir_.c_str());
  }
  std::string SocketPath(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

void Bind(int fd, const std::string& path) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
}

void Connect(int fd, const std::string& path) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
      << std::strerror(errno);
}

ControlResponse Handled(const ControlRequest&) {
  ControlResponse response;
  response.set_message("handled");
  return response;
}

TEST_F(ControlSocketTest, RefusesAPathThatIsNotASocket) {
  std::string path = SocketPath("regular_file");
  ASSERT_TRUE(UniqueFd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)).valid());
  EXPECT_EQ(ControlSocket::Start(path, Handled).status().code(),
            absl::StatusCode::kFailedPrecondition);
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));  // left alone
}

TEST_F(ControlSocketTest, RefusesAPathTooLongForSockaddr) {
  EXPECT_EQ(ControlSocket::Start("/tmp/" + std::string(sizeof(sockaddr_un::sun_path), 'x'), Handled)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// The socket is born 0600 and the file goes with the server, so a second one can start after it.
// Root gets the handler's answer; anyone else the permission error (SO_PEERCRED).
TEST_F(ControlSocketTest, ServesOneRequestPerConnection) {
  std::string path = SocketPath("ctl");
  for (int run = 0; run < 2; ++run) {  // a second server on the same path after the first
    absl::StatusOr<std::unique_ptr<ControlSocket>> server = ControlSocket::Start(path, Handled);
    ASSERT_TRUE(server.ok()) << server.status();
    struct stat st;
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);

    UniqueFd client(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(client.valid());
    ASSERT_NO_FATAL_FAILURE(Connect(client.get(), path));
    ControlRequest request;
    request.mutable_stats();
    ASSERT_TRUE(WriteFrame(client.get(), request).ok());
    ControlResponse response;
    absl::Status read = ReadFrame(client.get(), &response);
    ASSERT_TRUE(read.ok()) << read;
    if (geteuid() == 0) {
      EXPECT_EQ(response.message(), "handled");
      EXPECT_TRUE(response.error().empty());
    } else {
      EXPECT_FALSE(response.error().empty());
      EXPECT_TRUE(response.message().empty());
    }
    server->reset();
    EXPECT_NE(lstat(path.c_str(), &st), 0);
  }
}

// A socket file left by a crashed daemon (nothing listening) is replaced, not an error.
TEST_F(ControlSocketTest, ReplacesAStaleSocketFile) {
  std::string path = SocketPath("stale");
  {
    UniqueFd stale(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_NO_FATAL_FAILURE(Bind(stale.get(), path));
  }
  absl::StatusOr<std::unique_ptr<ControlSocket>> server = ControlSocket::Start(path, Handled);
  EXPECT_TRUE(server.ok()) << server.status();
}

// A socket another server still answers on (a daemon of the same mount point still stopping
// after an unmount) is taken over, and says so; when that server goes, it leaves the file of the
// one that took over, which keeps answering.
TEST_F(ControlSocketTest, TakesOverASocketAndTheOldServerLeavesItAlone) {
  std::string path = SocketPath("taken");
  absl::StatusOr<std::unique_ptr<ControlSocket>> first = ControlSocket::Start(path, Handled);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE((*first)->took_over());
  absl::StatusOr<std::unique_ptr<ControlSocket>> second = ControlSocket::Start(path, Handled);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE((*second)->took_over());
  first->reset();
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0) << "the first removed the second's socket";
  UniqueFd client(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_NO_FATAL_FAILURE(Connect(client.get(), path));
  ControlRequest request;
  request.mutable_stats();
  ASSERT_TRUE(WriteFrame(client.get(), request).ok());
  ControlResponse response;
  EXPECT_TRUE(ReadFrame(client.get(), &response).ok()) << "the second answers";
  second->reset();
  EXPECT_NE(lstat(path.c_str(), &st), 0) << "the second removes its own";
}

}  // namespace
}  // namespace scopedfs::daemon
