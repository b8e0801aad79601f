// Where a daemon's control socket and pid file are when no flag names them, so that the daemon,
// the mount helper, the systemd unit and scopedfsctl agree without being told: both live in
// /run/scopedfs and are named after the mount point (/storage/emulated/0 gives
// storage-emulated-0.sock and storage-emulated-0.pid). The CLI derives the same names from
// `--mount=DIR`, or finds the one daemon that answers there.
#ifndef SCOPEDFS_DAEMON_SERVICE_CONTROL_PATHS_H_
#define SCOPEDFS_DAEMON_SERVICE_CONTROL_PATHS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopedfs::daemon {

inline constexpr char kRunDir[] = "/run/scopedfs";

// The file name stem for a mount point: the path without its leading '/', every byte other than
// a letter, digit, '.' or '_' turned into '-' ("-" for "/"). A stem that would make the socket's
// path longer than a unix socket address holds is cut and ends in 16 hex digits of a hash (FNV-1a
// of the whole mount point), so two long mount points still get two names.
std::string MountPointStem(absl::string_view mountpoint);
// kRunDir/<stem>.sock and kRunDir/<stem>.pid.
std::string DefaultControlSocket(absl::string_view mountpoint);
std::string DefaultPidFile(absl::string_view mountpoint);

// What the daemon's --control_socket and --pid_file flags come to.
struct ControlPaths {
  std::string socket;    // "" for none
  std::string pid_file;  // "" for none
};
// `socket_flag`: "" for the default (DefaultControlSocket of `mountpoint`), "none", or a path.
// `pid_flag`: "" for the default (DefaultPidFile beside a default socket, none beside a socket
// the flag names), "none", or a path. Without a mount point ("" : an adopted fd that no
// --mountpoint names) the defaults are none. Creates kRunDir (mode 0755) when a default uses it.
absl::StatusOr<ControlPaths> ResolveControlPaths(absl::string_view socket_flag,
                                                 absl::string_view pid_flag,
                                                 absl::string_view mountpoint);

// Writes "<pid>\n" to `path` (mode 0644, replacing a stale file of a killed run).
absl::Status WritePidFile(const std::string& path);
// Removes `path` if it still holds this process's pid: a daemon stopping after an unmount must not
// remove the file its successor on the same mount point wrote.
void RemovePidFile(const std::string& path);

// The sockets in `dir` (kRunDir) that a process accepts connections on: a daemon that is gone
// leaves its socket file, which refuses them. Sorted; at most `limit` are tried.
std::vector<std::string> LiveControlSockets(const std::string& dir, size_t limit = 256);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_CONTROL_PATHS_H_
