// One FUSE request as every sfs_<op> handler takes it: the filesystem, the request's one context
// (RequestContext), the op's latency timer and the reply. A handler builds an OpRequest with the
// opcode it serves, calls its Do<Op> (which returns 0 or an errno) and replies through it. Every
// reply kind the ops send is a method here, and the OpRequest answers each request once: a second
// reply is not sent, and a request left without one is answered EIO when the OpRequest goes;
// both are counted (Stats::reply_defects) and logged. Each reply passes the audit once on its way
// out (RequestContext::Audited: a failure that a refusal caused is one "denied" line), and is
// counted per opcode beside the requests the transport read (`scopedfsctl stats`), so a test
// can check that every request got one reply and one audit decision. A request that changed a
// file drops, before its reply, the attributes the kernel may cache for the file's other views
// (Changed). A reply given later from another thread (a lock wait) is handed off with Defer.
// Private to the op files, as handlers.h.
#ifndef SCOPEDFS_DAEMON_OPS_OP_REQUEST_H_
#define SCOPEDFS_DAEMON_OPS_OP_REQUEST_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/inlined_vector.h"
#include "daemon/judge/request_context.h"
#include "daemon/kernel/after_reply.h"
#include "daemon/kernel/fuse_session.h"
#include "daemon/observe/stats.h"
#include "daemon/tables/node_table.h"

namespace scopedfs::daemon {

class Filesystem;

// Records one op's latency in the stats when it goes out of scope.
class OpTimer {
 public:
  OpTimer(Stats& stats, OpKind kind)
      : stats_(stats), kind_(kind), start_(std::chrono::steady_clock::now()) {}
  ~OpTimer();

 private:
  Stats& stats_;
  OpKind kind_;
  std::chrono::steady_clock::time_point start_;
};

// A reply the kernel waits for while a lock wait is queued (OpRequest::Defer), given once, from
// whichever thread grants, refuses or interrupts the wait. Copyable so that the lock queue's
// callback can hold it; FileLocks calls it once.
class DeferredReply {
 public:
  void Err(int err) const;

 private:
  friend class OpRequest;
  DeferredReply(fuse_req_t req, Stats* stats, uint32_t opcode)
      : req_(req), stats_(stats), opcode_(opcode) {}
  fuse_req_t req_;
  Stats* stats_;
  uint32_t opcode_;
};

class OpRequest {
 public:
  // `opcode`: the FUSE opcode the kernel sent (linux/fuse.h's FUSE_*): the replies are counted
  // under it, and its latency goes to the stats row TimedKindOf names (none for FORGET, FLUSH,
  // RELEASE, ...).
  OpRequest(fuse_req_t req, uint32_t opcode);
  OpRequest(const OpRequest&) = delete;
  OpRequest& operator=(const OpRequest&) = delete;
  // A request not answered by now is answered EIO and counted as a defect.
  ~OpRequest();

  fuse_req_t req() const { return req_; }
  Filesystem* fs() const { return fs_; }
  // The request's context, built on first use and then the same for the whole request: ops that
  // decide nothing (READ, FSYNC, ...) never build one (with SELinux on, it asks the kernel for
  // the caller's domain), and an op that decides twice (WRITE's re-judgement) uses one.
  RequestContext& ctx();

  // This request changed the lower object (dev, ino): its size, times, mode, owner or link count
  // (a write, truncate, chmod, utimes, fallocate, copy, O_TRUNC open, link, unlink, rename or
  // xattr change). Each view of a file is a kernel inode of its own, and the kernel marks stale
  // only the attributes of the inode the request came through; those of the object's other
  // nodes are dropped before the reply goes out (KernelNotifier::InvalidateAttributes), so no
  // app sees them stale once the change has returned. Called after the change is made.
  // `through`: the node the request came through, left alone; the overload by object drops every
  // node of the object (a change by name, where the kernel's dentry may lead to either view).
  void Changed(const Node& through) { Changed(through.object(), through.id); }
  void Changed(const ObjectId& object, NodeId through = 0);
  // Changed(node) for the node `ino`, if the table still has it.
  void ChangedThrough(fuse_ino_t ino);

  // The replies. Each ends the request (fuse_req_t is gone after it); those that take an `err`
  // send it instead when it is not 0.
  void ReplyErr(int err);
  // LOOKUP, MKDIR, MKNOD, SYMLINK, LINK.
  void ReplyEntry(int err, const fuse_entry_param& e);
  // GETATTR, SETATTR: the attributes, their inode number as presented, cached for as long as
  // AttrTimeoutFor says. `ino`: a GETATTR's inode, whose attributes keep the timeout its name was
  // published with when they are cached with the name (CachesAttrsWithName); 0 otherwise.
  void ReplyAttr(int err, struct stat st, fuse_ino_t ino = 0);
  // OPEN, CREATE (`entry` non-null): `err`, counted as a refused open, or the open handle, with
  // the backing id when the open is passthrough. Returns false when a handle was sent and the
  // reply did not reach the kernel (it rejected it: the request is gone, or the transport could
  // not carry it): the kernel holds no such handle and will send no RELEASE for it, so the
  // caller must release it (and, for CREATE, forget the entry's lookup) itself.
  bool ReplyOpened(int err, fuse_file_info* fi, int backing_id, const fuse_entry_param* entry);
  // OPENDIR: the directory handle in `fi`.
  void ReplyOpendir(const fuse_file_info* fi);
  // WRITE, COPY_FILE_RANGE: `written` bytes.
  void ReplyWrite(size_t written);
  // READ, READDIR(PLUS), GETXATTR, LISTXATTR: the bytes.
  void ReplyBuf(const char* data, size_t size);
  // GETXATTR, LISTXATTR asked for the size only.
  void ReplyXattrSize(size_t size);
  void ReplyReadlink(const std::string& target);
  void ReplyStatfs(const struct statvfs& sv);
  // GETLK: the conflicting lock, or F_UNLCK.
  void ReplyLock(const struct flock& lock);
  void ReplyLseek(off_t offset);
  // FORGET, BATCH_FORGET: the kernel expects no answer.
  void ReplyNone();
  // Hands the reply to another thread: this OpRequest sends none, and the DeferredReply must.
  DeferredReply Defer();

 private:
  struct ChangedObject {
    ObjectId object;
    NodeId through;
  };
  // Whether a reply may go out now (the first one); a second is a defect, counted and not sent.
  // Drops the other views' attributes (Changed) first.
  bool Begin();
  // `err`, after auditing it once: when it is a failure and the context's latest decision
  // refused, one "denied" line.
  int Audited(int err);
  void DropOtherViewsAttributes();

  // Declared first, so destroyed last: what the request owes once its reply has gone runs after
  // the destructor's body (a missing reply's EIO).
  AfterReply after_reply_;
  fuse_req_t req_;
  Filesystem* fs_;
  uint32_t opcode_;
  bool answered_ = false;
  // A rename changes at most two objects (the moved one and the one it replaces).
  absl::InlinedVector<ChangedObject, 2> changed_;
  std::optional<OpTimer> timer_;
  std::optional<RequestContext> ctx_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_OP_REQUEST_H_
