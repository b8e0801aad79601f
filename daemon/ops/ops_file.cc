// File ops: OPEN (passthrough for raw views, mediated for redacted ones), SETATTR, and the I/O a
// mediated open sends to the daemon: READ (filled through redacted_read), WRITE, FALLOCATE,
// COPY_FILE_RANGE and LSEEK. The end of a handle (FLUSH, RELEASE, FSYNC) is ops_close.cc's.
#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/string_view.h"
#include "daemon/judge/caller_creds.h"
#include "daemon/judge/facts_record.h"
#include "daemon/kernel/after_reply.h"
#include "daemon/kernel/fuse_session.h"
#include "daemon/kernel/kernel_notifier.h"
#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

// POSIX semantics: what a write or truncate by a caller without CAP_FSETID does natively to a
// file's set-id bits: set-uid goes; set-gid goes where group execute is set, or else where the
// caller is not in the file's group. The kernel leaves this to the daemon
// (FUSE_HANDLE_KILLPRIV_V2), and a passthrough write runs with the daemon's credentials, which
// would keep them.
int KillSetId(const RequestContext& ctx, const Resolved& r, const struct stat& st) {
  mode_t kill = S_ISUID;
  if ((st.st_mode & S_ISGID) && ((st.st_mode & S_IXGRP) || !ProcessInGroup(ctx.pid(), st.st_gid))) {
    kill |= S_ISGID;
  }
  if ((st.st_mode & kill) == 0) return 0;
  return chmod(ProcPath(r.fd.get()).c_str(), st.st_mode & 07777 & ~kill) == 0 ? 0 : errno;
}

int DoOpen(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, fuse_file_info* fi,
           int* backing_id) {
  int flags = (fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW)) | O_CLOEXEC;
  // The lower file is opened only once the open is decided, read-only ones too: an open of the
  // lower file is seen outside the daemon (it breaks a lease, wakes an inotify or fanotify watcher
  // of the lower tree), so a refused caller must cause none. Deciding needs only the O_PATH fd
  // (the facts cache reads content through its own open, once per version).
  Resolved r;
  if (int err = Resolve(fs, ino, &r)) return err;
  MarkKernelAttrsStale(r.node.get());  // its reads and writes change atime, mtime and size
  struct stat st;
  if (int err = StatFd(r.fd.get(), &st)) return err;
  if (!S_ISREG(st.st_mode)) return EACCES;
  int accmode = fi->flags & O_ACCMODE;
  bool reads = accmode != O_WRONLY;
  bool writes = accmode != O_RDONLY || (fi->flags & O_TRUNC);
  bool redacted = r.node->view != kRawView;
  // The content (head and location scan) is read only where this open's decisions can depend on
  // it for this caller and creator (InfoForDecisions): not for an owner opening its own file
  // under Android's rules, whose every read would otherwise wait for a sweep of the file on the
  // scan threads. A caller that would be redacted if the file carried location depends on it
  // (Engine::DependsOnContent), so it is scanned as before; so is every redacted view's open.
  FileInfo info = redacted ? InfoOfNode(fs, r, st, NeedsOf(ctx.engine()))
                           : InfoForDecisions(fs, ctx, r, st, {OP_READ, OP_WRITE});
  ReadJudgement judged = JudgeRead(ctx, r.path, info);
  if (reads && !judged.decision.Permits()) return ErrnoOf(judged.decision);
  // The caller must read and write through the inode of its own view. A raw inode is never
  // served to a caller owed a redacted copy (and never opened for writing by one: a held raw fd
  // would be passthrough, out of the daemon's sight); a caller entitled to raw bytes that holds a
  // redacted inode (an fd passed to it) reads the redacted copy, which hides nothing it may not
  // see; but where the redacted view's name is cached, a walk by such a caller may end at the
  // redacted inode too, and is sent back to walk again to its own (views.h, RedactedNamesCached).
  if (judged.view != kRawView && !redacted) return ESTALE;
  if (judged.view == kRawView && redacted && RedactedNamesCached(fs)) return ESTALE;
  if (writes) {
    // OP_WRITE refuses callers the location guard redacts whenever the file can carry location,
    // so a redacted view is written only while its file is of no carrier format; its writes are
    // mediated and judged again each time (WriteAllowed).
    if (int err = Verdict(ctx.Decide(OP_WRITE, r.path, false, &info))) return err;
    // A read-modify-write of filled ranges would make the fills permanent in the owner's file.
    if (redacted && reads && media::FormatMayCarryLocation(info.facts.format)) return EACCES;
  }
  std::optional<uid_t> slot;
  if (int err = fs->TakeHandleSlot(ctx, &slot)) return err;
  base::UniqueFd fd(open(ProcPath(r.fd.get()).c_str(), flags));
  // Cleared at the open rather than at the first write, as passthrough writes never reach the
  // daemon; and only once the open has succeeded, so an open that fails changes nothing.
  int err = fd.valid() ? 0 : errno;
  if (err == 0 && writes && fs->posix() && ctx.uid() != 0) err = KillSetId(ctx, r, st);
  if (err != 0) {
    fs->ReleaseHandleSlot(slot);
    return err;
  }
  auto* file = new OpenFile(std::move(fd), r.node);
  file->slot = slot;
  file->writable = writes;
  if (redacted) {
    // Served in userspace through the page cache, which holds only redacted bytes; kept while
    // the lower file is unchanged, so repeated opens read from memory.
    // The daemon's own facts record (written on its own thread, facts_cache.h) moves only the
    // ctime: the pages and attributes of the version before it hold for the one after it.
    FileVersion version = VersionOf(st);
    ObjectId object = r.node->object();
    bool stale_attrs;
    {
      absl::MutexLock lock(&r.node->backing_mu);
      fi->keep_cache = !writes && fs->facts().SameBytes(object, r.node->cached_version, version);
      r.node->cached_version = writes ? FileVersion{} : version;
      // Attributes cached with the name may be of a version before a change made through the raw
      // view (the kernel updates the raw inode's only): dropped, so this open reads to the size
      // the file has.
      stale_attrs = r.node->attrs_cached_with_name.load(std::memory_order_relaxed) &&
                    !fs->facts().SameBytes(object, r.node->kernel_attrs_version, version);
      if (stale_attrs) r.node->kernel_attrs_version = FileVersion{};
    }
    if (stale_attrs && fs->session() != nullptr) {
      fs->session()->notifier().InvalidateAttributes(r.node->id);
    }
    *backing_id = -1;
    fs->stats().open_mediated.fetch_add(1);
    if (reads && judged.decision.outcome == OUTCOME_ALLOW_REDACTED) {
      ctx.AuditRedacted(OP_READ, r.path, info, judged.decision);
    }
    if (reads && judged.decision.outcome == OUTCOME_ALLOW &&
        (info.facts.media_class == MEDIA_CLASS_IMAGE ||
         info.facts.media_class == MEDIA_CLASS_VIDEO)) {
      // A photo or video without location, mediated all the same for a would-be-redacted reader.
      fs->stats().open_clean_media.fetch_add(1);
    }
  } else {
    bool userspace;
    *backing_id = fs->backing().Attach(r.node, file->fd.get(), &userspace);
    file->passthrough = !userspace;
    fi->keep_cache = 0;
  }
  fi->fh = reinterpret_cast<uint64_t>(file);
  fs->Register(file);
  return 0;
}

// Forgets the facts of a file changed through the mount (truncated, its times set, written),
// cached and recorded, unless the daemon made it and has recorded nothing on it since
// (FactsCache::MayHaveRecord). `fd`: O_PATH, or an open file's (`open_file`, no walk through
// /proc).
void ForgetFactsAfterChange(Filesystem* fs, const ObjectId& object, int fd, bool open_file) {
  fs->facts().Invalidate(object);
  if (!fs->facts().MayHaveRecord(object)) return;
  fs->stats().facts_records_dropped.fetch_add(1);
  if (open_file) {
    DropFactsRecordOfOpenFile(fd);
  } else {
    DropFactsRecord(fd);
  }
}

// FATTR_KILL_SUIDGID, which libfuse 3.14 passes on under the name FUSE_SET_ATTR_KILL_SUID.
constexpr int kKillSuidGid = FUSE_SET_ATTR_KILL_SUID;

// ftruncate of an open file whose name is gone (a temporary file unlinked after its open, as
// stress-ng's stressors and many programs make them): the file answers for itself, as at GETATTR.
// Its open judged the write; a name to judge again no longer exists.
int TruncateUnnamed(Filesystem* fs, OpenFile* file, off_t size, struct stat* out) {
  if (ftruncate(file->fd.get(), size) != 0) return errno;
  ForgetFactsAfterChange(fs, file->node->object(), file->fd.get(), /*open_file=*/true);
  return fstat(file->fd.get(), out) == 0 ? 0 : errno;
}

int DoSetattr(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, struct stat* attr,
              int to_set, fuse_file_info* fi, struct stat* out) {
  Visible v;
  if (int err = ResolveVisible(fs, ctx, ino, &v, {OP_WRITE, OP_SETATTR})) {
    constexpr int kSizeOnly = FUSE_SET_ATTR_SIZE | kKillSuidGid | FUSE_SET_ATTR_CTIME;
    bool truncates_open_file = fi != nullptr && FileOf(fi)->writable &&
                               (to_set & FUSE_SET_ATTR_SIZE) && (to_set & ~kSizeOnly) == 0;
    struct stat open_st;
    if (err == ENOENT && truncates_open_file && fstat(FileOf(fi)->fd.get(), &open_st) == 0 &&
        open_st.st_nlink == 0) {
      return TruncateUnnamed(fs, FileOf(fi), attr->st_size, out);
    }
    return err;
  }
  const Resolved& r = v.r;
  const struct stat& st = v.st;
  const FileInfo& info = v.info;
  bool dir = v.dir;
  // Under POSIX semantics the kernel has already applied POSIX's rules (default_permissions:
  // who may chown, chgrp, chmod or set times, and which set-id bits a change clears), on the
  // attributes the lower tree reports; the daemon carries the change out. Under ANDROID, as
  // MediaProvider's pf_setattr: a chmod, chown or chgrp the policy allows succeeds and changes
  // nothing, for every caller (shared storage has no modes or owners of its own to give); sizes
  // and times change.
  bool posix = fs->posix();
  if (to_set & FUSE_SET_ATTR_SIZE) {
    if (int err = Verdict(ctx.Decide(OP_WRITE, r.path, dir, &info))) return err;
  }
  if (to_set & ~FUSE_SET_ATTR_SIZE) {
    if (int err = Verdict(ctx.Decide(OP_SETATTR, r.path, dir, &info))) return err;
  }
  if (!posix) to_set &= ~(FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID);
  bool symlink = S_ISLNK(st.st_mode);
  std::string proc = ProcPath(r.fd.get());
  if (to_set & FUSE_SET_ATTR_MODE) {
    if (symlink) return EOPNOTSUPP;
    if (chmod(proc.c_str(), attr->st_mode & 07777) != 0) return errno;
  }
  if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
    uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : static_cast<uid_t>(-1);
    gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : static_cast<gid_t>(-1);
    if (fchownat(r.fd.get(), "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
    fs->NamespaceChanged();  // under POSIX semantics the owner is who decisions call the creator
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    int rc = fi != nullptr ? ftruncate(FileOf(fi)->fd.get(), attr->st_size)
                           : truncate(proc.c_str(), attr->st_size);
    if (rc != 0) return errno;
    ForgetFactsAfterChange(fs, r.node->object(), r.fd.get(), /*open_file=*/false);
    // FATTR_KILL_SUIDGID: the kernel asks for it when the caller lacks CAP_FSETID.
    if (posix && (to_set & kKillSuidGid)) {
      if (int err = KillSetId(ctx, r, st)) return err;
    }
  }
  // chown(f, -1, -1) reaches us as a SETATTR that sets nothing (the kernel keeps the set-id
  // clearing for the server): natively it still changes ctime and clears set-id bits.
  if (posix && (to_set & ~(kKillSuidGid | FUSE_SET_ATTR_CTIME)) == 0) {
    if (fchownat(r.fd.get(), "", static_cast<uid_t>(-1), static_cast<gid_t>(-1),
                 AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      return errno;
    }
  }
  if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
    struct timespec ts[2];
    ts[0].tv_nsec = UTIME_OMIT;
    ts[1].tv_nsec = UTIME_OMIT;
    if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
      ts[0].tv_nsec = UTIME_NOW;
    } else if (to_set & FUSE_SET_ATTR_ATIME) {
      ts[0] = attr->st_atim;
    }
    if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
      ts[1].tv_nsec = UTIME_NOW;
    } else if (to_set & FUSE_SET_ATTR_MTIME) {
      ts[1] = attr->st_mtim;
    }
    // The O_PATH fd itself, so a symlink's own times change (lutimes), as natively.
    if (utimensat(r.fd.get(), "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return errno;
    // Times put back after a change (touch -r, an app hiding an edit): the facts recorded for
    // the mtime set now may be of other bytes. Gone after the change, so no record outlives it.
    if (S_ISREG(st.st_mode)) {
      ForgetFactsAfterChange(fs, r.node->object(), r.fd.get(), /*open_file=*/false);
    }
  }
  if (int err = StatFd(r.fd.get(), out)) return err;
  DirectoryAsSeen(fs, ctx, &r.path, out);
  return 0;
}

// An open makes the kernel mark the file's attributes stale (its reads change atime), and a
// listing the kernel serves from its cache brings no fresh ones, so each stat after it (du, find)
// would cost a GETATTR per file read. So the first open of a file in a directory whose listing the
// kernel holds drops that listing, once (Node::kernel_lists): the next listing is a READDIRPLUS
// that brings every stale name's attributes at once. Queued after the reply, to the notifier
// thread (never sent from a worker: kernel_notifier.h).
void ListingAfterOpen(Filesystem* fs, fuse_ino_t ino) {
  if (fs->session() == nullptr) return;
  NodeId parent = fs->nodes().ParentOf(ino);
  std::shared_ptr<Node> dir = parent != 0 ? fs->nodes().Get(parent) : nullptr;
  if (dir != nullptr && dir->kernel_lists.exchange(false, std::memory_order_relaxed)) {
    fs->session()->notifier().InvalidateInode(parent);
  }
}

void sfs_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  OpRequest op(req, FUSE_OPEN);
  int backing_id = -1;
  int err = DoOpen(op.fs(), op.ctx(), ino, fi, &backing_id);
  // An O_TRUNC open truncates the file here (FUSE_ATOMIC_O_TRUNC), and an open for writing
  // under POSIX semantics may clear set-id bits (KillSetId).
  bool writes = (fi->flags & O_ACCMODE) != O_RDONLY;
  if (err == 0 && ((fi->flags & O_TRUNC) || (writes && op.fs()->posix()))) op.ChangedThrough(ino);
  if (!op.ReplyOpened(err, fi, backing_id, nullptr)) {
    // The kernel never got the handle, so no RELEASE will come for it.
    return CloseHandle(op.fs(), op, FileOf(fi), /*flock_release=*/false);
  }
  if (err == 0) ListingAfterOpen(op.fs(), ino);
}

void sfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set,
                 fuse_file_info* fi) {
  OpRequest op(req, FUSE_SETATTR);
  struct stat st;
  int err = DoSetattr(op.fs(), op.ctx(), ino, attr, to_set, fi, &st);
  // Also after a failure: a SETATTR of several attributes may have changed some.
  op.ChangedThrough(ino);
  op.ReplyAttr(err, st);
}

// Zeros answered for a version that could not be vouched for (ReadRedacted) are not the file's
// bytes: the kernel would keep them in the inode's page cache, and an open of the same version
// asking keep_cache would keep them too, so every later read of the version, by any reader of the
// redacted view, would get the zeros. The next open of the node therefore drops its pages
// (cached_version no longer matches), and an invalidation sent after the reply drops them now
// for the opens held.
void ForgetZeroFilledPages(Node& node) {
  absl::MutexLock lock(&node.backing_mu);
  node.cached_version = FileVersion{};
}

void sfs_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  OpRequest op(req, FUSE_READ);
  Filesystem* fs = op.fs();
  fs->stats().read_requests.fetch_add(1);
  OpenFile* file = FileOf(fi);
  // Over io_uring the bytes are read straight into the ring entry's payload buffer, which the
  // kernel copies from (no second copy); over /dev/fuse into a buffer of our own, which writev
  // copies. Not value-initialised: every byte sent is first written by pread or a fill.
  std::unique_ptr<char[]> own;
  char* buf = FuseSession::ReplyPayload(size);
  if (buf == nullptr) {
    own.reset(new char[size]);
    buf = own.get();
  }
  if (file->redacted()) {
    fs->stats().redacted_reads.fetch_add(1);
    if (own == nullptr) fs->stats().redacted_reads_in_ring.fetch_add(1);
    size_t got;
    bool zero_filled;
    if (int err = ReadRedacted(fs->plans(), file->fd.get(), file->slot, &file->plan, size, off, buf,
                               &got, &zero_filled)) {
      return op.ReplyErr(err);
    }
    if (zero_filled) ForgetZeroFilledPages(*file->node);
    op.ReplyBuf(buf, got);
    // After the reply: the invalidation waits for the pages this READ fills, which stay locked
    // until the kernel has the reply, and then drops them (kernel_notifier.h).
    if (zero_filled && fs->session() != nullptr) {
      fs->session()->notifier().InvalidateInode(file->node->id);
    }
    return;
  }
  ssize_t n = pread(file->fd.get(), buf, size, off);
  if (n < 0) return op.ReplyErr(errno);
  op.ReplyBuf(buf, static_cast<size_t>(n));
}

// Drops the cached and recorded facts of a handle's file once it has been written through the
// mount (the write's own mtime would tell the record apart too; this does not rely on it).
void Written(Filesystem* fs, OpenFile* file) {
  ForgetFactsAfterChange(fs, file->node->object(), file->fd.get(), /*open_file=*/true);
}

// A write through a redacted view (a caller the location guard redacts, writing a file that was
// of no carrier format at open) is judged again against the file as it is now: once the file
// can carry location (its owner wrote a photo into it), OP_WRITE refuses, so the writer can never
// break the metadata and then read the file raw.
int WriteAllowed(Filesystem* fs, OpRequest& op, OpenFile* file) {
  if (!file->redacted()) return 0;
  std::string path;
  if (!fs->nodes().PathOf(file->node->id, &path)) return EACCES;
  struct stat st;
  if (fstat(file->fd.get(), &st) != 0) return errno;
  FileInfo info = InfoAtPath(fs, file->fd.get(), path, st);
  return Verdict(op.ctx().Decide(OP_WRITE, path, false, &info));
}

// After a write through a redacted view: its page cache, which other redacted readers share,
// may now hold bytes that a fill would cover; drop it. Queued after the reply, since the kernel
// holds the written pages locked until then, and sent by the notifier thread, never by this
// worker: the kernel may wait for a page lock held by a READ that needs a worker, and with every
// worker waiting so nothing would ever be read (kernel_notifier.h). Takes the node id, not the
// handle: once the reply is sent, a RELEASE may free the handle.
NodeId RedactedNodeOf(const OpenFile* file) { return file->redacted() ? file->node->id : 0; }

void AfterRedactedWrite(Filesystem* fs, NodeId redacted_node) {
  if (redacted_node == 0 || fs->session() == nullptr) return;
  fs->session()->notifier().InvalidateInode(redacted_node);
}

void sfs_write(fuse_req_t req, fuse_ino_t, const char* buf, size_t size, off_t off,
               fuse_file_info* fi) {
  OpRequest op(req, FUSE_WRITE);
  Filesystem* fs = op.fs();
  fs->stats().write_requests.fetch_add(1);
  OpenFile* file = FileOf(fi);
  if (int err = WriteAllowed(fs, op, file)) return op.ReplyErr(err);
  ssize_t n = pwrite(file->fd.get(), buf, size, off);
  if (n < 0) return op.ReplyErr(errno);
  Written(fs, file);
  op.Changed(*file->node);
  NodeId redacted = RedactedNodeOf(file);
  op.ReplyWrite(static_cast<size_t>(n));
  AfterRedactedWrite(fs, redacted);
}

void sfs_fallocate(fuse_req_t req, fuse_ino_t, int mode, off_t offset, off_t length,
                   fuse_file_info* fi) {
  OpRequest op(req, FUSE_FALLOCATE);
  Filesystem* fs = op.fs();
  OpenFile* file = FileOf(fi);
  if (int err = WriteAllowed(fs, op, file)) return op.ReplyErr(err);
  int rc = fallocate(file->fd.get(), mode, offset, length);
  if (rc == 0) {
    Written(fs, file);
    op.Changed(*file->node);
  }
  NodeId redacted = RedactedNodeOf(file);
  op.ReplyErr(rc == 0 ? 0 : errno);
  AfterRedactedWrite(fs, redacted);
}

void sfs_lseek(fuse_req_t req, fuse_ino_t, off_t off, int whence, fuse_file_info* fi) {
  OpRequest op(req, FUSE_LSEEK);
  off_t res = lseek(FileOf(fi)->fd.get(), off, whence);
  if (res < 0) return op.ReplyErr(errno);
  op.ReplyLseek(res);
}

void sfs_copy_file_range(fuse_req_t req, fuse_ino_t, off_t off_in, fuse_file_info* fi_in,
                         fuse_ino_t, off_t off_out, fuse_file_info* fi_out, size_t len, int flags) {
  OpRequest op(req, FUSE_COPY_FILE_RANGE);
  Filesystem* fs = op.fs();
  // ANDROID semantics: MediaProvider implements no copy_file_range. ENOSYS makes the kernel stop
  // asking for this mount and copy through its own splice of the two files, whose reads come
  // here as READs (a redacted source's are redacted) or go through passthrough.
  if (!fs->posix()) return op.ReplyErr(ENOSYS);
  fs->stats().read_requests.fetch_add(1);
  fs->stats().write_requests.fetch_add(1);
  OpenFile* from = FileOf(fi_in);
  OpenFile* to = FileOf(fi_out);
  if (int err = WriteAllowed(fs, op, to)) return op.ReplyErr(err);
  if (from->redacted() || to->redacted()) {
    // The lower copy_file_range would copy raw bytes: copy the redacted ones instead, one bounded
    // chunk per request (a short copy is allowed; the caller loops). A raw source copied into a
    // redacted view goes the same way, so the write lands where AfterRedactedWrite sees it.
    std::vector<char> buf(std::min<size_t>(len, 1 << 20));
    size_t got = 0;
    if (from->redacted()) {
      fs->stats().redacted_reads.fetch_add(1);
      if (int err = ReadRedacted(fs->plans(), from->fd.get(), from->slot, &from->plan, buf.size(),
                                 off_in, buf.data(), &got)) {
        return op.ReplyErr(err);
      }
    } else {
      ssize_t r = pread(from->fd.get(), buf.data(), buf.size(), off_in);
      if (r < 0) return op.ReplyErr(errno);
      got = static_cast<size_t>(r);
    }
    ssize_t n = got == 0 ? 0 : pwrite(to->fd.get(), buf.data(), got, off_out);
    if (n < 0) return op.ReplyErr(errno);
    Written(fs, to);
    op.Changed(*to->node);
    NodeId redacted = RedactedNodeOf(to);
    op.ReplyWrite(static_cast<size_t>(n));
    return AfterRedactedWrite(fs, redacted);
  }
  loff_t in = off_in, out = off_out;
  ssize_t n =
      copy_file_range(from->fd.get(), &in, to->fd.get(), &out, len, static_cast<unsigned>(flags));
  if (n < 0) return op.ReplyErr(errno);
  Written(fs, to);
  op.Changed(*to->node);
  op.ReplyWrite(static_cast<size_t>(n));
}

}  // namespace scopedfs::daemon
