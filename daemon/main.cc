// scopedfsd: mounts a lower directory (Android's /data/media/<user>) at a mount point
// (/storage/emulated/<user>) and enforces a per-app policy on every request. Stays in the
// foreground until unmounted or signalled, then unmounts and exits 0.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "daemon/control_socket.h"
#include "daemon/filesystem.h"
#include "daemon/fuse_session.h"
#include "daemon/mount_point.h"
#include "daemon/stats.h"
#include "policy/config.h"
#include "policy/engine.h"
#include "policy/selinux_context.h"

ABSL_FLAG(std::string, source, "", "Lower directory to serve (e.g. /data/media/0). Required.");
ABSL_FLAG(std::string, mountpoint, "", "Where to mount (e.g. /storage/emulated/0). Required.");
ABSL_FLAG(std::string, policy, "", "Policy file (text scopedfs.Policy). Required.");
ABSL_FLAG(std::string, apps, "", "App registry (text scopedfs.AppRegistry). Required.");
ABSL_FLAG(std::string, packages_list, "", "Optional Android packages.list to merge.");
ABSL_FLAG(uint32_t, user_id, 0, "Android user whose storage this is.");
ABSL_FLAG(std::string, control_socket, "", "Unix socket for scopedfsctl (root only).");
ABSL_FLAG(bool, passthrough, true,
          "Give cleared opens kernel passthrough; false serves all I/O in userspace.");
ABSL_FLAG(int, threads, 8, "Maximum FUSE worker threads.");
ABSL_FLAG(double, entry_cache_seconds, 10.0,
          "How long the kernel may cache a name the policy shows to every caller; changes made "
          "to the lower tree behind the daemon are seen this late (0: never cache).");
ABSL_FLAG(std::string, file_contexts, "",
          "Label new files and directories from this file_contexts (selabel_lookup).");
ABSL_FLAG(std::string, label_root, "",
          "The lower tree's Android path for file_contexts lookups (default: --source).");

namespace scopedfs::daemon {
namespace {

int Fail(const std::string& message) {
  std::cerr << "scopedfsd: " << message << "\n";
  return 1;
}

// Control requests: stats read the live counters; a reload swaps the engine only if the new
// configuration loads completely (a bad reload keeps the old policy).
ControlResponse HandleControl(const ControlRequest& request, Filesystem* fs,
                              const policy::ConfigPaths& started_with) {
  ControlResponse response;
  if (request.has_stats()) {
    scopedfs::Stats* out = response.mutable_stats();
    fs->stats().ToProto(out);
    out->set_nodes(static_cast<double>(fs->node_count()));
    out->set_passthrough_enabled(fs->passthrough_active());
    out->set_policy(fs->engine()->policy_name());
    return response;
  }
  if (request.has_reload()) {
    const ReloadRequest& r = request.reload();
    policy::ConfigPaths paths = started_with;
    if (!r.policy().empty()) paths.policy = r.policy();
    if (!r.apps().empty()) paths.apps = r.apps();
    if (!r.packages_list().empty()) paths.packages_list = r.packages_list();
    absl::StatusOr<policy::LoadedConfig> config = policy::LoadConfig(paths);
    if (!config.ok()) {
      response.set_error(absl::StrCat("reload rejected, previous policy stays in force:\n",
                                      config.status().message()));
      return response;
    }
    absl::StatusOr<std::unique_ptr<const policy::Engine>> engine = policy::Engine::Create(*config);
    if (!engine.ok()) {
      response.set_error(absl::StrCat("reload rejected: ", engine.status().message()));
      return response;
    }
    if (absl::Status set = fs->SetEngine(std::shared_ptr<const policy::Engine>(std::move(*engine)));
        !set.ok()) {
      response.set_error(absl::StrCat("reload rejected: ", set.message()));
      return response;
    }
    fs->stats().reloads.fetch_add(1);
    response.set_message(absl::StrCat("reloaded policy \"", config->policy.name(), "\" (",
                                      config->policy.rule_size(), " rules, ",
                                      config->apps.app_size(), " apps)"));
    fprintf(stderr, "scopedfsd: %s\n", response.message().c_str());
    return response;
  }
  response.set_error("empty request");
  return response;
}

int Run() {
  std::string source = absl::GetFlag(FLAGS_source);
  std::string mountpoint = absl::GetFlag(FLAGS_mountpoint);
  policy::ConfigPaths paths{absl::GetFlag(FLAGS_policy), absl::GetFlag(FLAGS_apps),
                            absl::GetFlag(FLAGS_packages_list)};
  if (source.empty() || mountpoint.empty() || paths.policy.empty() || paths.apps.empty()) {
    return Fail("--source, --mountpoint, --policy and --apps are required (see --help)");
  }
  struct stat st;
  if (stat(source.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Fail(absl::StrCat("--source=", source, " is not a directory"));
  }
  // A daemon killed while serving leaves its dead FUSE mount behind (ENOTCONN): replaced, so a
  // service manager's restart serves again instead of failing forever.
  absl::StatusOr<std::string> dead_mount = DetachDeadFuseMount(mountpoint);
  if (!dead_mount.ok()) return Fail(absl::StrCat("--mountpoint: ", dead_mount.status().message()));
  if (!dead_mount->empty()) fprintf(stderr, "scopedfsd: %s\n", dead_mount->c_str());
  if (stat(mountpoint.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Fail(absl::StrCat("--mountpoint=", mountpoint, " is not a directory"));
  }
  absl::StatusOr<bool> busy = IsMountRoot(mountpoint);
  if (!busy.ok()) return Fail(absl::StrCat("--mountpoint: ", busy.status().message()));
  if (*busy) {
    return Fail(absl::StrCat("--mountpoint=", mountpoint, " is busy: something is mounted there"));
  }
  absl::StatusOr<policy::LoadedConfig> config = policy::LoadConfig(paths);
  if (!config.ok())
    return Fail(absl::StrCat("invalid configuration:\n", config.status().message()));
  absl::StatusOr<std::unique_ptr<const policy::Engine>> engine = policy::Engine::Create(*config);
  if (!engine.ok()) return Fail(std::string(engine.status().message()));

  std::unique_ptr<policy::ProcessContextSource> contexts = policy::NewKernelContextSource();
  std::unique_ptr<policy::FileLabeler> labeler;
  if (std::string file_contexts = absl::GetFlag(FLAGS_file_contexts); !file_contexts.empty()) {
    absl::StatusOr<std::unique_ptr<policy::FileLabeler>> opened =
        policy::FileLabeler::Open(file_contexts);
    if (!opened.ok()) return Fail(absl::StrCat("--file_contexts: ", opened.status().message()));
    labeler = std::move(*opened);
  }

  FilesystemOptions options;
  options.source = source;
  options.contexts = contexts.get();
  options.labeler = labeler.get();
  options.label_root =
      absl::GetFlag(FLAGS_label_root).empty() ? source : absl::GetFlag(FLAGS_label_root);
  options.user_id = absl::GetFlag(FLAGS_user_id);
  options.passthrough = absl::GetFlag(FLAGS_passthrough);
  options.entry_cache_seconds = absl::GetFlag(FLAGS_entry_cache_seconds);
  if (!(options.entry_cache_seconds >= 0 && options.entry_cache_seconds <= 86400)) {
    return Fail("--entry_cache_seconds must be between 0 and 86400");
  }
  absl::StatusOr<std::unique_ptr<Filesystem>> fs =
      Filesystem::Create(options, std::shared_ptr<const policy::Engine>(std::move(*engine)));
  if (!fs.ok()) return Fail(std::string(fs.status().message()));

  std::unique_ptr<ControlSocket> control;
  if (std::string socket_path = absl::GetFlag(FLAGS_control_socket); !socket_path.empty()) {
    Filesystem* filesystem = fs->get();
    absl::StatusOr<std::unique_ptr<ControlSocket>> started =
        ControlSocket::Start(socket_path, [filesystem, paths](const ControlRequest& request) {
          return HandleControl(request, filesystem, paths);
        });
    if (!started.ok()) return Fail(std::string(started.status().message()));
    control = std::move(*started);
  }

  FuseSession::Options session_options;
  session_options.mountpoint = mountpoint;
  session_options.want_passthrough = options.passthrough;
  session_options.posix = (*fs)->posix();
  absl::StatusOr<std::unique_ptr<FuseSession>> session =
      FuseSession::Mount(session_options, Filesystem::Ops(), fs->get());
  if (!session.ok()) return Fail(std::string(session.status().message()));
  (*fs)->Attach(session->get());

  if (fuse_set_signal_handlers((*session)->session()) != 0) {
    return Fail("cannot install signal handlers");
  }
  fprintf(stderr, "scopedfsd: serving %s at %s (policy \"%s\", passthrough %s, SELinux %s)\n",
          source.c_str(), mountpoint.c_str(), config->policy.name().c_str(),
          options.passthrough ? "requested" : "off",
          contexts->Enabled() ? "enabled: caller domains from getpidcon"
                              : "disabled: configured app domains");
  int rc = (*session)->Loop(absl::GetFlag(FLAGS_threads));
  fuse_remove_signal_handlers((*session)->session());
  control.reset();
  session->reset();  // unmounts
  // The loop returns the signal number when stopped by SIGTERM/SIGINT/SIGHUP: a clean end.
  if (rc == SIGTERM || rc == SIGINT || rc == SIGHUP || rc == 0) {
    fprintf(stderr, "scopedfsd: unmounted %s\n", mountpoint.c_str());
    return 0;
  }
  return Fail(absl::StrCat("session ended with error ", rc));
}

}  // namespace
}  // namespace scopedfs::daemon

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "scopedfsd --source=LOWER_DIR --mountpoint=DIR --policy=POLICY.textproto "
      "--apps=APPS.textproto [--packages_list=FILE] [--user_id=0] [--control_socket=PATH] "
      "[--passthrough=true|false]");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    std::cerr << "scopedfsd: unexpected argument \"" << args[1] << "\"\n";
    return 1;
  }
  return scopedfs::daemon::Run();
}
