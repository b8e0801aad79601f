// IsMountRoot and DetachDeadFuseMount (see mount_point.h).
#include "daemon/kernel/mount_point.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace scopedfs::daemon {
namespace {

// More dead mounts than this stacked on one directory is not a crash loop we should keep undoing.
constexpr int kMaxDeadMounts = 16;
// Symlinks followed while finding the directory a mount point path names (as path_resolution(7)).
constexpr int kMaxSymlinks = 40;

absl::Status ErrnoError(int err, absl::string_view what) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, ": ", strerror(err)));
}

// mountinfo escapes space, tab, newline and backslash as \ and three octal digits.
std::string UnescapeMountInfo(absl::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      absl::string_view digits = field.substr(i + 1, 3);
      bool octal = true;
      for (char c : digits) octal = octal && c >= '0' && c <= '7';
      if (octal) {
        out.push_back(static_cast<char>(((digits[0] - '0') << 6) | ((digits[1] - '0') << 3) |
                                        (digits[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

bool IsFuseType(absl::string_view fstype) {
  return fstype == "fuse" || fstype == "fuseblk" || absl::StartsWith(fstype, "fuse.");
}

// The absolute path of the directory entry `path` names, without stat-ing that entry itself (a
// dead FUSE mount root cannot be stat-ed): its parent resolved with realpath, then its last
// component, following it while it is a symlink (a symlink lives in the parent, so lstat works).
absl::StatusOr<std::string> MountPointPath(std::string path) {
  for (int hops = 0;; ++hops) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    size_t slash = path.rfind('/');
    std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
    if (parent.empty()) parent = "/";
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base.empty() || base == "." || base == "..") {
      char real[PATH_MAX];
      if (realpath(path.c_str(), real) == nullptr) return ErrnoError(errno, "realpath " + path);
      return std::string(real);
    }
    char real_parent[PATH_MAX];
    if (realpath(parent.c_str(), real_parent) == nullptr) {
      return ErrnoError(errno, absl::StrCat("resolve the directory holding ", path));
    }
    std::string candidate =
        absl::StrCat(absl::string_view(real_parent) == "/" ? "" : real_parent, "/", base);
    struct stat st;
    if (lstat(candidate.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return candidate;
    if (hops == kMaxSymlinks) return ErrnoError(ELOOP, absl::StrCat("resolve ", path));
    char target[PATH_MAX];
    ssize_t n = readlink(candidate.c_str(), target, sizeof(target) - 1);
    if (n < 0) return ErrnoError(errno, absl::StrCat("readlink ", candidate));
    target[n] = '\0';
    path = target[0] == '/' ? std::string(target) : absl::StrCat(real_parent, "/", target);
  }
}

absl::StatusOr<std::string> ReadMountInfo() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return ErrnoError(errno, "open /proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::StatusOr<bool> IsMountRoot(const std::string& path) {
  struct statx stx = {};
  // No attributes are needed from the mask: stx_attributes is filled whatever is asked for.
  if (statx(AT_FDCWD, path.c_str(), 0, 0, &stx) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("statx ", path));
  }
  // A kernel that does not know the attribute leaves its bit clear in stx_attributes too, which
  // would read as "not a mount point": that must be an error, not a yes-to-mount.
  if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) == 0) {
    return absl::UnimplementedError(absl::StrCat(
        "statx ", path, ": the kernel does not report STATX_ATTR_MOUNT_ROOT (needs Linux 5.8)"));
  }
  return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

std::vector<MountInfoEntry> ParseMountInfo(absl::string_view text) {
  std::vector<MountInfoEntry> entries;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    size_t separator = 6;
    while (separator < fields.size() && fields[separator] != "-") ++separator;
    MountInfoEntry entry;
    if (separator + 2 >= fields.size() || !absl::SimpleAtoi(fields[0], &entry.mount_id)) continue;
    entry.mount_point = UnescapeMountInfo(fields[4]);
    entry.fstype = UnescapeMountInfo(fields[separator + 1]);
    entry.source = UnescapeMountInfo(fields[separator + 2]);
    entries.push_back(std::move(entry));
  }
  return entries;
}

absl::StatusOr<std::string> DetachDeadFuseMount(const std::string& path) {
  std::string report;
  for (int detached = 0;; ++detached) {
    // Forced to ask the file system: with no mask and no sync flag, FUSE answers from the
    // attributes it has, and a dead mount's root looks alive.
    struct statx stx = {};
    // ENOTCONN: the connection is gone. ECONNABORTED: it was aborted, which is also what a
    // request gets while the kernel tears down the io_uring queues of a daemon that died serving
    // over FUSE over io_uring (dev_uring.c ends the requests queued to its ring that way), and
    // ECANCELED: what one gets when its ring entry is cancelled in that teardown (seen here in
    // about one SIGKILL restart in 25 over io_uring; explore_mount_test repeats them).
    if (statx(AT_FDCWD, path.c_str(), AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &stx) == 0 ||
        (errno != ENOTCONN && errno != ECONNABORTED && errno != ECANCELED)) {
      return report;
    }
    if (detached == kMaxDeadMounts) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " still answers ENOTCONN after ", kMaxDeadMounts,
                       " dead FUSE mounts were detached from it; giving up"));
    }
    absl::StatusOr<std::string> point = MountPointPath(path);
    if (!point.ok()) return point.status();
    absl::StatusOr<std::string> mountinfo = ReadMountInfo();
    if (!mountinfo.ok()) return mountinfo.status();
    const MountInfoEntry* top = nullptr;
    std::vector<MountInfoEntry> entries = ParseMountInfo(*mountinfo);
    for (const MountInfoEntry& entry : entries) {
      if (entry.mount_point == *point) top = &entry;
    }
    if (top == nullptr || !IsFuseType(top->fstype)) {
      return absl::FailedPreconditionError(absl::StrCat(
          path,
          " answers ENOTCONN (Transport endpoint is not connected) but is not a dead FUSE "
          "mount: /proc/self/mountinfo shows ",
          top == nullptr ? absl::StrCat("no mount at ", *point)
                         : absl::StrCat(top->fstype, " from \"", top->source, "\" at ", *point),
          "; not touching it"));
    }
    if (umount2(point->c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0) {
      return ErrnoError(errno,
                        absl::StrCat("umount2(MNT_DETACH) of the dead FUSE mount at ", *point));
    }
    absl::StrAppend(&report, report.empty() ? "" : "\n", "found a dead FUSE mount at ", *point,
                    " (", top->fstype, " from \"", top->source, "\", mount id ", top->mount_id,
                    "): its daemon is gone, every call on it fails ENOTCONN; detached it "
                    "(umount2 MNT_DETACH)");
  }
}

}  // namespace scopedfs::daemon
