// Tells a service manager how the daemon is doing (sd_notify(3), for systemd's Type=notify):
// READY once the mount serves, RELOADING while a policy reload runs, STOPPING on the way out, and
// a one-line STATUS for `systemctl status`. Outside systemd (no NOTIFY_SOCKET) each call does
// nothing.
#ifndef SCOPEDFS_DAEMON_SERVICE_SERVICE_NOTIFY_H_
#define SCOPEDFS_DAEMON_SERVICE_SERVICE_NOTIFY_H_

#include "absl/strings/string_view.h"

namespace scopedfs::daemon {

void NotifyReady(absl::string_view status);
void NotifyReloading(absl::string_view status);
void NotifyStatus(absl::string_view status);
void NotifyStopping(absl::string_view status);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_SERVICE_NOTIFY_H_
