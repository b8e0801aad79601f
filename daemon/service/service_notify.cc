// sd_notify(3) messages for Type=notify (see service_notify.h).
#include "daemon/service/service_notify.h"

#include <systemd/sd-daemon.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace scopedfs::daemon {
namespace {

void Notify(absl::string_view state, absl::string_view status) {
  // A STATUS value ends at the line's end: a multi-line message is folded into one.
  std::string line = absl::StrReplaceAll(status, {{"\n", "; "}});
  std::string message = absl::StrCat(state, state.empty() ? "" : "\n", "STATUS=", line);
  (void)sd_notify(0, message.c_str());
}

}  // namespace

void NotifyReady(absl::string_view status) { Notify("READY=1", status); }
void NotifyReloading(absl::string_view status) { Notify("RELOADING=1", status); }
void NotifyStatus(absl::string_view status) { Notify("", status); }
void NotifyStopping(absl::string_view status) { Notify("STOPPING=1", status); }

}  // namespace scopedfs::daemon
