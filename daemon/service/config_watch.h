// What makes the daemon reload without a command: SIGHUP, and changes to its configuration files
// (the policy, the app registry, packages.list), seen with inotify. Neither reloads in the signal
// handler or on a FUSE worker thread: the handler only writes a byte to a pipe, and one thread of
// this class waits on that pipe and the inotify fd and calls the trigger.
//
// The watch is on each file's directory, not the file: editors and package managers replace a
// file by renaming a new one over it (a watch on the old inode would see nothing after that), and
// a file that is deleted and created again is seen too. Only IN_CLOSE_WRITE, IN_MOVED_TO,
// IN_MOVED_FROM, IN_CREATE and IN_DELETE of the watched names count; IN_MODIFY does not, so a
// file is never loaded half-written by a writer that writes in place. Events are debounced: the
// trigger runs once `debounce` has passed without another event (at most `max_delay` after the
// first), so a burst of writes costs one reload. A configured path that is a symlink is watched
// where the link is, not where it points.
#ifndef SCOPEDFS_DAEMON_SERVICE_CONFIG_WATCH_H_
#define SCOPEDFS_DAEMON_SERVICE_CONFIG_WATCH_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"

namespace scopedfs::daemon {

class ConfigWatch {
 public:
  struct Options {
    // Files whose changes trigger a reload (empty entries are ignored).
    std::vector<std::string> files;
    bool watch_files = true;
    // Reload on SIGHUP. Only one ConfigWatch in a process may handle it.
    bool sighup = true;
    absl::Duration debounce = absl::Milliseconds(200);
    absl::Duration max_delay = absl::Seconds(2);
  };
  // Called on the watch's own thread with what happened ("SIGHUP", "change of /x/apps.textproto").
  using Trigger = std::function<void(const std::string& why)>;
  // Lines about the watch itself (a watched directory went away); may be empty.
  using Log = std::function<void(const std::string& line)>;

  // Installs the SIGHUP handler (replacing any other) and starts the thread. Fails if a file's
  // directory cannot be watched.
  static absl::StatusOr<std::unique_ptr<ConfigWatch>> Start(Options options, Trigger trigger,
                                                            Log log = nullptr);
  // Stops the thread and gives SIGHUP its default disposition back.
  ~ConfigWatch();

 private:
  ConfigWatch(Options options, Trigger trigger, Log log)
      : options_(std::move(options)), trigger_(std::move(trigger)), log_(std::move(log)) {}
  void Serve();
  // Reads the inotify events at hand; true if one concerns a watched file (*why says which).
  bool Drain(std::string* why);

  Options options_;
  Trigger trigger_;
  Log log_;
  base::UniqueFd inotify_;
  // Watch descriptor -> directory, and directory -> the watched names in it.
  std::map<int, std::string> dirs_;
  std::map<std::string, std::set<std::string>> names_;
  base::UniqueFd sighup_read_;
  base::UniqueFd sighup_write_;
  base::UniqueFd stop_read_;
  base::UniqueFd stop_write_;
  std::thread thread_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_CONFIG_WATCH_H_
