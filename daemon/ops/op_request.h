// One FUSE request as every sfs_<op> handler takes it: the filesystem, the request's one context
// (RequestContext), the op's latency timer and the reply. A handler builds an OpRequest, calls
// its Do<Op> (which returns 0 or an errno) and replies through it exactly once; a failure that a
// refusal caused is written to the audit log on the way out (RequestContext::Audited), so no op
// can reply without auditing; and a request that changed a file drops, before its reply, the
// attributes the kernel may cache for the file's other views (Changed). Private to the op files,
// as handlers.h.
#ifndef SCOPEDFS_DAEMON_OPS_OP_REQUEST_H_
#define SCOPEDFS_DAEMON_OPS_OP_REQUEST_H_

#include <sys/stat.h>

#include <chrono>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "daemon/judge/request_context.h"
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

class OpRequest {
 public:
  // `timed`: the stats row the op's latency goes to; nullopt for the ops `scopedfsctl stats` does
  // not time (FORGET, FLUSH, RELEASE, ...).
  OpRequest(fuse_req_t req, std::optional<OpKind> timed);
  OpRequest(const OpRequest&) = delete;
  OpRequest& operator=(const OpRequest&) = delete;

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
  // nodes (the raw view's, whose attributes a one-user mount caches with its name, when an app
  // owed the redacted view changed the file, or the other way round) are dropped before the reply
  // goes out (KernelNotifier::InvalidateAttributes), so no app sees them stale once the change
  // has returned. Called after the change is made. `through`: the node the request came through,
  // left alone; the overload by object drops every node of the object (a change by name,
  // where the kernel's dentry may lead to either view).
  void Changed(const Node& through) { Changed(through.object(), through.id); }
  void Changed(const ObjectId& object, NodeId through = 0);
  // Changed(node) for the node `ino`, if the table still has it.
  void ChangedThrough(fuse_ino_t ino);

  // `err`, after auditing it: when it is a failure and the context's latest decision refused,
  // one "denied" line. Replying through the Reply* methods does this already.
  int Audited(int err) { return ctx_ ? ctx_->Audited(err) : err; }

  // The replies. Each ends the request (fuse_req_t is gone after it) and audits a failure.
  void ReplyErr(int err);
  // LOOKUP, MKDIR, MKNOD, SYMLINK, LINK: `err` or the entry.
  void ReplyEntry(int err, const fuse_entry_param& e);
  // GETATTR, SETATTR: `err` or the attributes, their inode number as presented, cached for as
  // long as AttrTimeoutFor says.
  // `ino`: a GETATTR's inode, whose attributes keep the timeout its name was published with when
  // they are cached with the name (CachesAttrsWithName); 0 for replies that are not a GETATTR's.
  void ReplyAttr(int err, struct stat st, fuse_ino_t ino = 0);
  // OPEN, CREATE (`entry` non-null): `err`, counted as a refused open, or the open handle, with
  // the backing id when the open is passthrough. Returns false when a handle was sent and the
  // reply did not reach the kernel (it rejected it: the request is gone, or the transport could
  // not carry it): the kernel holds no such handle and will send no RELEASE for it, so the
  // caller must release it (and, for CREATE, forget the entry's lookup) itself.
  bool ReplyOpened(int err, fuse_file_info* fi, int backing_id, const fuse_entry_param* entry);
  // WRITE, COPY_FILE_RANGE: `written` bytes.
  void ReplyWrite(size_t written);

  // Drops anything Changed recorded and not dropped yet (a handler that replied otherwise).
  ~OpRequest() { DropOtherViewsAttributes(); }

 private:
  struct ChangedObject {
    ObjectId object;
    NodeId through;
  };
  void DropOtherViewsAttributes();

  fuse_req_t req_;
  Filesystem* fs_;
  // A rename changes at most two objects (the moved one and the one it replaces).
  absl::InlinedVector<ChangedObject, 2> changed_;
  std::optional<OpTimer> timer_;
  std::optional<RequestContext> ctx_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_OP_REQUEST_H_
