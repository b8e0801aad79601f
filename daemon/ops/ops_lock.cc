// Lock ops: GETLK, SETLK/SETLKW (POSIX record locks) and FLOCK, all held on the lower file
// (file_locks.h), so they meet the locks of processes using the lower file directly. A lock that
// must be waited for is queued, never held on a worker thread.
//
// ANDROID semantics answer as a device does. MediaProvider implements no lock op: fcntl and OFD
// record locks are then the kernel's, held on the mount's inode of the file, which every process
// on a device shares. Here each view of a file is its own inode (node_table.h): kernel-held locks
// of an app reading the redacted view would never meet the owner's, so the daemon keeps serving
// record locks, on the lower file, where every view's meet, and they behave as a device's do.
// flock() is a device's answer: MediaProvider's pf_init asks for FUSE_FLOCK_LOCKS with no flock
// op, so the kernel sends flock() as a FUSE_SETLK with FUSE_LK_FLOCK, libfuse answers ENOSYS, and
// flock() fails ENOSYS on a device's shared storage; it does here.
#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <optional>

#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"

namespace scopedfs::daemon {
namespace {

// Waits are counted against the app that asks (root and system uids are not counted).
std::optional<uid_t> AppOf(OpRequest& op) {
  const RequestContext& ctx = op.ctx();
  return ctx.IsApp() ? std::optional<uid_t>(ctx.uid()) : std::nullopt;
}

// Queues `attempt` until it stops answering EAGAIN, and replies with its result then, from the
// thread that grants it; replies ENOLCK at once when the queue is full.
void ReplyWhenGranted(OpRequest& op, std::optional<uid_t> app, std::function<int()> attempt) {
  fuse_req_t req = op.req();
  Filesystem* fs = op.fs();
  DeferredReply reply = op.Defer();
  int err = fs->locks().Wait(
      app, [req] { return fuse_req_interrupted(req) != 0; }, std::move(attempt),
      [reply](int result) { reply.Err(result); });
  if (err != 0) reply.Err(err);
}

}  // namespace

void sfs_getlk(fuse_req_t req, fuse_ino_t, fuse_file_info* fi, struct flock* lock) {
  OpRequest op(req, FUSE_GETLK);
  OpenFile* file = FileOf(fi);
  if (int err = op.fs()->locks().GetLock(file->lock_key(), fi->lock_owner, file->fd.get(), lock)) {
    return op.ReplyErr(err);
  }
  op.ReplyLock(*lock);
}

void sfs_setlk(fuse_req_t req, fuse_ino_t, fuse_file_info* fi, struct flock* lock, int sleep) {
  OpRequest op(req, sleep ? FUSE_SETLKW : FUSE_SETLK);
  Filesystem* fs = op.fs();
  OpenFile* file = FileOf(fi);
  FileLocks* locks = &fs->locks();
  FileLocks::FileKey key = file->lock_key();
  uint64_t owner = fi->lock_owner;
  {
    absl::MutexLock lock(&file->lock_owners_mu);
    file->lock_owners.insert(owner);
  }
  // The handle outlives the request: the kernel holds the caller's file until the reply.
  int fd = file->fd.get();
  struct flock wanted = *lock;  // l_pid: the caller's process, as its F_GETLK reports it
  std::optional<uid_t> app = AppOf(op);
  int err = locks->SetLock(key, owner, fd, wanted, wanted.l_pid, app);
  if (err != EAGAIN || !sleep) return op.ReplyErr(err);
  ReplyWhenGranted(op, app, [locks, key, owner, fd, wanted, app] {
    return locks->SetLock(key, owner, fd, wanted, wanted.l_pid, app);
  });
}

// flock() locks belong to the open file: taken on the handle's own lower description, which
// every fd the caller dups from it shares, as natively.
void sfs_flock(fuse_req_t req, fuse_ino_t, fuse_file_info* fi, int op) {
  OpRequest request(req, (op & LOCK_NB) ? FUSE_SETLK : FUSE_SETLKW);
  Filesystem* fs = request.fs();
  if (!fs->posix()) return request.ReplyErr(ENOSYS);
  int fd = FileOf(fi)->fd.get();
  auto attempt = [fd, op] { return flock(fd, op | LOCK_NB) == 0 ? 0 : errno; };
  int err = attempt();
  if (err != EWOULDBLOCK || (op & LOCK_NB)) return request.ReplyErr(err);
  ReplyWhenGranted(request, AppOf(request), attempt);
}

}  // namespace scopedfs::daemon
