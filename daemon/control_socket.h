// The daemon's control socket: answers scopedfsctl's stats and reload requests. Only root may
// connect (checked with SO_PEERCRED); the socket file is created mode 0600.
#ifndef SCOPEDFS_DAEMON_CONTROL_SOCKET_H_
#define SCOPEDFS_DAEMON_CONTROL_SOCKET_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/control.pb.h"

namespace scopedfs::daemon {

// Frames shared with scopedfsctl: 4-byte little-endian length, then the message.
inline constexpr uint32_t kMaxControlMessage = 1 << 20;
absl::Status WriteFrame(int fd, const google::protobuf::Message& message);
absl::Status ReadFrame(int fd, google::protobuf::Message* message);

class ControlSocket {
 public:
  using Handler = std::function<ControlResponse(const ControlRequest&)>;

  // Binds `path` (replacing a stale socket file, refusing any other kind of file) and serves
  // requests on a background thread until destroyed.
  static absl::StatusOr<std::unique_ptr<ControlSocket>> Start(const std::string& path,
                                                              Handler handler);
  ~ControlSocket();

 private:
  ControlSocket(std::string path, int fd, Handler handler)
      : path_(std::move(path)), fd_(fd), handler_(std::move(handler)) {}
  void Serve();

  std::string path_;
  int fd_;
  int stop_pipe_[2] = {-1, -1};
  Handler handler_;
  std::thread thread_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_CONTROL_SOCKET_H_
