// Namespace ops that remove or move a name: UNLINK, RMDIR, RENAME and LINK. Each is judged at the
// names' current paths under the namespace lock (filesystem.h), runs the checks of
// namespace_checks.cc, and reports what it moved or removed to the node table.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <functional>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "daemon/judge/caller_creds.h"
#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/namespace_checks.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

// After the lower object `removed` (an O_PATH fd of it, stat'ed before) lost the name (parent,
// name) through the mount. Its nodes can no longer be resolved by that name; a file's raw view
// keeps no idle backing id (backing_files.h), which would hold an unlinked file's space. When that
// was its last name, its handle opens no more (filesystems refuse handles of unlinked inodes), so
// each node the kernel still holds (an fd, an O_PATH fd, a cwd) keeps the fd and reaches the
// object through it, as a native fstat does, until the kernel forgets the node.
void LostName(Filesystem* fs, const ObjectId& object, NodeId parent, const std::string& name,
              const Child& removed) {
  fs->nodes().Unlinked(object, parent, name);
  if (std::shared_ptr<Node> node = fs->nodes().Find(object, kRawView)) fs->backing().DropIdle(node);
  bool last_name = S_ISDIR(removed.st.st_mode) || removed.st.st_nlink <= 1;
  if (!last_name || !removed.fd.valid()) return;
  for (View view : {kRawView, kRedactedView}) {
    std::shared_ptr<Node> node = fs->nodes().Find(object, view);
    if (node == nullptr) continue;
    base::UniqueFd kept(fcntl(removed.fd.get(), F_DUPFD_CLOEXEC, 0));
    if (kept.valid()) fs->nodes().KeepRemoved(node.get(), std::move(kept));
  }
}

// After a removal or move of the lower name `real` through another spelling (`asked`, the name
// the kernel sent): the kernel may still hold a dentry of the lower spelling for the old object,
// which it was not told about; it is dropped (from the notifier thread: the kernel holds the
// directory's lock until this request is answered).
void ForgetOtherSpelling(Filesystem* fs, fuse_ino_t parent, const std::string& real,
                         const char* asked) {
  if (real == asked || fs->session() == nullptr) return;
  fs->session()->notifier().InvalidateEntry(parent, real);
}

// The node whose inode the kernel's dentry of (parent, name) leads to, where the table can tell:
// the object's only node, given that name by the last reply about it. The kernel updates that
// inode itself at a successful UNLINK (its link count and ctime: fuse_entry_unlinked), so only
// the object's other nodes need telling (OpRequest::Changed). 0 where it cannot tell: both views
// of the object are known, or its node was last given another name (a hard link, another
// spelling); every node is then told, as before.
NodeId KernelsNodeOf(Filesystem* fs, const ObjectId& object, NodeId parent,
                     const std::string& name) {
  std::shared_ptr<Node> raw = fs->nodes().Find(object, kRawView);
  std::shared_ptr<Node> redacted = fs->nodes().Find(object, kRedactedView);
  if ((raw == nullptr) == (redacted == nullptr)) return 0;
  const Node& only = raw != nullptr ? *raw : *redacted;
  return fs->nodes().NamedAs(only.id, parent, name) ? only.id : 0;
}

// `op`: told of the removed object's change (its link count and ctime: OpRequest::Changed).
int DoRemove(Filesystem* fs, OpRequest& op, fuse_ino_t parent, const char* name, bool directory) {
  const RequestContext& ctx = op.ctx();
  absl::MutexLock ns(&fs->namespace_mu());
  NamespaceLockHeld ns_held;
  NoScanWait no_scan;  // a file not scanned yet is judged uncertain, not scanned under the lock
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  Child child;
  std::string real;
  // Only the facts the caller's decisions read (FindsName, Decide): a policy that reads no
  // content (permissive), or a caller whose LOOKUP and removal of this file its content cannot
  // decide (an owner under Android's rules), queues no location scan of every file it removes,
  // which the scan threads would then spend the CPU on while the caller removes the next.
  FactNeeds needs = NeedsOf(ctx.engine());
  bool content_decides = true;
  std::function<bool(const FileInfo&)> gate =
      ContentDecidesForChild(ctx, &child, &content_decides, directory ? OP_RMDIR : OP_DELETE);
  needs.content_decides = &gate;
  if (int err = OpenLowerChild(fs, p, name, &child, &real, needs)) return err;
  bool is_dir = S_ISDIR(child.st.st_mode);
  if (!FindsName(ctx, child.path, is_dir, child.info)) return ENOENT;
  if (directory != is_dir) return directory ? ENOTDIR : EISDIR;
  if (int err =
          Verdict(ctx.Decide(directory ? OP_RMDIR : OP_DELETE, child.path, is_dir, &child.info))) {
    return err;
  }
  DirStamp before = fs->case_index().Before(p.fd.get(), p.node->object());
  ObjectId object = ObjectOf(child);
  if (unlinkat(p.fd.get(), real.c_str(), directory ? AT_REMOVEDIR : 0) != 0) return errno;
  fs->NamespaceChanged();
  fs->case_index().Removed(p.fd.get(), before, real);
  if (!is_dir) op.Changed(object, real == name ? KernelsNodeOf(fs, object, parent, real) : 0);
  LostName(fs, object, parent, real, child);
  ForgetOtherSpelling(fs, parent, real, name);
  return 0;
}

// Whether CheckNoGain looks at content (it does not where no decision depends on the place):
// only then must the facts it saw under the namespace lock be current.
bool GainChecked(const RequestContext& ctx) {
  return ctx.engine() == nullptr || !ctx.engine()->place_independent();
}

// The checks of a rename or link that no decision of the caller's makes (CheckLayoutMove,
// CheckNoGain) refuse the move itself: audited as refusals of `op` onto `to`, naming the check.
int LayoutRefused(const RequestContext& ctx, int err, scopedfs::Op op, const std::string& to,
                  bool directory, const FileInfo& info) {
  if (err == 0) return 0;
  return ctx.RefusedByCheck(err, "(layout move rules)", op, to, directory, &info);
}

// The storage's top-level `Android` directory, in any case (under the device layout a user's:
// `0/Android`). Under Android semantics no caller renames it (EACCES), as MediaProvider's
// do_rename answers before asking anything else: it holds the bind mounts of Android/data and
// Android/obb.
bool IsAndroidDirectory(const RequestContext& ctx, const std::string& path) {
  if (ctx.engine() == nullptr) return false;
  absl::StatusOr<policy::PathInfo> info =
      ctx.engine()->layout().Classify(ctx.PolicyPath(path), policy::kAnyPathBytes);
  return info.ok() && info->depth == DEPTH_TOP && absl::EqualsIgnoreCase(info->top_dir, "Android");
}
int GainRefused(const RequestContext& ctx, int err, scopedfs::Op op, const std::string& to,
                bool directory, const FileInfo& info) {
  if (err != EXDEV) return err;  // 0, kFactsNotCurrent (retried) or a failure to look
  return ctx.RefusedByCheck(err, "(a move may not let any app do more)", op, to, directory, &info);
}

// `op`: told of the moved and the replaced object's change (their ctime, the replaced one's link
// count: OpRequest::Changed).
int DoRename(Filesystem* fs, OpRequest& op, fuse_ino_t parent, const char* name,
             fuse_ino_t newparent, const char* newname, unsigned int flags) {
  const RequestContext& ctx = op.ctx();
  if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)) return EINVAL;
  // Android semantics: MediaProvider's do_rename takes RENAME_NOREPLACE only (the kernel's VFS
  // has checked the target is free); RENAME_EXCHANGE fails EINVAL for every caller.
  if (!fs->posix() && (flags & RENAME_EXCHANGE)) return EINVAL;
  WarmRenameFacts(fs, parent, name);
  if (flags & RENAME_EXCHANGE) WarmRenameFacts(fs, newparent, newname);
  // A directory's tree is judged before the lock is taken; under it, that verdict stands if no
  // name changed meanwhile, and only otherwise is the (bounded, scan-free) walk made there.
  TreeVerdict src_tree, dst_tree;
  PrecheckTreeMove(fs, ctx, parent, name, newparent, newname, &src_tree);
  if (flags & RENAME_EXCHANGE)
    PrecheckTreeMove(fs, ctx, newparent, newname, parent, name, &dst_tree);
  absl::MutexLock ns(&fs->namespace_mu());
  NamespaceLockHeld ns_held;
  NoScanWait no_scan;
  Resolved p, np;
  if (int err = Resolve(fs, parent, &p)) return err;
  if (int err = Resolve(fs, newparent, &np)) return err;
  if (int err = NameError(newname, EINVAL)) return err;
  // Both names as the lower tree spells them (LowerName): a target that folds onto an existing
  // entry replaces that entry and keeps its spelling, as a casefolded ext4 keeps the existing
  // directory entry's name when a rename replaces it.
  Child src;
  std::string src_name;
  if (int err = OpenLowerChild(fs, p, name, &src, &src_name)) return err;
  std::string dst_name;
  if (int err = LowerName(fs, np, newname, &dst_name)) return err;
  bool src_dir = S_ISDIR(src.st.st_mode);
  if (!FindsName(ctx, src.path, src_dir, src.info)) return ENOENT;
  bool exchange = (flags & RENAME_EXCHANGE) != 0;
  // One name in two spellings: a rename of a name onto itself, which does nothing (the kernel
  // ends `mv a A` itself, since both names reach one inode; this is for a request that got here).
  if (parent == newparent && src_name == dst_name) return (flags & RENAME_NOREPLACE) ? EEXIST : 0;
  std::string dst_path = ChildPath(np.path, dst_name);
  if (!fs->posix() && IsAndroidDirectory(ctx, src.path)) {
    return LayoutRefused(ctx, EACCES, OP_RENAME, dst_path, src_dir, src.info);
  }
  // The layout's rules first: they look at the two paths only, so their answer tells nothing
  // about what either place holds.
  if (int err = LayoutRefused(ctx, CheckLayoutMove(ctx, src.path, dst_path), OP_RENAME, dst_path,
                              src_dir, src.info)) {
    return err;
  }
  if (exchange) {
    if (int err = LayoutRefused(ctx, CheckLayoutMove(ctx, dst_path, src.path), OP_RENAME, src.path,
                                src_dir, src.info)) {
      return err;
    }
  }
  if (int err = Verdict(ctx.Decide(OP_RENAME, src.path, src_dir, &src.info))) return err;
  if (int err = CheckPlace(fs, ctx, np, dst_name.c_str(), src_dir, src.info, exchange, flags)) {
    return err;
  }
  if (int err = GainRefused(ctx,
                            CheckNoGain(fs, ctx, src.path, src.info, dst_path, dst_name,
                                        src.st.st_mode & S_IFMT, src.fd.get(), &src_tree),
                            OP_RENAME, dst_path, src_dir, src.info)) {
    return err;
  }
  if (exchange) {
    Child dst;
    if (int err = OpenChild(fs, np, dst_name.c_str(), &dst)) return err;
    bool dst_dir = S_ISDIR(dst.st.st_mode);
    if (int err = Verdict(ctx.Decide(OP_RENAME, dst.path, dst_dir, &dst.info))) return err;
    if (int err = CheckPlace(fs, ctx, p, src_name.c_str(), dst_dir, dst.info, true, flags)) {
      return err;
    }
    if (int err = GainRefused(ctx,
                              CheckNoGain(fs, ctx, dst.path, dst.info, src.path, src_name,
                                          dst.st.st_mode & S_IFMT, dst.fd.get(), &dst_tree),
                              OP_RENAME, src.path, dst_dir, dst.info)) {
      return err;
    }
  }
  // What the destination name holds now: replaced (so its nodes lose that name) or, for an
  // exchange, moved to the source name.
  Child replaced;
  FactNeeds no_facts;  // only its object, kind and link count are used (LostName)
  no_facts.owner = false;
  no_facts.content = false;
  bool had_target = OpenChild(fs, np, dst_name.c_str(), &replaced, no_facts) == 0;
  if (no_scan.missed() && GainChecked(ctx)) return kFactsNotCurrent;
  ObjectId src_object = ObjectOf(src);
  ObjectId replaced_object = had_target ? ObjectOf(replaced) : ObjectId{};
  DirStamp before = fs->case_index().Before(np.fd.get(), np.node->object());
  if (renameat2(p.fd.get(), src_name.c_str(), np.fd.get(), dst_name.c_str(), flags) != 0) {
    return errno;
  }
  fs->NamespaceChanged();
  if (!had_target && parent != newparent) {
    fs->case_index().Added(np.fd.get(), before, dst_name);
  }
  if (had_target && !exchange) LostName(fs, replaced_object, newparent, dst_name, replaced);
  fs->nodes().Moved(src_object, parent, src_name, newparent, dst_name);
  if (!S_ISDIR(src.st.st_mode)) op.Changed(src_object);
  if (had_target && !S_ISDIR(replaced.st.st_mode)) op.Changed(replaced_object);
  if (had_target && exchange) {
    fs->nodes().Moved(replaced_object, newparent, dst_name, parent, src_name);
  }
  ForgetOtherSpelling(fs, parent, src_name, name);
  ForgetOtherSpelling(fs, newparent, dst_name, newname);
  return 0;
}

// Scans the file a link will check before the namespace lock is taken (as WarmRenameFacts).
void WarmNodeFacts(Filesystem* fs, fuse_ino_t ino) {
  Resolved r;
  struct stat st;
  if (Resolve(fs, ino, &r) != 0 || StatFd(r.fd.get(), &st) != 0) return;
  (void)InfoOfNode(fs, r, st);
}

int DoLink(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, fuse_ino_t newparent,
           const char* newname, fuse_entry_param* e) {
  WarmNodeFacts(fs, ino);
  absl::MutexLock ns(&fs->namespace_mu());
  NamespaceLockHeld ns_held;
  NoScanWait no_scan;
  Visible v;
  Resolved np;
  if (int err = ResolveVisible(fs, ctx, ino, &v)) return err;
  if (int err = Resolve(fs, newparent, &np)) return err;
  if (int err = NameError(newname, EINVAL)) return err;
  if (v.dir) return EPERM;
  const Resolved& r = v.r;
  const FileInfo& info = v.info;
  std::string to = ChildPath(np.path, newname);
  bool nameless = v.st.st_nlink == 0;
  if (!nameless) {
    if (int err =
            LayoutRefused(ctx, CheckLayoutMove(ctx, r.path, to), OP_CREATE, to, false, info)) {
      return err;
    }
  }
  bool exists;
  if (int err = CheckFreeName(fs, ctx, np, newname, &exists)) return err;
  if (exists) return EEXIST;
  FileInfo placed{media::FactsFromFormat(newname, info.facts.format), std::nullopt, nullptr};
  if (int err = Verdict(ctx.Decide(OP_CREATE, to, false, &placed))) {
    return err;
  }
  // A link must not let any app do more to a file it can already reach by name. A nameless
  // O_TMPFILE file (the only kind the kernel lets us link with no links: O_TMPFILE without
  // O_EXCL, never linked before) is reached by name by no one; naming it is judged as the create
  // it amounts to, just above, with its content as it is now.
  if (!nameless) {
    if (int err =
            GainRefused(ctx, CheckNoGain(fs, ctx, r.path, info, to, newname, S_IFREG, r.fd.get()),
                        OP_CREATE, to, false, info)) {
      return err;
    }
  }
  if (no_scan.missed() && !nameless && GainChecked(ctx)) return kFactsNotCurrent;
  if (linkat(r.fd.get(), "", np.fd.get(), newname, AT_EMPTY_PATH) != 0) return errno;
  fs->NamespaceChanged();
  return EntryFor(fs, ctx, newparent, np, newname, true, e);
}

// Runs a rename or link, whose checks never scan under the namespace lock: when they found a
// file whose facts were not current (kFactsNotCurrent), the lock is released, the op warms them
// again (each attempt waits at most kDirLockedScanWait) and tries again. Still not current after
// the last attempt: EXDEV, as the check cannot vouch for the move (mv then copies, which reads
// only what the caller may read).
int RetryWhileScanning(uid_t app, const std::function<int()>& op) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    ScanWait wait(app, kDirLockedScanWait);
    int err = op();
    if (err != kFactsNotCurrent) return err;
    if (attempt == kAttempts) return EXDEV;
  }
}

void sfs_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  OpRequest op(req, FUSE_UNLINK);
  op.ctx().set_request_op(OP_DELETE);
  op.ReplyErr(DoRemove(op.fs(), op, parent, name, false));
}

void sfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  OpRequest op(req, FUSE_RMDIR);
  op.ctx().set_request_op(OP_RMDIR);
  op.ReplyErr(DoRemove(op.fs(), op, parent, name, true));
}

void sfs_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
                const char* newname, unsigned int flags) {
  OpRequest op(req, flags != 0 ? FUSE_RENAME2 : FUSE_RENAME);
  op.ctx().set_request_op(OP_RENAME);
  op.ReplyErr(RetryWhileScanning(fuse_req_ctx(req)->uid, [&] {
    return DoRename(op.fs(), op, parent, name, newparent, newname, flags);
  }));
}

void sfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  OpRequest op(req, FUSE_LINK);
  if (!op.fs()->posix()) return op.ReplyErr(kNoLinksOnAndroid);
  fuse_entry_param e;
  op.ctx().set_request_op(OP_CREATE);
  int err = RetryWhileScanning(fuse_req_ctx(req)->uid, [&] {
    return DoLink(op.fs(), op.ctx(), ino, newparent, newname, &e);
  });
  if (err == 0) op.ChangedThrough(ino);  // its link count and ctime
  op.ReplyEntry(err, e);
}

}  // namespace scopedfs::daemon
