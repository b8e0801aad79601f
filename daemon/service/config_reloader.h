// Loads the policy, the app registry and packages.list again and swaps the new engine in only if
// all of them load: a bad reload keeps the policy in force. The control socket's `reload`, SIGHUP
// and the file watch (config_watch.h) all reload through one ConfigReloader, which runs one reload
// at a time, so two triggers never interleave their loads and swaps.
#ifndef SCOPEDFS_DAEMON_SERVICE_CONFIG_RELOADER_H_
#define SCOPEDFS_DAEMON_SERVICE_CONFIG_RELOADER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "policy/config.h"
#include "policy/engine.h"

namespace scopedfs::daemon {

class ConfigReloader {
 public:
  // Puts an engine in force (the daemon's is Filesystem::SetEngine, which must not run on a FUSE
  // worker thread: neither may Reload). Called with reload_mu_ held, so installs are in order. An
  // error refuses the engine (the reload is rejected and the engine in force stays).
  using Install = std::function<absl::Status(std::shared_ptr<const policy::Engine>)>;
  // Where lines about reloads go (the daemon: stderr); may be empty.
  using Log = std::function<void(absl::string_view line)>;

  ConfigReloader(policy::ConfigPaths started_with, Install install, Log log = nullptr)
      : started_with_(std::move(started_with)),
        install_(std::move(install)),
        log_(std::move(log)) {}

  // Loads `files` (an empty field: the file the daemon was started with) and installs the result.
  // Returns the success message, `reloaded policy "android" (28 rules, 9 apps)`, or
  // InvalidArgument (NotFound, ... when a file cannot be read) listing every problem as
  // file:line:col, in which case the engine in force is kept. `trigger` says what asked ("SIGHUP",
  // "control socket", "change of /etc/apps.textproto") and is logged with the outcome.
  absl::StatusOr<std::string> Reload(const policy::ConfigPaths& files, absl::string_view trigger)
      ABSL_LOCKS_EXCLUDED(reload_mu_);

  const policy::ConfigPaths& started_with() const { return started_with_; }
  // Reloads that installed an engine, and reloads that were rejected.
  uint64_t reloads() const ABSL_LOCKS_EXCLUDED(reload_mu_);
  uint64_t rejected() const ABSL_LOCKS_EXCLUDED(reload_mu_);

 private:
  const policy::ConfigPaths started_with_;
  const Install install_;
  const Log log_;
  mutable absl::Mutex reload_mu_;  // a leaf apart from what install_ takes
  uint64_t reloads_ ABSL_GUARDED_BY(reload_mu_) = 0;
  uint64_t rejected_ ABSL_GUARDED_BY(reload_mu_) = 0;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_CONFIG_RELOADER_H_
