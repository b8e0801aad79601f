// What the daemon answers on its control socket (control_socket.h carries the frames), and a
// reload as a service manager expects one, shared by the control socket, SIGHUP and the config
// watch.
#ifndef SCOPEDFS_DAEMON_SERVICE_CONTROL_HANDLERS_H_
#define SCOPEDFS_DAEMON_SERVICE_CONTROL_HANDLERS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/ops/filesystem.h"
#include "daemon/service/config_reloader.h"
#include "policy/config.h"
#include "proto/control.pb.h"

namespace scopedfs::daemon {

// A reload as systemd's Type=notify expects one: RELOADING, then READY with what is served now
// (the old policy, when the reload was rejected). `files`, `why`: ConfigReloader::Reload's.
absl::StatusOr<std::string> ReloadNotified(ConfigReloader* reloader,
                                           const policy::ConfigPaths& files, absl::string_view why);

// One control request: stats read the live counters; a reload goes through the one reloader (a
// bad reload keeps the old policy); explain decides with the live policy and the lower file's
// facts (live_explain.h).
ControlResponse HandleControl(const ControlRequest& request, Filesystem* fs,
                              ConfigReloader* reloader);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_CONTROL_HANDLERS_H_
