// Config watch (see config_watch.h).
#include "daemon/service/config_watch.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/signals.h"

namespace scopedfs::daemon {
namespace {

// The write end of the SIGHUP pipe, for the handler (which may only make async-signal-safe calls).
std::atomic<int> g_sighup_fd{-1};

void OnSighup(int) {
  int saved = errno;
  int fd = g_sighup_fd.load(std::memory_order_relaxed);
  char byte = 1;
  if (fd >= 0) (void)!write(fd, &byte, 1);  // pipe full: a reload is already pending
  errno = saved;
}

constexpr uint32_t kDirEvents =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ONLYDIR;

void SplitPath(const std::string& path, std::string* dir, std::string* name) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    *dir = ".";
    *name = path;
  } else {
    *dir = slash == 0 ? "/" : path.substr(0, slash);
    *name = path.substr(slash + 1);
  }
}

absl::Status Pipe(base::UniqueFd* read_end, base::UniqueFd* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return absl::ErrnoToStatus(errno, "pipe2");
  read_end->reset(fds[0]);
  write_end->reset(fds[1]);
  return absl::OkStatus();
}

void DrainPipe(int fd) {
  char buf[64];
  while (read(fd, buf, sizeof(buf)) > 0) {
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ConfigWatch>> ConfigWatch::Start(Options options, Trigger trigger,
                                                                Log log) {
  std::unique_ptr<ConfigWatch> watch(
      new ConfigWatch(std::move(options), std::move(trigger), std::move(log)));
  if (absl::Status s = Pipe(&watch->stop_read_, &watch->stop_write_); !s.ok()) return s;
  if (watch->options_.watch_files) {
    watch->inotify_.reset(inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    if (!watch->inotify_.valid()) return absl::ErrnoToStatus(errno, "inotify_init1");
    for (const std::string& file : watch->options_.files) {
      if (file.empty()) continue;
      std::string dir, name;
      SplitPath(file, &dir, &name);
      if (name.empty()) return absl::InvalidArgumentError(absl::StrCat("not a file: ", file));
      int wd = inotify_add_watch(watch->inotify_.get(), dir.c_str(), kDirEvents);
      if (wd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot watch ", dir));
      watch->dirs_[wd] = dir;
      watch->names_[dir].insert(name);
    }
  }
  if (watch->options_.sighup) {
    if (absl::Status s = Pipe(&watch->sighup_read_, &watch->sighup_write_); !s.ok()) return s;
    g_sighup_fd.store(watch->sighup_write_.get());
    struct sigaction sa = {};
    sa.sa_handler = OnSighup;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGHUP, &sa, nullptr) != 0) {
      g_sighup_fd.store(-1);
      return absl::ErrnoToStatus(errno, "sigaction SIGHUP");
    }
  }
  base::NoTerminationSignals no_signals;  // base/signals.h
  watch->thread_ = std::thread([w = watch.get()] { w->Serve(); });
  return watch;
}

ConfigWatch::~ConfigWatch() {
  if (options_.sighup) {
    struct sigaction sa = {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, nullptr);
    g_sighup_fd.store(-1);
  }
  char byte = 0;
  (void)!write(stop_write_.get(), &byte, 1);
  if (thread_.joinable()) thread_.join();
}

bool ConfigWatch::Drain(std::string* why) {
  // Big enough for many events with the longest names; the fd is non-blocking.
  alignas(inotify_event) char buf[16 * (sizeof(inotify_event) + NAME_MAX + 1)];
  bool relevant = false;
  for (;;) {
    ssize_t n = read(inotify_.get(), buf, sizeof(buf));
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + event->len;
      if (event->mask & IN_Q_OVERFLOW) {
        // Events were lost: any of them may have been ours.
        relevant = true;
        *why = "changes (inotify queue overflowed)";
        continue;
      }
      auto dir = dirs_.find(event->wd);
      if (dir == dirs_.end()) continue;
      if (event->mask & IN_IGNORED) {
        if (log_) {
          log_(absl::StrCat("no longer watching ", dir->second,
                            " (removed or unmounted); SIGHUP and `scopedfsctl reload` still work"));
        }
        names_.erase(dir->second);
        dirs_.erase(dir);
        continue;
      }
      if (event->len == 0) continue;
      std::string name(event->name);  // NUL-padded to len
      const std::set<std::string>& watched = names_[dir->second];
      if (watched.count(name) == 0) continue;
      relevant = true;
      *why = absl::StrCat("change of ", dir->second == "/" ? "" : dir->second, "/", name);
    }
  }
  return relevant;
}

void ConfigWatch::Serve() {
  pthread_setname_np(pthread_self(), "sfs-watch");  // named for ps -T and the tests
  bool pending = false;
  std::string why;
  absl::Time first = absl::InfinitePast();
  absl::Time last = absl::InfinitePast();
  for (;;) {
    pollfd fds[3] = {{stop_read_.get(), POLLIN, 0},
                     {sighup_read_.valid() ? sighup_read_.get() : -1, POLLIN, 0},
                     {inotify_.valid() ? inotify_.get() : -1, POLLIN, 0}};
    int timeout_ms = -1;
    if (pending) {
      absl::Time due = std::min(last + options_.debounce, first + options_.max_delay);
      timeout_ms = static_cast<int>(std::max<int64_t>(
          0, absl::ToInt64Milliseconds(absl::Ceil(due - absl::Now(), absl::Milliseconds(1)))));
    }
    int rc = poll(fds, 3, timeout_ms);
    if (rc < 0 && errno != EINTR) return;
    if (rc > 0 && fds[0].revents != 0) return;
    if (rc > 0 && (fds[1].revents & POLLIN)) {
      DrainPipe(sighup_read_.get());
      // The reload reads every file, so it also covers any change still being debounced.
      pending = false;
      trigger_("SIGHUP");
    }
    if (rc > 0 && (fds[2].revents & POLLIN)) {
      std::string changed;
      if (Drain(&changed)) {
        absl::Time now = absl::Now();
        if (!pending) first = now;
        pending = true;
        last = now;
        why = changed;
      }
    }
    if (pending) {
      absl::Time now = absl::Now();
      if (now >= last + options_.debounce || now >= first + options_.max_delay) {
        pending = false;
        trigger_(why);
      }
    }
  }
}

}  // namespace scopedfs::daemon
