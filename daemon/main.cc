// scopedfsd: mounts a lower directory (Android's /data/media/<user>) at a mount point
// (/storage/emulated/<user>), or serves a /dev/fuse fd its parent mounted (--fuse_fd, vold's way),
// and enforces a per-app policy on every request. Stays in the foreground until unmounted or
// stopped by SIGTERM/SIGINT, then unmounts (its own mount only) and exits 0. SIGHUP,
// `scopedfsctl reload` and changes to the configuration files reload the policy. Exit codes
// (base/cli.h): 64 a bad command line, 78 an invalid configuration, 71 nothing to mount or no
// mount, 1 an error while serving; a service manager restarts only the last two.
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/cli.h"
#include "daemon/kernel/fuse_session.h"
#include "daemon/kernel/mount_point.h"
#include "daemon/observe/audit_log.h"
#include "daemon/observe/stats.h"
#include "daemon/ops/filesystem.h"
#include "daemon/service/config_reloader.h"
#include "daemon/service/config_watch.h"
#include "daemon/service/control_handlers.h"
#include "daemon/service/control_paths.h"
#include "daemon/service/control_socket.h"
#include "daemon/service/service_notify.h"
#include "daemon/service/stop_signals.h"
#include "daemon/tables/file_locks.h"
#include "policy/config.h"
#include "policy/engine.h"
#include "policy/selinux_context.h"

ABSL_FLAG(std::string, source, "", "Lower directory to serve (e.g. /data/media/0). Required.");
ABSL_FLAG(std::string, mountpoint, "",
          "Where to mount (e.g. /storage/emulated/0). Required, except with --fuse_fd, where it "
          "only names the mount in messages.");
ABSL_FLAG(int, fuse_fd, -1,
          "Serve this inherited /dev/fuse fd, which the parent has already mounted (as vold "
          "mounts /mnt/user/<user>/emulated), instead of mounting: the daemon then neither mounts "
          "nor unmounts. Needs a policy of ANDROID semantics (the mount has no "
          "default_permissions). -1: mount --mountpoint itself.");
ABSL_FLAG(std::string, policy, "", "Policy file (text scopedfs.Policy). Required.");
ABSL_FLAG(std::string, apps, "", "App registry (text scopedfs.AppRegistry). Required.");
ABSL_FLAG(std::string, packages_list, "", "Optional Android packages.list to merge.");
ABSL_FLAG(uint32_t, user_id, 0,
          "Android user whose storage this is (without --device_layout, where each path's user "
          "directory says).");
ABSL_FLAG(bool, device_layout, false,
          "Serve the device's layout, as vold mounts /mnt/user/<user>/emulated over /data/media: "
          "--source is /data/media, the mount root holds one directory per Android user, and "
          "<user>/PATH is judged as PATH of that user's storage (an app of another user is "
          "cross-user there; <user> itself is the storage's root). Apps may list the mount root, "
          "see there only the user directories the policy lets them reach, and create, remove or "
          "rename nothing in it (EACCES); names in it that are not user ids (obb, ...) are hidden "
          "from apps. Renames and links between users fail EXDEV. Needs ANDROID semantics. With "
          "--mount_reached_by_one_user, --user_id names the user whose apps alone reach the "
          "mount, as vold's /mnt/user/<user>/emulated.");
ABSL_FLAG(std::string, control_socket, "",
          "Unix socket for scopedfsctl (root only). Default: /run/scopedfs/<stem>.sock, the stem "
          "being the mount point without its leading '/' and with '-' for every other byte but "
          "letters, digits, '.' and '_' (/storage/emulated/0: storage-emulated-0.sock), where "
          "`scopedfsctl --mount=DIR` looks; none for no socket.");
ABSL_FLAG(std::string, pid_file, "",
          "Where to write the daemon's pid (removed at a clean stop). Default: beside the default "
          "control socket (/run/scopedfs/<stem>.pid), none beside a socket --control_socket "
          "names; none for no file.");
ABSL_FLAG(bool, passthrough, true,
          "Give cleared opens kernel passthrough; false serves all I/O in userspace.");
ABSL_FLAG(int, threads, 8, "Maximum FUSE worker threads.");
ABSL_FLAG(std::string, transport, "auto",
          "How requests reach the daemon: auto (FUSE over io_uring where the kernel offers it, "
          "else /dev/fuse), uring (io_uring or exit 71: the host must have set "
          "/sys/module/fuse/parameters/enable_uring to Y before the mount) or dev (/dev/fuse "
          "only). The daemon never changes enable_uring.");
ABSL_FLAG(std::string, fsname, "",
          "The mount's source as /proc/mounts and mount(8) show it (default: --source as given), "
          "so an fstab line's source matches and a second `mount -a` leaves it be.");
ABSL_FLAG(std::string, subtype, "scopedfs",
          "The mount's type is fuse.<subtype> (/proc/mounts, df -T); empty: plain fuse, as test "
          "suites that compare the type with \"fuse\" (xfstests) expect.");
ABSL_FLAG(double, entry_cache_seconds, 10.0,
          "How long the kernel may cache a name the policy shows to every caller; changes made "
          "to the lower tree behind the daemon are seen this late (0: never cache).");
ABSL_FLAG(bool, mount_reached_by_one_user, false,
          "The operator asserts that only apps of --user_id (and root and the system uids) can "
          "reach this mount, as on a device: under LISTING visibility the kernel then caches the "
          "attributes of names it caches for every app, for --entry_cache_seconds (under "
          "--device_layout, those in <user_id>/ only). An app of another user that reached the "
          "mount could read those cached attributes unjudged.");
ABSL_FLAG(bool, facts_records, true,
          "Keep each file's content facts (format, location ranges) with it on the lower tree, "
          "in the xattr trusted.scopedfs.facts, so a restarted daemon reads no file whose "
          "version they still match. Off: every file is read again after a restart.");
ABSL_FLAG(std::string, xattr, "",
          "POSIX semantics: how extended attributes are served: passthrough (as the lower tree "
          "has them; the default), noattr (none exist) or nosys (not supported: the kernel stops "
          "asking). ANDROID semantics serve none (nosys) and accept only that.");
ABSL_FLAG(std::string, posix_locks, "lower",
          "Who keeps POSIX record and OFD locks: lower (the daemon, on the lower file, so they "
          "meet locks taken on the lower tree directly; every close then costs a FLUSH) or kernel "
          "(the kernel, for this mount only: FLUSH is answered ENOSYS and never sent again).");
ABSL_FLAG(std::string, file_contexts, "",
          "Label new files and directories from this file_contexts (selabel_lookup).");
ABSL_FLAG(std::string, label_root, "",
          "The lower tree's Android path for file_contexts lookups (default: --source).");
ABSL_FLAG(bool, watch_config, true,
          "Reload when the --policy, --apps or --packages_list file changes (inotify on their "
          "directories). SIGHUP reloads either way.");
ABSL_FLAG(std::string, audit_log, "stderr",
          "Where the audit log (one line per refusal and per redacted open) goes: stderr, "
          "syslog (syslog(3): the journal under systemd) or none.");
ABSL_FLAG(double, audit_burst, 100, "Audit lines allowed in a burst before the rate limit.");
ABSL_FLAG(double, audit_rate, 20,
          "Audit lines per second allowed on average; the rest are "
          "counted and the count is logged.");

namespace scopedfs::daemon {
namespace {

constexpr base::Program kProgram = {
    "scopedfsd",
    "scopedfsd --source=LOWER_DIR --mountpoint=DIR --policy=POLICY.textproto "
    "--apps=APPS.textproto [FLAG...]\n"
    "       scopedfsd --source=LOWER_DIR --fuse_fd=N [--mountpoint=DIR] --policy=POLICY.textproto "
    "--apps=APPS.textproto [FLAG...]",
    "Mounts LOWER_DIR (Android's /data/media/<user>) at DIR (/storage/emulated/<user>) and "
    "judges every request by the calling app's uid against the policy: cleared opens get kernel "
    "passthrough, location metadata is filled for apps that may not see it, and files an app may "
    "not see are hidden. With --fuse_fd it serves a /dev/fuse fd its parent mounted (vold's "
    "way) and leaves mounting and unmounting to that parent. Runs in the foreground until "
    "SIGTERM or SIGINT, then unmounts. SIGHUP, "
    "scopedfsctl reload and edits of the configuration files reload the policy; a bad reload "
    "keeps the old one. Exit codes: 0 stopped cleanly, 64 bad command line, 78 invalid "
    "configuration, 71 nothing to serve or the mount failed, 1 an error while serving. See "
    "scopedfsd(8).",
    "daemon/main.cc",
};

// The message, and the exit code of its kind (base/cli.h).
int Fail(const std::string& message, int code = 1) {
  std::cerr << "scopedfsd: " << message << "\n";
  NotifyStatus(absl::StrCat("failed: ", message));
  return code;
}
int UsageError(const std::string& message) { return Fail(message, base::kExitUsage); }
int ConfigError(const std::string& message) { return Fail(message, base::kExitConfig); }
int MountError(const std::string& message) { return Fail(message, base::kExitMount); }

void LogLine(absl::string_view line) {
  std::string text = absl::StrCat("scopedfsd: ", line, "\n");
  fwrite(text.data(), 1, text.size(), stderr);
  fflush(stderr);
}

std::string ServingStatus(const Filesystem& fs) {
  return absl::StrCat("serving ", fs.options().source, " with policy \"",
                      fs.engine()->policy_name(), "\"");
}

// systemd starts services with a soft fd limit of 1,024 whatever the hard limit: the daemon
// raises its soft limit to the hard one before anything sizes itself from it (the app budgets).
void RaiseFdLimit() {
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) != 0 || nofile.rlim_cur >= nofile.rlim_max) return;
  rlim_t was = nofile.rlim_cur;
  nofile.rlim_cur = nofile.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) {
    fprintf(stderr, "scopedfsd: cannot raise the fd limit from %llu: %s\n",
            static_cast<unsigned long long>(was), strerror(errno));
  }
}

// The mount point's checks before mounting it ourselves: a dead mount a killed daemon left there
// is replaced, a busy one refused. Empty when it may be mounted, else the refusal's exit code.
std::optional<int> CheckOwnMountPoint(const std::string& mountpoint) {
  // A daemon killed while serving leaves its dead FUSE mount behind (ENOTCONN): replaced, so a
  // service manager's restart serves again instead of failing forever.
  absl::StatusOr<std::string> dead_mount = DetachDeadFuseMount(mountpoint);
  if (!dead_mount.ok()) {
    return MountError(absl::StrCat("--mountpoint: ", dead_mount.status().message()));
  }
  if (!dead_mount->empty()) fprintf(stderr, "scopedfsd: %s\n", dead_mount->c_str());
  struct stat st;
  if (stat(mountpoint.c_str(), &st) != 0) {
    // The errno too: ENOENT, or a mount that still answers ENOTCONN or another error.
    return MountError(
        absl::StrCat("--mountpoint=", mountpoint, " is not a directory: ", strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return MountError(absl::StrCat("--mountpoint=", mountpoint, " is not a directory"));
  }
  absl::StatusOr<bool> busy = IsMountRoot(mountpoint);
  if (!busy.ok()) return MountError(absl::StrCat("--mountpoint: ", busy.status().message()));
  if (*busy) {
    return MountError(
        absl::StrCat("--mountpoint=", mountpoint, " is busy: something is mounted there"));
  }
  return std::nullopt;
}

// An inherited fd names the wrong thing (64: only a fixed command line or parent cures that) or
// a mount that is gone (71: a fresh mount may be served).
int FuseFdError(const absl::Status& status) {
  std::string message = absl::StrCat("--fuse_fd: ", status.message());
  return status.code() == absl::StatusCode::kInvalidArgument ? UsageError(message)
                                                             : MountError(message);
}

int Run() {
  StopSignals::BlockInThisThread();  // before any thread is made (stop_signals.h)
  RaiseFdLimit();
  std::string source = absl::GetFlag(FLAGS_source);
  std::string mountpoint = absl::GetFlag(FLAGS_mountpoint);
  const int fuse_fd = absl::GetFlag(FLAGS_fuse_fd);
  const bool adopted = fuse_fd != -1;
  policy::ConfigPaths paths{absl::GetFlag(FLAGS_policy), absl::GetFlag(FLAGS_apps),
                            absl::GetFlag(FLAGS_packages_list)};
  std::optional<Transport> transport = ParseTransport(absl::GetFlag(FLAGS_transport));
  if (!transport.has_value()) {
    return UsageError(absl::StrCat("--transport=", absl::GetFlag(FLAGS_transport),
                                   ": must be auto, uring or dev"));
  }
  if (source.empty() || (mountpoint.empty() && !adopted) || paths.policy.empty() ||
      paths.apps.empty()) {
    return UsageError(
        "--source, --mountpoint (or --fuse_fd), --policy and --apps are required (see --help)");
  }
  // With --fuse_fd the mount point is never touched: until the daemon answers FUSE_INIT, any
  // access to the mount would wait for the daemon itself.
  const std::string where = !adopted ? mountpoint
                                     : absl::StrCat(mountpoint.empty() ? "the mount" : mountpoint,
                                                    " (--fuse_fd=", fuse_fd, ")");
  if (adopted) {
    if (absl::Status usable = CheckMountedFuseFd(fuse_fd); !usable.ok()) {
      return FuseFdError(usable);
    }
  }
  struct stat st;
  if (stat(source.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return MountError(absl::StrCat("--source=", source, " is not a directory"));
  }
  if (!adopted) {
    if (std::optional<int> refused = CheckOwnMountPoint(mountpoint)) return *refused;
  }
  absl::StatusOr<policy::LoadedConfig> config = policy::LoadConfig(paths);
  if (!config.ok())
    return ConfigError(absl::StrCat("invalid configuration:\n", config.status().message()));
  absl::StatusOr<std::unique_ptr<const policy::Engine>> engine = policy::Engine::Create(*config);
  if (!engine.ok()) return ConfigError(std::string(engine.status().message()));
  // POSIX semantics leave mode bits to the kernel (default_permissions), which a vold-style mount
  // does not have: served anyway, nothing would check them. Refused, so the policy fails closed.
  if (adopted && (*engine)->semantics() == SEMANTICS_POSIX) {
    return ConfigError(absl::StrCat(
        "policy \"", (*engine)->policy_name(),
        "\" has POSIX semantics, which need a mount with default_permissions; a --fuse_fd mount "
        "is made as vold makes it, without: use a policy of ANDROID semantics"));
  }

  std::unique_ptr<policy::ProcessContextSource> contexts = policy::NewKernelContextSource();
  std::unique_ptr<policy::FileLabeler> labeler;
  if (std::string file_contexts = absl::GetFlag(FLAGS_file_contexts); !file_contexts.empty()) {
    absl::StatusOr<std::unique_ptr<policy::FileLabeler>> opened =
        policy::FileLabeler::Open(file_contexts);
    if (!opened.ok()) {
      return ConfigError(absl::StrCat("--file_contexts: ", opened.status().message()));
    }
    labeler = std::move(*opened);
  }

  absl::StatusOr<AuditLog::Sink> sink = AuditLog::ParseSink(absl::GetFlag(FLAGS_audit_log));
  if (!sink.ok()) return UsageError(absl::StrCat("--audit_log: ", sink.status().message()));
  AuditLog::Options audit_options;
  audit_options.sink = *sink;
  audit_options.burst = absl::GetFlag(FLAGS_audit_burst);
  audit_options.rate_per_second = absl::GetFlag(FLAGS_audit_rate);
  if (!(audit_options.burst >= 1) || !(audit_options.rate_per_second > 0)) {
    return UsageError("--audit_burst must be at least 1 and --audit_rate above 0");
  }
  AuditLog audit(audit_options);

  FilesystemOptions options;
  options.source = source;
  options.audit = &audit;
  options.contexts = contexts.get();
  options.labeler = labeler.get();
  options.label_root =
      absl::GetFlag(FLAGS_label_root).empty() ? source : absl::GetFlag(FLAGS_label_root);
  options.user_id = absl::GetFlag(FLAGS_user_id);
  options.passthrough = absl::GetFlag(FLAGS_passthrough);
  options.fuse_threads = absl::GetFlag(FLAGS_threads);
  options.entry_cache_seconds = absl::GetFlag(FLAGS_entry_cache_seconds);
  options.mount_reached_by_one_user = absl::GetFlag(FLAGS_mount_reached_by_one_user);
  options.facts_records = absl::GetFlag(FLAGS_facts_records);
  options.device_layout = absl::GetFlag(FLAGS_device_layout);
  if (options.device_layout && (*engine)->semantics() == SEMANTICS_POSIX) {
    return ConfigError(absl::StrCat("policy \"", (*engine)->policy_name(),
                                    "\" has POSIX semantics; --device_layout serves Android's "
                                    "layout and needs ANDROID semantics"));
  }
  if (!(options.entry_cache_seconds >= 0 && options.entry_cache_seconds <= 86400)) {
    return UsageError("--entry_cache_seconds must be between 0 and 86400");
  }
  // The type goes into mount(2) as is: a comma or a space would read as a second field in
  // /proc/mounts.
  if (absl::GetFlag(FLAGS_subtype)
          .find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
      std::string::npos) {
    return UsageError("--subtype may hold only letters, digits, '.', '_' and '-'");
  }
  if (std::string xattr = absl::GetFlag(FLAGS_xattr); !xattr.empty()) {
    if (!ParseXattrMode(xattr, &options.xattr)) {
      return UsageError(absl::StrCat("--xattr=", xattr, ": must be passthrough, noattr or nosys"));
    }
    if ((*engine)->semantics() != SEMANTICS_POSIX && options.xattr != XattrMode::kNosys) {
      return ConfigError(absl::StrCat("--xattr=", xattr, ": policy \"", (*engine)->policy_name(),
                                      "\" has ANDROID semantics, which serve no extended "
                                      "attributes (nosys)"));
    }
  }
  bool kernel_posix_locks = false;
  if (std::string locks = absl::GetFlag(FLAGS_posix_locks); locks == "kernel") {
    kernel_posix_locks = true;
  } else if (locks != "lower") {
    return UsageError(absl::StrCat("--posix_locks=", locks, ": must be lower or kernel"));
  }
  options.kernel_posix_locks = kernel_posix_locks;
  if (kernel_posix_locks && MayShowTwoViews(**engine)) {
    return ConfigError(absl::StrCat("--posix_locks=kernel: policy \"", (*engine)->policy_name(),
                                    "\" may give a caller a redacted view of a file, a kernel "
                                    "inode of its own, whose locks the kernel would keep apart "
                                    "from the raw view's; only --posix_locks=lower (the "
                                    "daemon's locks, on the lower file) meets across views"));
  }
  absl::StatusOr<std::unique_ptr<Filesystem>> fs =
      Filesystem::Create(options, std::shared_ptr<const policy::Engine>(std::move(*engine)));
  if (!fs.ok()) return MountError(std::string(fs.status().message()));

  Filesystem* filesystem = fs->get();
  ConfigReloader reloader(
      paths,
      [filesystem](std::shared_ptr<const policy::Engine> engine) {
        absl::Status set = filesystem->SetEngine(std::move(engine));
        if (set.ok()) filesystem->stats().reloads.fetch_add(1);
        return set;
      },
      LogLine);
  // Installed before libfuse's handlers, which then leave SIGHUP alone (libfuse only replaces a
  // default disposition): SIGHUP reloads, on the watch's thread, never on a FUSE worker, instead
  // of ending the loop. SIGTERM and SIGINT still stop the daemon.
  ConfigWatch::Options watch_options;
  watch_options.files = {paths.policy, paths.apps, paths.packages_list};
  watch_options.watch_files = absl::GetFlag(FLAGS_watch_config);
  absl::StatusOr<std::unique_ptr<ConfigWatch>> watch = ConfigWatch::Start(
      watch_options,
      [&reloader](const std::string& why) { (void)ReloadNotified(&reloader, {}, why); },
      [](const std::string& line) { LogLine(line); });
  if (!watch.ok()) return ConfigError(absl::StrCat("--watch_config: ", watch.status().message()));
  // Named after the mount point as the kernel resolves it (mount(8) hands the helper a canonical
  // path, scopedfsctl resolves --mount the same way); an adopted fd's mount is never touched.
  std::string named_after = mountpoint;
  if (char real[PATH_MAX]; !adopted && realpath(mountpoint.c_str(), real) != nullptr) {
    named_after = real;
  }
  absl::StatusOr<ControlPaths> control_paths = ResolveControlPaths(
      absl::GetFlag(FLAGS_control_socket), absl::GetFlag(FLAGS_pid_file), named_after);
  if (!control_paths.ok()) return MountError(std::string(control_paths.status().message()));
  std::unique_ptr<ControlSocket> control;
  if (!control_paths->socket.empty()) {
    absl::StatusOr<std::unique_ptr<ControlSocket>> started = ControlSocket::Start(
        control_paths->socket, [filesystem, &reloader](const ControlRequest& request) {
          return HandleControl(request, filesystem, &reloader);
        });
    if (!started.ok()) return MountError(std::string(started.status().message()));
    control = std::move(*started);
    if (control->took_over()) {
      LogLine(absl::StrCat("control socket ", control_paths->socket,
                           ": another process still answered on it (a daemon of this mount point "
                           "still stopping?); it is this daemon's now"));
    }
  }

  FuseSession::Options session_options;
  session_options.mountpoint = adopted ? where : mountpoint;
  session_options.fsname =
      absl::GetFlag(FLAGS_fsname).empty() ? source : absl::GetFlag(FLAGS_fsname);
  session_options.subtype = absl::GetFlag(FLAGS_subtype);
  session_options.want_passthrough = options.passthrough;
  session_options.posix = (*fs)->posix();
  session_options.kernel_posix_locks = kernel_posix_locks;
  session_options.stats = &(*fs)->stats();
  session_options.transport = *transport;
  session_options.threads_per_queue = options.fuse_threads;
  session_options.max_deferred_replies = static_cast<int>(FileLocks::kMaxWaiters);
  absl::StatusOr<std::unique_ptr<FuseSession>> session =
      adopted ? FuseSession::Adopt(session_options, fuse_fd, Filesystem::Ops(), fs->get())
              : FuseSession::Mount(session_options, Filesystem::Ops(), fs->get());
  if (!session.ok()) {
    return adopted ? FuseFdError(session.status())
                   : MountError(std::string(session.status().message()));
  }
  (*fs)->Attach(session->get());
  // INIT on this thread: which transport serves is known before anything else is.
  if (absl::Status init = (*session)->ServeInit(); !init.ok()) {
    return MountError(std::string(init.message()));
  }
  fprintf(stderr, "scopedfsd: transport: %s\n", (*session)->transport_description().c_str());

  if (fuse_set_signal_handlers((*session)->session()) != 0) {
    return Fail("cannot install signal handlers");
  }
  const AppBudget::Limits& budget = (*fs)->budget().limits();
  fprintf(stderr, "scopedfsd: fd limit %llu: apps share %zu fd units, at most %zu each\n",
          static_cast<unsigned long long>(FdLimit()), budget.fds.total, budget.fds.per_app);
  int rc;
  {
    // Before the daemon says it serves: over io_uring the queues answer requests already, and a
    // SIGTERM from whoever saw it serving must find the thread that takes it.
    StopSignals stop((*session)->session());
    // Written once it serves, so the file names a daemon that mounted (or one killed since).
    if (!control_paths->pid_file.empty()) {
      if (absl::Status written = WritePidFile(control_paths->pid_file); !written.ok()) {
        return MountError(std::string(written.message()));
      }
    }
    NotifyReady(absl::StrCat(ServingStatus(**fs), " at ", where));
    fprintf(stderr, "scopedfsd: serving %s at %s (policy \"%s\", passthrough %s, SELinux %s)\n",
            source.c_str(), where.c_str(), config->policy.name().c_str(),
            options.passthrough ? "requested" : "off",
            contexts->Enabled() ? "enabled: caller domains from getpidcon"
                                : "disabled: configured app domains");
    rc = (*session)->Loop(absl::GetFlag(FLAGS_threads));
    if (rc == 0 && stop.signal() != 0) rc = stop.signal();
  }
  NotifyStopping(absl::StrCat(adopted ? "stopping serving " : "unmounting ", where));
  (*fs)->locks().Stop();  // queued lock waits are answered while the session can still reply
  // The facts learned last are written before the daemon goes (at most RecordWriter::kMaxQueued,
  // each due within kRecordQuietAge), so that the next daemon need not read those files again.
  (*fs)->facts().DrainRecords();
  watch->reset();
  fuse_remove_signal_handlers((*session)->session());
  control.reset();
  if (!control_paths->pid_file.empty()) RemovePidFile(control_paths->pid_file);
  session->reset();  // unmounts our own mount; an adopted fd is only closed
  // The loop returns the signal number when stopped by SIGTERM/SIGINT: a clean end.
  if (rc == SIGTERM || rc == SIGINT || rc == 0) {
    if (adopted) {
      // Closing the last fd of the connection aborts it: whoever mounted it unmounts it, as vold
      // does when MediaProvider's daemon goes.
      fprintf(stderr, "scopedfsd: stopped serving %s; its mount is left to whoever mounted it\n",
              where.c_str());
    } else {
      fprintf(stderr, "scopedfsd: unmounted %s\n", mountpoint.c_str());
    }
    return 0;
  }
  return Fail(absl::StrCat("session ended with error ", rc));
}

}  // namespace
}  // namespace scopedfs::daemon

int main(int argc, char** argv) {
  namespace cli = scopedfs::base;
  const cli::Program& program = scopedfs::daemon::kProgram;
  if (std::optional<int> done = cli::HandleHelpOrVersion(argc, argv, program)) return *done;
  if (std::optional<int> bad = cli::CheckFlags(argc, argv, program)) return *bad;
  absl::SetProgramUsageMessage(program.synopsis);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
#ifdef NDEBUG
  // Debian's abseil is built with Mutex deadlock detection on, which records every lock
  // acquisition in a global graph (3% of the daemon's time under load, per perf). Optimised
  // builds turn it off; the test builds (fastbuild) keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  if (args.size() > 1) {
    std::cerr << "scopedfsd: unexpected argument \"" << args[1] << "\" (see --help)\n";
    return cli::kExitUsage;
  }
  return scopedfs::daemon::Run();
}
