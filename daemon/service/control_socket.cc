// Control socket server (see control_socket.h).
#include "daemon/service/control_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/signals.h"

namespace scopedfs::daemon {
namespace {

// ErrnoToStatus appends strerror itself: `what` names only the operation.
absl::Status ErrnoStatus(absl::string_view what) { return absl::ErrnoToStatus(errno, what); }

absl::Status WriteAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("control socket send");
    data += n;
    len -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// `closed` is the error for a peer that closes before `len` bytes arrived.
absl::Status ReadAll(int fd, char* data, size_t len, absl::string_view closed) {
  while (len > 0) {
    ssize_t n = recv(fd, data, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("control socket recv");
    if (n == 0) return absl::UnavailableError(closed);
    data += n;
    len -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFrame(int fd, const google::protobuf::Message& message) {
  std::string body;
  if (!message.SerializeToString(&body)) return absl::InternalError("cannot serialize");
  if (body.size() > kMaxControlMessage) {
    return absl::InvalidArgumentError(
        absl::StrCat("control message of ", body.size(), " bytes is over ", kMaxControlMessage));
  }
  uint32_t len = static_cast<uint32_t>(body.size());
  char header[4] = {static_cast<char>(len), static_cast<char>(len >> 8),
                    static_cast<char>(len >> 16), static_cast<char>(len >> 24)};
  // One buffer, one send in the common case: a peer never sees a header without its body.
  std::string frame(header, sizeof(header));
  frame += body;
  return WriteAll(fd, frame.data(), frame.size());
}

absl::Status ReadFrame(int fd, google::protobuf::Message* message) {
  unsigned char header[4];
  absl::Status status = ReadAll(fd, reinterpret_cast<char*>(header), sizeof(header),
                                "control socket closed before a message");
  if (!status.ok()) return status;
  uint32_t len = header[0] | header[1] << 8 | header[2] << 16 | uint32_t{header[3]} << 24;
  if (len > kMaxControlMessage) {
    return absl::InvalidArgumentError(
        absl::StrCat("control message of ", len, " bytes is over ", kMaxControlMessage));
  }
  std::string body(len, '\0');
  status = ReadAll(fd, body.data(), len, "control message truncated");
  if (!status.ok()) return status;
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
  bool took_over = false;
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("control socket path ", path, " exists and is not a socket"));
    }
    // A socket someone still answers on is usually a daemon of the same mount point that is
    // still stopping after an unmount (`umount DIR && mount DIR`): this daemon serves the mount
    // now, so it takes the name over, and the caller logs that it did. That daemon, when it goes,
    // leaves the file alone (the destructor removes only its own).
    base::UniqueFd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    took_over = probe.valid() &&
                connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    unlink(path.c_str());  // a killed daemon's, or one stopping
  }
  base::UniqueFd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid()) return ErrnoStatus("socket");
  mode_t old_mask = umask(0177);  // the socket file is born 0600
  int rc = bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  umask(old_mask);
  if (rc != 0) return ErrnoStatus(absl::StrCat("bind ", path));
  if (listen(listener.get(), 16) != 0) {
    absl::Status status = ErrnoStatus(absl::StrCat("listen ", path));
    unlink(path.c_str());
    return status;
  }
  int stop[2];
  if (pipe2(stop, O_CLOEXEC) != 0) {
    absl::Status status = ErrnoStatus("pipe2");
    unlink(path.c_str());
    return status;
  }
  std::unique_ptr<ControlSocket> socket(
      new ControlSocket(path, std::move(listener), base::UniqueFd(stop[0]), base::UniqueFd(stop[1]),
                        std::move(handler)));
  socket->took_over_ = took_over;
  // The file this server made: the destructor removes it only while the name still refers to it.
  if (lstat(path.c_str(), &st) == 0) socket->bound_ = {st.st_dev, st.st_ino};
  base::NoTerminationSignals no_signals;  // base/signals.h
  socket->thread_ = std::thread([s = socket.get()] { s->Serve(); });
  return socket;
}

ControlSocket::~ControlSocket() {
  char byte = 0;
  (void)!write(stop_write_.get(), &byte, 1);
  if (thread_.joinable()) thread_.join();
  struct stat st;
  if (lstat(path_.c_str(), &st) == 0 && bound_.has_value() &&
      std::make_pair(st.st_dev, st.st_ino) == *bound_) {
    unlink(path_.c_str());
  }
}

void ControlSocket::Serve() {
  pthread_setname_np(pthread_self(), "sfs-control");  // named for ps -T and the tests
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    base::UniqueFd client(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (client.valid()) Answer(client.get());
  }
}

void ControlSocket::Answer(int client) {
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
}

}  // namespace scopedfs::daemon
