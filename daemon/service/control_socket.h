// The daemon's control socket: answers scopedfsctl's stats and reload requests. Only root may
// connect (checked with SO_PEERCRED); the socket file is created mode 0600.
#ifndef SCOPEDFS_DAEMON_SERVICE_CONTROL_SOCKET_H_
#define SCOPEDFS_DAEMON_SERVICE_CONTROL_SOCKET_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "proto/control.pb.h"

namespace scopedfs::daemon {

// Frames shared with scopedfsctl: 4-byte little-endian length, then the message.
inline constexpr uint32_t kMaxControlMessage = 1 << 20;

// Writes one frame. InvalidArgument if the message is larger than kMaxControlMessage (the peer
// would refuse it); a send error carries its errno's code.
absl::Status WriteFrame(int fd, const google::protobuf::Message& message);

// Reads one frame into `message`. Unavailable if the peer closed before a whole frame arrived
// (before the header or within the body); InvalidArgument if the length is over
// kMaxControlMessage (nothing more is read) or the body does not parse; a recv error (a timeout
// too) carries its errno's code.
absl::Status ReadFrame(int fd, google::protobuf::Message* message);

class ControlSocket {
 public:
  using Handler = std::function<ControlResponse(const ControlRequest&)>;

  // Binds `path` (replacing a socket file, a killed daemon's or one another process still
  // answers on, see took_over(); refusing any other kind of file) and serves
  // requests on a background thread until destroyed.
  static absl::StatusOr<std::unique_ptr<ControlSocket>> Start(const std::string& path,
                                                              Handler handler);
  // Removes the socket file, unless the name now refers to another server's.
  ~ControlSocket();

  // Whether a process still answered on `path` when this server replaced it: a daemon of the
  // same mount point still stopping, or (rarely) another mount point's of the same name.
  bool took_over() const { return took_over_; }

 private:
  ControlSocket(std::string path, base::UniqueFd listener, base::UniqueFd stop_read,
                base::UniqueFd stop_write, Handler handler)
      : path_(std::move(path)),
        listener_(std::move(listener)),
        stop_read_(std::move(stop_read)),
        stop_write_(std::move(stop_write)),
        handler_(std::move(handler)) {}
  void Serve();
  void Answer(int client);

  std::string path_;
  base::UniqueFd listener_;
  // A byte written to stop_write_ ends Serve(), which polls stop_read_ beside the listener.
  base::UniqueFd stop_read_;
  base::UniqueFd stop_write_;
  Handler handler_;
  std::thread thread_;
  bool took_over_ = false;
  std::optional<std::pair<dev_t, ino_t>> bound_;  // the socket file's device and inode
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_CONTROL_SOCKET_H_
