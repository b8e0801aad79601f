// The end of a file handle: FLUSH (every close of a descriptor: mapped writes, POSIX locks),
// RELEASE (the last close: locks, backing id, the handle; under strict visibility the head a
// lookup needs, read for the writer) and FSYNC.
#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "daemon/kernel/after_reply.h"
#include "daemon/kernel/kernel_notifier.h"
#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

namespace {

// FLUSH (every close of a descriptor) is needed only to release the closing owner's POSIX record
// locks where the daemon serves them: the kernel leaves that to FLUSH (fuse_setlk ignores the
// close-time unlock). Where the INIT reply did not claim POSIX locks the kernel keeps them itself
// and drops them at close, so FLUSH is answered ENOSYS and the kernel stops sending it for the
// mount (it still writes dirty pages back at close; flock() locks end at RELEASE either way).
// Otherwise it does nothing but that release (a lookup in the lock table when the owner holds
// none) and the reply: it is one of the three round trips of every open+close. The lower file
// sees its close when the handle goes (RELEASE); only a filesystem with a flush method would
// tell a close of a duplicate apart: NFS or FUSE, not ext4, and f2fs's acts only on its
// atomic-write ioctls, which no app reaches through the mount.
// Writes through a shared mapping of a passthrough open fault in the lower file (the mapping is
// the backing file's) and never reach the kernel's FUSE inode, which keeps the mtime and ctime it
// cached: the kernel refreshes them after a write(2), not after a fault, and a stat that asks for
// no atime is served from that cache. The handle's FLUSH (every close, answered before close(2)
// returns) is when the daemon hears of them: the kernel's attributes of the file go then. Writes
// through a mapping after its file's last close stay unseen until the attributes expire; doing
// this at RELEASE too made xfstests generic/478 (OFD and POSIX lock advice right after a close)
// fail in 4 runs of 4 over io_uring (FLUSH alone: 1 of 3), a lock race that extra work at close
// widens. Sent by the worker itself: an attributes-only invalidation waits for no page
// (kernel_notifier.h).
void AfterMappedWrites(Filesystem* fs, OpenFile* file) {
  if (!file->writable || !file->passthrough) return;
  MarkKernelAttrsStale(file->node.get());
  if (fs->session() != nullptr) fs->session()->notifier().InvalidateAttributes(file->node->id);
}

}  // namespace

void sfs_flush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  OpRequest op(req, FUSE_FLUSH);
  Filesystem* fs = op.fs();
  AfterMappedWrites(fs, FileOf(fi));
  if (fs->session() != nullptr && !fs->session()->serves_posix_locks()) {
    return op.ReplyErr(ENOSYS);
  }
  OpenFile* file = FileOf(fi);
  // A close releases the closing process's record locks on the file (POSIX).
  fs->locks().ReleaseOwner(file->lock_key(), fi->lock_owner);
  op.ReplyErr(0);
}

void CloseHandle(Filesystem* fs, OpRequest& op, OpenFile* file, bool flock_release) {
  fs->Unregister(file);
  // The last close of an open file ends its flock() lock. The lower description may outlive the
  // handle (the kernel keeps a passthrough backing file while other opens use it), so say so.
  if (flock_release) flock(file->fd.get(), LOCK_UN);
  // The end of an open file description ends its OFD locks (and any POSIX owner's left).
  {
    absl::MutexLock lock(&file->lock_owners_mu);
    for (uint64_t owner : file->lock_owners) fs->locks().ReleaseOwner(file->lock_key(), owner);
  }
  // Passthrough writes never reach the daemon: the handle's end is where they are known to stop.
  // The other view's cached attributes go too (OpRequest::Changed).
  if (file->writable) {
    Written(fs, file);
    op.Changed(*file->node);
  }
  if (!file->redacted()) fs->backing().Detach(file->node, file->passthrough);
  delete file;
}

namespace {

// Under STRICT visibility whether another app finds a file's name can depend on its content (its
// media class). The head a lookup needs is read when the writer's handle ends, on the writer's
// RELEASE after its reply (the kernel sends RELEASE after close returns), rather than at another
// app's first stat, whose ENOENT for a hidden file would then take a read longer than a missing
// name's (docs/security.md). A dup of the handle's descriptor keeps the object to read.
base::UniqueFd HeadToLearn(Filesystem* fs, const OpenFile& file) {
  if (!file.writable || file.redacted()) return base::UniqueFd();
  std::shared_ptr<const policy::Engine> engine = fs->engine();
  if (engine == nullptr || engine->visibility() != VISIBILITY_STRICT) return base::UniqueFd();
  return base::UniqueFd(fcntl(file.fd.get(), F_DUPFD_CLOEXEC, 0));
}

void LearnHead(Filesystem* fs, int fd, NodeId node) {
  struct stat st;
  std::string path;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !fs->nodes().PathOf(node, &path)) return;
  FactNeeds needs = NeedsOf(fs->engine().get());
  if (!needs.content) return;
  needs.location = false;
  InfoAtPath(fs, fd, path, st, needs);
}

}  // namespace

void sfs_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  OpRequest op(req, FUSE_RELEASE);
  Filesystem* fs = op.fs();
  OpenFile* file = FileOf(fi);
  base::UniqueFd head = HeadToLearn(fs, *file);
  NodeId node = file->node->id;
  CloseHandle(fs, op, file, fi->flock_release);
  op.ReplyErr(0);
  if (head.valid()) {
    auto kept = std::make_shared<base::UniqueFd>(std::move(head));
    AfterReply::Run([fs, kept, node] { LearnHead(fs, kept->get(), node); });
  }
}

void sfs_fsync(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  OpRequest op(req, FUSE_FSYNC);
  int fd = FileOf(fi)->fd.get();
  op.ReplyErr((datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : errno);
}

}  // namespace scopedfs::daemon
