// Directory streams and the bounded walk of a directory's tree (tree_walk.cc). Private to
// daemon/ops.
#ifndef SCOPEDFS_DAEMON_OPS_TREE_WALK_H_
#define SCOPEDFS_DAEMON_OPS_TREE_WALK_H_

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace scopedfs::daemon {

// A directory stream that owns its fd (closedir when it goes away).
// "." or "..": the entries of every directory that name no child.
bool IsDot(const char* name);

class DirStream {
 public:
  DirStream() = default;
  DirStream(const DirStream&) = delete;
  DirStream& operator=(const DirStream&) = delete;
  ~DirStream();
  // A stream of its own, from the start, on the directory `dir_fd` (any fd of it, O_PATH too).
  // Returns 0 or an errno.
  int Open(int dir_fd);
  dirent* Next() { return readdir(dir_); }  // with . and ..
  int fd() const { return dirfd(dir_); }
  // Continues from `offset`, a d_off this stream's directory returned (0: the start).
  void Seek(off_t offset) { seekdir(dir_, static_cast<long>(offset)); }

 private:
  DIR* dir_ = nullptr;
};

// Visits every entry below the directory `dir_fd` (directories before what they hold, symlinks
// and specials too), depth first, without following symlinks: visit(fd, st, path relative to
// dir_fd, name) with the entry's O_PATH fd. Returns 0, the first non-zero value `visit` returned,
// or EXDEV when the walk cannot be complete: more than *budget entries, more than 64 levels, or
// an entry that cannot be opened or stat'ed (one removed meanwhile is skipped).
int ForEachEntryBelow(int dir_fd, int* budget,
                      const std::function<int(int fd, const struct stat& st, const std::string& rel,
                                              absl::string_view name)>& visit);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_TREE_WALK_H_
