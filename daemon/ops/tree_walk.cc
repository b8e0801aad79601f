// Directory streams and the bounded, depth-first walk of a tree (ForEachEntryBelow) that the
// rename and link checks judge a moved directory's contents with (namespace_checks.cc).
#include "daemon/ops/tree_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

#include "daemon/ops/handles.h"

namespace scopedfs::daemon {

DirStream::~DirStream() {
  if (dir_ != nullptr) closedir(dir_);
}

int DirStream::Open(int dir_fd) {
  base::UniqueFd fd(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return errno;
  dir_ = fdopendir(fd.get());
  if (dir_ == nullptr) return errno;
  (void)fd.release();  // the stream owns it now
  return 0;
}

bool IsDot(const char* name) { return strcmp(name, ".") == 0 || strcmp(name, "..") == 0; }

namespace {

int WalkEntries(int dir_fd, const std::string& rel, int depth, int* budget,
                const std::function<int(int, const struct stat&, const std::string&,
                                        absl::string_view)>& visit) {
  if (depth > 64) return EXDEV;
  DirStream stream;
  if (stream.Open(dir_fd) != 0) return EXDEV;
  while (dirent* ent = stream.Next()) {
    if (IsDot(ent->d_name)) continue;
    if (--*budget < 0) return EXDEV;
    base::UniqueFd child(openat(stream.fd(), ent->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    if (!child.valid() || fstatat(child.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // removed meanwhile
      return EXDEV;
    }
    std::string child_rel = ChildPath(rel, ent->d_name);
    int err = visit(child.get(), st, child_rel, ent->d_name);
    if (err == 0 && S_ISDIR(st.st_mode)) {
      err = WalkEntries(child.get(), child_rel, depth + 1, budget, visit);
    }
    if (err != 0) return err;
  }
  return 0;
}

}  // namespace

int ForEachEntryBelow(int dir_fd, int* budget,
                      const std::function<int(int fd, const struct stat& st, const std::string& rel,
                                              absl::string_view name)>& visit) {
  return WalkEntries(dir_fd, "", 0, budget, visit);
}

}  // namespace scopedfs::daemon
