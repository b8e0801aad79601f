// scopedfsd: mounts a lower directory (Android's /data/media/<user>) at a mount point
// (/storage/emulated/<user>) and enforces a per-app policy on every request. Stays in the
// foreground until unmounted or signalled, then unmounts and exits 0.
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "daemon/filesystem.h"
#include "daemon/fuse_session.h"
#include "policy/config.h"
#include "policy/engine.h"

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

namespace scopedfs::daemon {
namespace {

int Fail(const std::string& message) {
  std::cerr << "scopedfsd: " << message << "\n";
  return 1;
}

// True if `path` is already a mount point: mounting over it would hide what is there.
bool IsMountPoint(const std::string& path) {
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) == nullptr) return false;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() > 4 && fields[4] == real) return true;
  }
  return false;
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
  if (stat(mountpoint.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Fail(absl::StrCat("--mountpoint=", mountpoint, " is not a directory"));
  }
  if (IsMountPoint(mountpoint)) {
    return Fail(absl::StrCat("--mountpoint=", mountpoint, " is busy: something is mounted there"));
  }
  absl::StatusOr<policy::LoadedConfig> config = policy::LoadConfig(paths);
  if (!config.ok()) return Fail(absl::StrCat("invalid configuration:\n", config.status().message()));
  absl::StatusOr<std::unique_ptr<const policy::Engine>> engine = policy::Engine::Create(*config);
  if (!engine.ok()) return Fail(std::string(engine.status().message()));

  FilesystemOptions options;
  options.source = source;
  options.user_id = absl::GetFlag(FLAGS_user_id);
  options.passthrough = absl::GetFlag(FLAGS_passthrough);
  absl::StatusOr<std::unique_ptr<Filesystem>> fs =
      Filesystem::Create(options, std::shared_ptr<const policy::Engine>(std::move(*engine)));
  if (!fs.ok()) return Fail(std::string(fs.status().message()));

  FuseSession::Options session_options;
  session_options.mountpoint = mountpoint;
  session_options.want_passthrough = options.passthrough;
  absl::StatusOr<std::unique_ptr<FuseSession>> session =
      FuseSession::Mount(session_options, Filesystem::Ops(), fs->get());
  if (!session.ok()) return Fail(std::string(session.status().message()));
  (*fs)->Attach(session->get());

  if (fuse_set_signal_handlers((*session)->session()) != 0) {
    return Fail("cannot install signal handlers");
  }
  fprintf(stderr, "scopedfsd: serving %s at %s (policy \"%s\", passthrough %s)\n", source.c_str(),
          mountpoint.c_str(), config->policy.name().c_str(),
          options.passthrough ? "requested" : "off");
  int rc = (*session)->Loop(absl::GetFlag(FLAGS_threads));
  fuse_remove_signal_handlers((*session)->session());
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
