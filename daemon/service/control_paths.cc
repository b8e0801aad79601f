// Default control socket and pid file paths (see control_paths.h).
#include "daemon/service/control_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/unique_fd.h"

namespace scopedfs::daemon {
namespace {

// sockaddr_un's sun_path, less its terminating NUL.
constexpr size_t kMaxSocketPath = sizeof(sockaddr_un{}.sun_path) - 1;
constexpr char kSocketSuffix[] = ".sock";

uint64_t Fnv1a(absl::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

bool Connects(const std::string& path) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.size() > kMaxSocketPath) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  base::UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  return fd.valid() && connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

}  // namespace

std::string MountPointStem(absl::string_view mountpoint) {
  absl::string_view rest = mountpoint;
  while (absl::ConsumePrefix(&rest, "/")) {
  }
  std::string stem;
  for (char c : rest) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_';
    stem.push_back(plain ? c : '-');
  }
  if (stem.empty() || stem == "." || stem == "..") stem = absl::StrCat("-", stem);
  const size_t room = kMaxSocketPath - (sizeof(kRunDir) - 1) - 1 - (sizeof(kSocketSuffix) - 1);
  if (stem.size() > room) {
    std::string hash = absl::StrFormat("-%016x", Fnv1a(mountpoint));
    stem = absl::StrCat(stem.substr(0, room - hash.size()), hash);
  }
  return stem;
}

std::string DefaultControlSocket(absl::string_view mountpoint) {
  return absl::StrCat(kRunDir, "/", MountPointStem(mountpoint), kSocketSuffix);
}

std::string DefaultPidFile(absl::string_view mountpoint) {
  return absl::StrCat(kRunDir, "/", MountPointStem(mountpoint), ".pid");
}

absl::StatusOr<ControlPaths> ResolveControlPaths(absl::string_view socket_flag,
                                                 absl::string_view pid_flag,
                                                 absl::string_view mountpoint) {
  ControlPaths paths;
  bool default_socket = socket_flag.empty() && !mountpoint.empty();
  if (default_socket) {
    paths.socket = DefaultControlSocket(mountpoint);
  } else if (socket_flag != "none") {
    paths.socket = std::string(socket_flag);
  }
  if (pid_flag.empty()) {
    if (default_socket) paths.pid_file = DefaultPidFile(mountpoint);
  } else if (pid_flag != "none") {
    paths.pid_file = std::string(pid_flag);
  }
  if ((default_socket || (pid_flag.empty() && !paths.pid_file.empty())) &&
      mkdir(kRunDir, 0755) != 0 && errno != EEXIST) {
    return absl::ErrnoToStatus(errno, absl::StrCat("mkdir ", kRunDir));
  }
  return paths;
}

absl::Status WritePidFile(const std::string& path) {
  base::UniqueFd fd(
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd.valid()) return absl::ErrnoToStatus(errno, absl::StrCat("pid file ", path));
  std::string text = absl::StrCat(getpid(), "\n");
  if (write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return absl::ErrnoToStatus(errno, absl::StrCat("pid file ", path));
  }
  return absl::OkStatus();
}

void RemovePidFile(const std::string& path) {
  base::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return;
  char text[32] = {};
  ssize_t n = read(fd.get(), text, sizeof(text) - 1);
  if (n > 0 && std::string(text, n) == absl::StrCat(getpid(), "\n")) unlink(path.c_str());
}

std::vector<std::string> LiveControlSockets(const std::string& dir, size_t limit) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str()); d != nullptr) {
    while (dirent* e = readdir(d)) {
      if (absl::EndsWith(e->d_name, kSocketSuffix)) names.emplace_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  if (names.size() > limit) names.resize(limit);
  std::vector<std::string> live;
  for (const std::string& name : names) {
    std::string path = absl::StrCat(dir, "/", name);
    if (Connects(path)) live.push_back(path);
  }
  return live;
}

}  // namespace scopedfs::daemon
