// Control socket server (see control_socket.h).
#include "daemon/control_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace scopedfs::daemon {
namespace {

absl::Status ErrnoStatus(absl::string_view what) {
  int err = errno;
  return absl::ErrnoToStatus(err, absl::StrCat(what, ": ", std::strerror(err)));
}

bool WriteAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t len) {
  while (len > 0) {
    ssize_t n = recv(fd, data, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

absl::Status WriteFrame(int fd, const google::protobuf::Message& message) {
  std::string body;
  if (!message.SerializeToString(&body)) return absl::InternalError("cannot serialize");
  uint32_t len = static_cast<uint32_t>(body.size());
  char header[4] = {static_cast<char>(len), static_cast<char>(len >> 8),
                    static_cast<char>(len >> 16), static_cast<char>(len >> 24)};
  if (!WriteAll(fd, header, 4) || !WriteAll(fd, body.data(), body.size())) {
    return ErrnoStatus("control socket write");
  }
  return absl::OkStatus();
}

absl::Status ReadFrame(int fd, google::protobuf::Message* message) {
  unsigned char header[4];
  if (!ReadAll(fd, reinterpret_cast<char*>(header), 4)) {
    return absl::UnavailableError("control socket closed before a reply");
  }
  uint32_t len = header[0] | header[1] << 8 | header[2] << 16 | uint32_t{header[3]} << 24;
  if (len > kMaxControlMessage) return absl::InvalidArgumentError("control message too large");
  std::string body(len, '\0');
  if (!ReadAll(fd, body.data(), len)) return absl::UnavailableError("control message truncated");
  if (!message->ParseFromString(body)) return absl::InvalidArgumentError("bad control message");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ControlSocket>> ControlSocket::Start(const std::string& path,
                                                                    Handler handler) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("control socket path too long: ", path));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("control socket path ", path, " exists and is not a socket"));
    }
    unlink(path.c_str());  // stale socket of a previous run
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoStatus("socket");
  mode_t old_mask = umask(0177);  // the socket file is born 0600
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  umask(old_mask);
  if (rc != 0 || listen(fd, 16) != 0) {
    absl::Status s = ErrnoStatus(absl::StrCat("bind ", path));
    close(fd);
    return s;
  }
  std::unique_ptr<ControlSocket> socket(new ControlSocket(path, fd, std::move(handler)));
  if (pipe2(socket->stop_pipe_, O_CLOEXEC) != 0) return ErrnoStatus("pipe");
  socket->thread_ = std::thread([s = socket.get()] { s->Serve(); });
  return socket;
}

ControlSocket::~ControlSocket() {
  if (stop_pipe_[1] >= 0) {
    char byte = 0;
    (void)!write(stop_pipe_[1], &byte, 1);
  }
  if (thread_.joinable()) thread_.join();
  close(fd_);
  for (int p : stop_pipe_) {
    if (p >= 0) close(p);
  }
  unlink(path_.c_str());
}

void ControlSocket::Serve() {
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    // A stuck client must not wedge the control thread.
    timeval timeout = {5, 0};
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    ControlResponse response;
    ucred cred = {};
    socklen_t len = sizeof(cred);
    if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != 0) {
      response.set_error("permission denied: only root may use the control socket");
    } else {
      ControlRequest request;
      absl::Status read = ReadFrame(client, &request);
      if (!read.ok()) {
        response.set_error(std::string(read.message()));
      } else {
        response = handler_(request);
      }
    }
    WriteFrame(client, response).IgnoreError();
    close(client);
  }
}

}  // namespace scopedfs::daemon
