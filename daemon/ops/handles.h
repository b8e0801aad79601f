// The handles the kernel holds for the ops (fuse_file_info::fh): an open file and an open
// directory, and how a request finds its filesystem and handles. Private to daemon/ops.
#ifndef SCOPEDFS_DAEMON_OPS_HANDLES_H_
#define SCOPEDFS_DAEMON_OPS_HANDLES_H_

#include <sys/types.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "daemon/kernel/fuse_session.h"
#include "daemon/ops/filesystem.h"
#include "daemon/ops/redacted_read.h"
#include "daemon/tables/file_locks.h"
#include "daemon/tables/node_table.h"

namespace scopedfs::daemon {

// An open file handle (fuse_file_info::fh).
struct OpenFile {
  OpenFile(base::UniqueFd fd_in, std::shared_ptr<Node> node_in)
      : fd(std::move(fd_in)), node(std::move(node_in)), plan(node->object()) {}

  base::UniqueFd fd;
  std::shared_ptr<Node> node;
  bool passthrough = false;
  bool writable = false;
  // The app whose budget the handle is charged to (Filesystem::TakeHandleSlot), and the plans
  // its reads make; nullopt for root and the system uids.
  std::optional<uid_t> slot;
  // Redacted views: the shared fills of the version last read, of the node's object (the fd was
  // opened through the node, so it is that object: no name_to_handle_at to find it).
  RedactionPlan plan;
  // Every lock owner that asked for a record lock through this handle. A process's (POSIX) locks
  // go when it closes any fd of the file (FLUSH), but an open file description's (OFD) locks go
  // only with the description itself, of which the kernel tells nothing but RELEASE: so RELEASE
  // ends all of them.
  absl::Mutex lock_owners_mu;
  absl::flat_hash_set<uint64_t> lock_owners ABSL_GUARDED_BY(lock_owners_mu);

  bool redacted() const { return node->view != kRawView; }
  // The lower file its locks are held on (file_locks.h): every view of it shares them.
  FileLocks::FileKey lock_key() const { return node->object(); }
};

struct DirEntry {
  std::string name;
  ino_t ino;
  unsigned char type;
  dev_t dev = 0;   // 0 for . and ..
  off_t next = 0;  // the READDIR offset of the entry after it
  // The object's ObjectId::generation, when the listing read its identity (`identified`), and
  // whether the caller reads its raw view (views.h, CallerView): what READDIRPLUS needs to know
  // that the node the kernel may hold for the name is the one a lookup would give (ops_dir.cc).
  uint64_t generation = 0;
  bool identified = false;
  bool raw_view = true;
};

// An open directory handle (fuse_file_info::fh): the directory's fd and, under a policy whose
// listings depend on the caller, the filtered listing, taken once per open. Under a
// caller-independent policy the listing is the same for every caller, so the kernel caches it
// (FOPEN_CACHE_DIR) and each READDIR the kernel still sends reads the lower directory from the
// offset it names (ops_dir.cc); once OPENDIR was answered ENOSYS there is no handle at all (fh 0,
// DirOf gives null).
struct OpenDir {
  base::UniqueFd fd;
  std::optional<uid_t> slot;   // the app's handle-quota slot
  bool kernel_caches = false;  // opened under a caller-independent policy: no snapshot
  // Opened while every caller lists the directory alike (ops_dir.cc, ListedAlikeByEveryCaller):
  // no snapshot, and only entries every caller lists are served.
  bool shared_listing = false;
  // An open that may read or fill the listing the kernel keeps of the directory (answered
  // FOPEN_CACHE_DIR: ops_dir.cc, KeptListing): the directory's node, whose KeptListing hears of
  // its listings and its end, and the fill it belongs to. Null for every other open.
  std::shared_ptr<Node> kept;
  uint64_t kept_fill = 0;
  std::vector<DirEntry> entries;
  bool loaded = false;
};

inline Filesystem* Fs(fuse_req_t req) {
  return static_cast<Filesystem*>(FuseSession::FilesystemOf(req));
}
inline OpenFile* FileOf(fuse_file_info* fi) { return reinterpret_cast<OpenFile*>(fi->fh); }
inline OpenDir* DirOf(fuse_file_info* fi) { return reinterpret_cast<OpenDir*>(fi->fh); }
std::string ProcPath(int fd);
std::string ChildPath(const std::string& parent, absl::string_view name);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_HANDLES_H_
