// Namespace ops that make a name: CREATE (and O_TMPFILE), MKDIR, MKNOD and SYMLINK. Each is judged
// at the new name's path under the namespace lock (filesystem.h), with the name free in any case
// (namespace_checks.h), and made as the caller under POSIX semantics, as the daemon otherwise.
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

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "daemon/judge/caller_creds.h"
#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/namespace_checks.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

std::optional<PosixCaller> PosixCallerOf(Filesystem* fs, fuse_req_t req) {
  if (!fs->posix()) return std::nullopt;
  const fuse_ctx* c = fuse_req_ctx(req);
  return PosixCaller{c->uid, c->gid, c->umask};
}

// Runs `make` (the lower operation that makes an object) as the caller under POSIX semantics,
// as the daemon itself otherwise. Returns its errno.
int MakeAs(const PosixCaller* as, const std::function<int()>& make) {
  if (as == nullptr) return make() == 0 ? 0 : errno;
  ActingAsCaller acting(as->uid, as->gid, as->umask);
  if (acting.error() != 0) return acting.error();
  return make() == 0 ? 0 : errno;
}

int SetOwner(int fd, uid_t uid) {
  std::string value = absl::StrCat(uid);
  return fsetxattr(fd, kOwnerXattr, value.data(), value.size(), 0) == 0 ? 0 : errno;
}

// The parent a new name goes into, resolved, with the name checked and free of hidden or
// case-twin entries (CheckFreeName). *exists_visible: the name exists and the caller sees it.
// A name the caller's lookup never finds, whatever is there (another package's
// Android/data/<pkg>, a name outside every storage at the device layout's mount root), is not
// there for it: it gets the answer its creation (`op` of a `directory` with `info`) would get if
// it were absent, so that nothing tells the two apart. For another package's private directory
// that is ENOENT, MediaProvider's answer (isDirAccessAllowedForFuse,
// insertFileIfNecessaryForFuse) where EACCES would tell that the package's directory exists.
int ResolveNewName(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent, const char* name,
                   scopedfs::Op op, bool directory, const FileInfo* info, Resolved* p,
                   bool* exists_visible) {
  if (int err = Resolve(fs, parent, p)) return err;
  if (int err = NameError(name, EINVAL)) return err;
  std::string real;
  int err = CheckFreeName(fs, ctx, *p, name, exists_visible, &real);
  if (err == EACCES && ctx.HiddenWhateverIsThere(ChildPath(p->path, real))) {
    int absent = Verdict(ctx.Decide(op, ChildPath(p->path, name), directory, info));
    return absent != 0 ? absent : EACCES;
  }
  return err;
}

// The entry for a name just made by the caller. A new file or directory is the caller's own (raw
// view); a new link to an existing file shows the caller the view it reads there.
int EntryFor(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent, const Resolved& p,
             const char* name, bool existing_content, fuse_entry_param* e) {
  Child child;
  child.fd.reset(openat(p.fd.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (child.fd.get() < 0) return errno;
  if (fstatat(child.fd.get(), "", &child.st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
    return errno;
  View view = kRawView;
  if (existing_content) {
    child.path = ChildPath(p.path, name);
    child.info = fs->facts().Lookup(child.fd.get(), child.st, name, NeedsOf(ctx.engine()));
    view = CallerView(ctx, child);
  }
  PublishEntry(fs, ctx, parent, name, &child, view, e);
  return 0;
}

// The open handle of a file the caller just made, published as `node`: passthrough when the
// backing manager allows.
void OpenCreated(Filesystem* fs, std::shared_ptr<Node> node, base::UniqueFd fd,
                 std::optional<uid_t> slot, fuse_file_info* fi, int* backing_id) {
  bool userspace;
  *backing_id = fs->backing().Attach(node, fd.get(), &userspace);
  auto* file = new OpenFile(std::move(fd), std::move(node));
  file->passthrough = !userspace;
  file->slot = slot;
  // As an OPEN's: RELEASE then knows that writes may have gone through it, and an ftruncate of
  // it once unlinked is allowed (O_CREAT may also come with O_RDONLY).
  file->writable = (fi->flags & O_ACCMODE) != O_RDONLY;
  fi->fh = reinterpret_cast<uint64_t>(file);
  fs->Register(file);
}

int DoCreate(Filesystem* fs, const RequestContext& ctx, const PosixCaller* as, fuse_ino_t parent,
             const char* name, mode_t mode, fuse_file_info* fi, fuse_entry_param* e,
             int* backing_id) {
  absl::ReaderMutexLock ns(&fs->namespace_mu());
  NamespaceLockHeld ns_held;
  Resolved p;
  bool exists;
  FileInfo info{media::FactsFromName(name), std::nullopt, nullptr};
  if (int err = ResolveNewName(fs, ctx, parent, name, OP_CREATE, false, &info, &p, &exists)) {
    return err;
  }
  std::string path = ChildPath(p.path, name);
  if (exists) {
    if (fi->flags & O_EXCL) return EEXIST;
    // O_CREAT on an existing visible file is an open of it.
    if (int err = DoLookup(fs, ctx, parent, name, e)) return err;
    int err = DoOpen(fs, ctx, e->ino, fi, backing_id);
    if (err != 0) fs->nodes().Forget(e->ino, 1);
    return err;
  }
  if (int err = Verdict(ctx.Decide(OP_CREATE, path, false, &info))) return err;
  int flags = (fi->flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC) & ~O_NOCTTY;
  mode_t clamped = as != nullptr ? mode : AndroidNewMode(ctx, mode, /*directory=*/false);
  std::optional<uid_t> slot;
  if (int err = fs->TakeHandleSlot(ctx, &slot)) return err;
  base::UniqueFd fd;
  DirStamp before = fs->case_index().Before(p.fd.get(), p.node->object());
  uint64_t record_epoch = fs->facts().RecordEpoch();
  if (int err = MakeAs(as, [&] {
        fd.reset(openat(p.fd.get(), name, flags, clamped));
        return fd.valid() ? 0 : -1;
      })) {
    fs->ReleaseHandleSlot(slot);
    return err;
  }
  fs->NamespaceChanged();
  fs->case_index().Added(p.fd.get(), before, name);
  // ANDROID: made with whatever umask the daemon was started with (nothing sets it: a umask of 0
  // for the whole process would also apply to the daemon's own files), and the lower filesystem
  // may drop bits or an ACL default add them; so the clamped mode is set exactly here, from a mode
  // that was at most as open until then, and the creator recorded.
  // POSIX: the lower filesystem made it as the caller's own, with the caller's umask.
  int err = 0;
  if (as == nullptr) err = fchmod(fd.get(), clamped) == 0 ? 0 : errno;
  if (err == 0 && as == nullptr) err = SetOwner(fd.get(), ctx.uid());
  if (err == 0) fs->NamespaceChanged();  // the creator is part of what checks look at
  if (err == 0) err = fs->Label(fd.get(), path, S_IFREG);
  if (err == 0) err = EntryFor(fs, ctx, parent, p, name, false, e);
  if (err != 0) {
    // A file without its creator (or its label) would escape the policy, and one the kernel was
    // never told about would be a surprise: undo rather than keep it.
    unlinkat(p.fd.get(), name, 0);
    fs->ReleaseHandleSlot(slot);
    return err;
  }
  std::shared_ptr<Node> node = fs->nodes().Get(e->ino);
  fs->facts().MadeWithoutRecord(node->object(), record_epoch);
  OpenCreated(fs, std::move(node), std::move(fd), slot, fi, backing_id);
  return 0;
}

// O_TMPFILE, under POSIX semantics (the session hands FUSE_TMPFILE to CREATE, name "/"). The file
// is made nameless in the lower directory, as the caller, like any create. Until a LINK names it,
// the node table knows it as kTmpfileName in that directory, so the policy judges it as a file
// there: its creation now, and every later request on it (fstat, fchmod, a reopen through
// /proc/self/fd). Linking it is an ordinary LINK, judged at the new name with the content the
// file has by then; O_EXCL (never linkable) binds the lower file too.
int DoTmpfile(Filesystem* fs, const RequestContext& ctx, const PosixCaller* as, fuse_ino_t parent,
              mode_t mode, fuse_file_info* fi, fuse_entry_param* e, int* backing_id) {
  if (as == nullptr || (fi->flags & O_TMPFILE) != O_TMPFILE) return EOPNOTSUPP;
  absl::ReaderMutexLock ns(&fs->namespace_mu());
  NamespaceLockHeld ns_held;
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  Child child;
  child.path = ChildPath(p.path, kTmpfileName);
  FileInfo info{media::FactsFromName(kTmpfileName), std::nullopt, nullptr};
  if (int err = Verdict(ctx.Decide(OP_CREATE, child.path, false, &info))) return err;
  int flags = (fi->flags & ~(O_CREAT | O_NOCTTY)) | O_TMPFILE | O_CLOEXEC;
  std::optional<uid_t> slot;
  if (int err = fs->TakeHandleSlot(ctx, &slot)) return err;
  base::UniqueFd fd;
  int err = MakeAs(as, [&] {
    fd.reset(openat(p.fd.get(), ".", flags, mode));
    return fd.valid() ? 0 : -1;
  });
  if (err == 0) err = fs->Label(fd.get(), child.path, S_IFREG);
  if (err == 0) {
    child.fd.reset(open(ProcPath(fd.get()).c_str(), O_PATH | O_CLOEXEC));
    if (!child.fd.valid() || fstat(child.fd.get(), &child.st) != 0) err = errno;
  }
  if (err != 0) {
    fs->ReleaseHandleSlot(slot);  // the nameless file goes with its last fd
    return err;
  }
  OpenCreated(fs, PublishEntry(fs, ctx, parent, kTmpfileName, &child, kRawView, e), std::move(fd),
              slot, fi, backing_id);
  return 0;
}

int DoMkdir(Filesystem* fs, const RequestContext& ctx, const PosixCaller* as, fuse_ino_t parent,
            const char* name, mode_t mode, fuse_entry_param* e) {
  absl::ReaderMutexLock ns(&fs->namespace_mu());
  NamespaceLockHeld ns_held;
  Resolved p;
  bool exists;
  if (int err = ResolveNewName(fs, ctx, parent, name, OP_MKDIR, true, nullptr, &p, &exists)) {
    return err;
  }
  if (exists) return EEXIST;
  std::string path = ChildPath(p.path, name);
  if (int err = Verdict(ctx.Decide(OP_MKDIR, path, true, nullptr))) return err;
  mode_t clamped = as != nullptr ? mode : AndroidNewMode(ctx, mode, /*directory=*/true);
  DirStamp before = fs->case_index().Before(p.fd.get(), p.node->object());
  if (int err = MakeAs(as, [&] { return mkdirat(p.fd.get(), name, clamped); })) return err;
  fs->NamespaceChanged();
  fs->case_index().Added(p.fd.get(), before, name);
  base::UniqueFd dfd(openat(p.fd.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  int err = dfd.valid() ? 0 : errno;
  if (err == 0 && as == nullptr) err = fchmod(dfd.get(), clamped) == 0 ? 0 : errno;
  if (err == 0 && as == nullptr) err = SetOwner(dfd.get(), ctx.uid());
  if (err == 0) fs->NamespaceChanged();
  if (err == 0) err = fs->Label(dfd.get(), path, S_IFDIR);
  if (err == 0) err = EntryFor(fs, ctx, parent, p, name, false, e);
  if (err != 0) {
    unlinkat(p.fd.get(), name, AT_REMOVEDIR);
    return err;
  }
  return 0;
}

// The parent of a new symlink or special file, with the name free and its creation allowed.
int ResolveNewNonDirectory(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent,
                           const char* name, Resolved* p) {
  bool exists;
  FileInfo info{media::FactsFromName(name), std::nullopt, nullptr};
  if (int err = ResolveNewName(fs, ctx, parent, name, OP_CREATE, false, &info, p, &exists)) {
    return err;
  }
  if (exists) return EEXIST;
  return Verdict(ctx.Decide(OP_CREATE, ChildPath(p->path, name), false, &info));
}

// POSIX semantics only (sfs_symlink): made as the caller, who owns it in the lower tree as for
// any object made there, so no creator xattr is written that could fail and leave it unowned.
int DoSymlink(Filesystem* fs, const RequestContext& ctx, const PosixCaller& as, const char* target,
              fuse_ino_t parent, const char* name, fuse_entry_param* e) {
  absl::ReaderMutexLock ns(&fs->namespace_mu());
  NamespaceLockHeld ns_held;
  Resolved p;
  if (int err = ResolveNewNonDirectory(fs, ctx, parent, name, &p)) return err;
  if (int err = MakeAs(&as, [&] { return symlinkat(target, p.fd.get(), name); })) return err;
  fs->NamespaceChanged();
  // As for create and mkdir: a symlink the kernel was never told about is not kept.
  int err = EntryFor(fs, ctx, parent, p, name, false, e);
  if (err != 0) unlinkat(p.fd.get(), name, 0);
  return err;
}

// FIFOs, sockets and device nodes: POSIX semantics only, made as the caller (so only root, with
// CAP_MKNOD, makes a device node). Android's emulated storage has none of them.
int DoMknod(Filesystem* fs, const RequestContext& ctx, const PosixCaller* as, fuse_ino_t parent,
            const char* name, mode_t mode, dev_t rdev, fuse_entry_param* e) {
  if (as == nullptr) return EPERM;
  mode_t type = mode & S_IFMT;
  if (type != S_IFIFO && type != S_IFSOCK && type != S_IFCHR && type != S_IFBLK &&
      type != S_IFREG) {
    return EINVAL;
  }
  absl::ReaderMutexLock ns(&fs->namespace_mu());
  NamespaceLockHeld ns_held;
  Resolved p;
  if (int err = ResolveNewNonDirectory(fs, ctx, parent, name, &p)) return err;
  if (int err = MakeAs(as, [&] { return mknodat(p.fd.get(), name, mode, rdev); })) return err;
  fs->NamespaceChanged();
  return EntryFor(fs, ctx, parent, p, name, false, e);
}

void sfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  OpRequest op(req, FUSE_MKDIR);
  fuse_entry_param e;
  op.ctx().set_request_op(OP_MKDIR);
  std::optional<PosixCaller> as = PosixCallerOf(op.fs(), req);
  op.ReplyEntry(DoMkdir(op.fs(), op.ctx(), as ? &*as : nullptr, parent, name, mode, &e), e);
}

void sfs_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  OpRequest op(req, FUSE_MKNOD);
  fuse_entry_param e;
  std::optional<PosixCaller> as = PosixCallerOf(op.fs(), req);
  op.ReplyEntry(DoMknod(op.fs(), op.ctx(), as ? &*as : nullptr, parent, name, mode, rdev, &e), e);
}

void sfs_symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  OpRequest op(req, FUSE_SYMLINK);
  fuse_entry_param e;
  std::optional<PosixCaller> as = PosixCallerOf(op.fs(), req);
  if (!as) return op.ReplyErr(kNoLinksOnAndroid);
  op.ctx().set_request_op(OP_CREATE);
  op.ReplyEntry(DoSymlink(op.fs(), op.ctx(), *as, link, parent, name, &e), e);
}

void sfs_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                fuse_file_info* fi) {
  OpRequest op(req, FUSE_CREATE);
  fuse_entry_param e;
  int backing_id = -1;
  op.ctx().set_request_op(OP_CREATE);
  std::optional<PosixCaller> as = PosixCallerOf(op.fs(), req);
  const PosixCaller* caller = as ? &*as : nullptr;
  int err = strcmp(name, "/") == 0
                ? DoTmpfile(op.fs(), op.ctx(), caller, parent, mode, fi, &e, &backing_id)
                : DoCreate(op.fs(), op.ctx(), caller, parent, name, mode, fi, &e, &backing_id);
  // O_CREAT without O_EXCL opens a file that exists, truncating it with O_TRUNC; a new file has
  // no other node.
  if (err == 0) op.ChangedThrough(e.ino);
  if (!op.ReplyOpened(err, fi, backing_id, &e)) {
    // The kernel never got the entry or the handle: no FORGET or RELEASE will come for them.
    CloseHandle(op.fs(), op, FileOf(fi), /*flock_release=*/false);
    ForgetWithIdleBacking(op.fs(), e.ino, 1);
  }
}

}  // namespace scopedfs::daemon
