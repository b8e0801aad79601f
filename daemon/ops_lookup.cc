// Resolving nodes and names: the decisions every op shares (views, modes, what an app sees of a
// directory), publishing looked-up nodes to the kernel, and the LOOKUP, GETATTR, READLINK,
// STATFS, ACCESS and FORGET ops.
#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "daemon/case_names.h"
#include "daemon/fs_internal.h"
#include "daemon/fuse_kernel_abi.h"

namespace scopedfs::daemon {

std::string ProcPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

// Names the kernel hands us are single components; anything else is refused, never interpreted
// (`invalid` is the errno for that). FUSE lets names run to 1024 bytes, so a name longer than the
// lower tree can hold gets ENAMETOOLONG here, as it would natively.
int NameError(const char* name, int invalid) {
  size_t len = strnlen(name, NAME_MAX + 1);
  if (len > NAME_MAX) return ENAMETOOLONG;
  bool valid =
      len > 0 && strchr(name, '/') == nullptr && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
  return valid ? 0 : invalid;
}

std::string ChildPath(const std::string& parent, absl::string_view name) {
  return parent.empty() ? std::string(name) : absl::StrCat(parent, "/", name);
}

int ErrnoOf(const policy::Decision& d) {
  if (d.outcome == OUTCOME_HIDE) return ENOENT;
  switch (d.error) {
    case ERRNO_EPERM:
      return EPERM;
    case ERRNO_EROFS:
      return EROFS;
    case ERRNO_ENOENT:
      return ENOENT;
    case ERRNO_EEXIST:
      return EEXIST;
    default:
      return EACCES;
  }
}

// 0 if the decision lets the operation go ahead on raw bytes. A redacted read is not a raw one:
// the callers that can honour it (LOOKUP's view choice, OPEN) look at the outcome themselves.
int Verdict(const policy::Decision& d) {
  if (d.outcome == OUTCOME_ALLOW) return 0;
  if (d.outcome == OUTCOME_ALLOW_REDACTED) return EACCES;
  return ErrnoOf(d);
}

// Modes from callers other than root never carry set-uid or set-gid: the daemon creates and
// chmods as root, so such a bit would make a root set-uid program (or a set-gid root directory)
// in the lower tree. Apps' files are never executable either, as Android mounts shared storage
// noexec; their directories keep rwx (search is needed) but lose the sticky bit.
mode_t ClampMode(const RequestContext& ctx, mode_t mode, bool directory) {
  if (ctx.uid() == 0) return mode & 07777;
  mode &= 07777 & ~(S_ISUID | S_ISGID);
  if (ctx.IsApp()) mode &= directory ? 0777 : 0666;
  return mode;
}

// What an app sees of a directory. Its real link count counts subdirectories the app may not
// see, and its size counts every entry (ext4 grows it by blocks, tmpfs by 20 bytes a name), so
// neither may count hidden names. Under STRICT visibility its timestamps, which change when anyone
// adds or removes a hidden entry, are fixed too: apps get nlink 1 (as filesystems that do not
// count subdirectories report; find and fts then make no leaf assumptions), size 4096 and the
// daemon's start time. Under LISTING (Android's) they get the lower owner, group, mode and times,
// as on a device, and the real link count wherever the rules show every subdirectory to every
// caller (Engine::SubdirectoriesVisibleToEveryCaller: Android's shared directories, not
// Android/data), else 1; the size stays 4096. Root and system uids see the lower directory as it
// is. Directories are therefore never attribute-cached by the kernel (attr_timeout 0): the
// kernel's attribute cache is shared by all callers.
void DirectoryAsSeen(Filesystem* fs, const RequestContext& ctx, const std::string* path,
                     struct stat* st) {
  // Under a caller-independent policy nothing is hidden from one app that another sees.
  if (!S_ISDIR(st->st_mode) || !ctx.IsApp() || CallerIndependent(ctx)) return;
  st->st_size = 4096;
  st->st_blocks = 8;
  const policy::Engine* engine = ctx.engine();
  if (engine != nullptr && engine->visibility() == VISIBILITY_LISTING) {
    if (path == nullptr || !engine->SubdirectoriesVisibleToEveryCaller(*path)) st->st_nlink = 1;
    return;
  }
  st->st_nlink = 1;
  st->st_atim = st->st_mtim = st->st_ctim = fs->started();
}

bool FindsName(const RequestContext& ctx, const std::string& path, bool directory,
               const FileInfo& info) {
  if (ctx.Decide(OP_LOOKUP, path, directory, &info).outcome != OUTCOME_HIDE) return true;
  const policy::Engine* engine = ctx.engine();
  return engine != nullptr && !OfAnotherUser(ctx) && engine->FoundByEveryCaller(path);
}

bool ViewJudged(const RequestContext& ctx, mode_t mode) {
  return S_ISREG(mode) && ctx.engine() != nullptr && ctx.engine()->may_redact();
}

// Beyond ALLOW_REDACTED decisions, a caller that would be redacted if the file carried location
// reads the redacted view of every file that could carry it (an image or video, or content of no
// known format, such as an empty file still being written), even while it holds none: location
// the owner writes later must reach such a caller filled, also through an fd or a mapping it
// already holds. Only files of a known non-carrier format (PDF, MP3, ...) are read raw.
bool CouldCarryLocation(const FileInfo& info) {
  media::MediaFormat format = info.facts.format;
  return !info.content_read || format == media::MediaFormat::kUnknown ||
         media::FormatMayCarryLocation(format);
}

View ViewFor(const policy::Decision& read, const policy::Decision& read_if_located) {
  if (read.outcome == OUTCOME_ALLOW_REDACTED) return kRedactedView;
  if (read.outcome == OUTCOME_ALLOW && read_if_located.outcome == OUTCOME_ALLOW_REDACTED) {
    return kRedactedView;
  }
  return kRawView;
}

ReadJudgement JudgeRead(const RequestContext& ctx, const std::string& path, const FileInfo& info) {
  ReadJudgement j;
  j.decision = ctx.Decide(OP_READ, path, false, &info);
  policy::Decision if_located = j.decision;
  if (j.decision.outcome == OUTCOME_ALLOW && CouldCarryLocation(info)) {
    FileInfo located = info;
    located.facts.location = media::LocationPresence::kPresent;
    if_located = ctx.Decide(OP_READ, path, false, &located);
  }
  j.view = ViewFor(j.decision, if_located);
  return j;
}

int StatFd(int fd, struct stat* st) {
  return fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

int Resolve(Filesystem* fs, fuse_ino_t ino, Resolved* out) {
  out->node = fs->nodes().Get(ino);
  if (out->node == nullptr) return ENOENT;
  // Under POSIX semantics an object outlives its last name while it is held open (fchmod,
  // ftruncate, a dir fd after rmdir work natively): it is judged by the path it had then. Under
  // ANDROID semantics an object without a name is refused.
  if (!fs->nodes().PathOf(ino, &out->path) &&
      !(fs->posix() && fs->nodes().LastPathOf(ino, &out->path))) {
    return ENOENT;
  }
  return fs->nodes().OpenNode(*out->node, &out->fd);
}

int LowerName(Filesystem* fs, const Resolved& parent, const char* name, std::string* real) {
  real->assign(name);
  if (fs->posix() || NameError(name, ENOENT) != 0) return 0;
  struct stat st;
  if (fstatat(parent.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) return 0;
  std::string match;
  int err = fs->case_index().Find(parent.fd.get(), name, &match);
  if (err == 0) *real = std::move(match);
  return err == EMFILE ? EMFILE : 0;
}

int OpenChild(Filesystem* fs, const Resolved& parent, const char* name, Child* child,
              FactNeeds needs) {
  if (int err = NameError(name, ENOENT)) return err;
  child->fd.reset(openat(parent.fd.get(), name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (child->fd.get() < 0) return errno;
  if (fstatat(child->fd.get(), "", &child->st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
    return errno;
  child->path = ChildPath(parent.path, name);
  child->info = fs->facts().Lookup(child->fd.get(), child->st, name, needs);
  return 0;
}

int OpenLowerChild(Filesystem* fs, const Resolved& parent, const char* name, Child* child,
                   std::string* real, FactNeeds needs) {
  real->assign(name);
  int err = OpenChild(fs, parent, name, child, needs);
  if (err != ENOENT || fs->posix() || NameError(name, ENOENT) != 0) return err;
  // A directory too large to search answers for exact names only.
  std::string match;
  if (fs->case_index().Find(parent.fd.get(), name, &match) != 0) return ENOENT;
  *real = std::move(match);
  return OpenChild(fs, parent, real->c_str(), child, needs);
}

// Hands the child's fd to the node table (one more kernel lookup of it) and fills the entry the
// kernel gets back.
std::shared_ptr<Node> PublishEntry(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent,
                                   const char* name, Child* child, View view, fuse_entry_param* e,
                                   int64_t* fresh_until_before) {
  std::shared_ptr<Node> node =
      fs->nodes().Upsert(parent, name, std::move(child->fd), child->st.st_dev, child->st.st_ino,
                         child->st.st_mode & S_IFMT, view);
  int64_t before = node->kernel_fresh_until_ns.exchange(0, std::memory_order_relaxed);
  if (fresh_until_before != nullptr) *fresh_until_before = before;
  *e = {};
  e->ino = node->id;
  e->attr = child->st;
  e->attr.st_ino = fs->PresentedIno(child->st.st_dev, child->st.st_ino);
  DirectoryAsSeen(fs, ctx, &child->path, &e->attr);
  e->attr_timeout = AttrTimeoutFor(ctx, child->st, fs->options().entry_cache_seconds);
  bool view_may_differ = ViewJudged(ctx, child->st.st_mode) && CouldCarryLocation(child->info);
  e->entry_timeout =
      EntryTimeoutFor(fs, ctx, child->path, S_ISDIR(child->st.st_mode), view_may_differ);
  return node;
}

double EntryTimeoutFor(Filesystem* fs, const RequestContext& ctx, const std::string& path,
                       bool directory, bool view_may_differ) {
  const policy::Engine* engine = ctx.engine();
  if (engine == nullptr) return 0.0;
  bool everyone = engine->caller_independent() ||
                  (directory && engine->VisibleToEveryCaller(path)) ||
                  (!view_may_differ && engine->FoundByEveryCaller(path));
  return everyone ? fs->options().entry_cache_seconds : 0.0;
}

// Content facts and owner of a resolved node, judged under the name its path ends with.
FileInfo InfoOfNode(Filesystem* fs, const Resolved& r, const struct stat& st, FactNeeds needs) {
  absl::string_view name(r.path);
  size_t slash = name.rfind('/');
  if (slash != absl::string_view::npos) name.remove_prefix(slash + 1);
  return fs->facts().Lookup(r.fd.get(), st, name, needs);
}

int ResolveVisible(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, Visible* v) {
  if (int err = Resolve(fs, ino, &v->r)) return err;
  if (int err = StatFd(v->r.fd.get(), &v->st)) return err;
  v->dir = S_ISDIR(v->st.st_mode);
  v->info = InfoOfNode(fs, v->r, v->st, NeedsOf(ctx.engine()));
  if (!FindsName(ctx, v->r.path, v->dir, v->info)) return ENOENT;
  return 0;
}

View CallerView(const RequestContext& ctx, const Child& child) {
  if (!ViewJudged(ctx, child.st.st_mode)) return kRawView;
  return JudgeRead(ctx, child.path, child.info).view;
}

// One engine call (Engine::DecideLookup) answers whether the caller sees the name and, for a
// regular file, which view it reads (ViewFor, as JudgeRead).
int DoLookup(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent, const char* name,
             fuse_entry_param* e, int64_t* fresh_until_before) {
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  std::string real;
  Child child;
  if (int err = OpenLowerChild(fs, p, name, &child, &real, NeedsOf(ctx.engine()))) return err;
  bool judge_view = ViewJudged(ctx, child.st.st_mode);
  media::ContentFacts located = child.info.facts;
  located.location = media::LocationPresence::kPresent;
  bool could_carry = judge_view && CouldCarryLocation(child.info);
  policy::LookupDecisions d = ctx.DecideLookup(child.path, S_ISDIR(child.st.st_mode), &child.info,
                                               could_carry ? &located : nullptr);
  if (!d.found) return ErrnoOf(d.lookup);
  View view = judge_view ? ViewFor(d.read, d.read_if_located) : kRawView;
  // The node keeps the lower spelling (its path is what decisions see); the kernel's dentry has
  // the caller's. A name found by another spelling is never cached (entry timeout 0, as
  // MediaProvider's case-insensitive matches): the next walk asks again, so a dentry of one
  // spelling never outlives a change made through another.
  std::shared_ptr<Node> node =
      PublishEntry(fs, ctx, parent, real.c_str(), &child, view, e, fresh_until_before);
  if (real != name) e->entry_timeout = 0;
  MarkKernelAttrsFresh(node.get(), std::min(e->entry_timeout, e->attr_timeout));
  return 0;
}

int DoGetattr(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, fuse_file_info* fi,
              struct stat* st) {
  if (fi != nullptr) {
    // An open file answers for itself, also once unlinked (its handle would be stale).
    if (fstat(FileOf(fi)->fd.get(), st) != 0) return errno;
  } else {
    // A caller of another user may reach a name cached for this user's callers (fs_internal.h):
    // it is judged here as at a LOOKUP.
    if (ctx.IsApp() && OfAnotherUser(ctx)) {
      Visible v;
      if (int err = ResolveVisible(fs, ctx, ino, &v)) return err;
      *st = v.st;
      DirectoryAsSeen(fs, ctx, &v.r.path, st);
      return 0;
    }
    std::shared_ptr<Node> node = fs->nodes().Get(ino);
    if (node == nullptr) return ENOENT;
    base::UniqueFd fd;
    if (int err = fs->nodes().OpenNode(*node, &fd)) return err;
    if (int err = StatFd(fd.get(), st)) return err;
  }
  if (S_ISDIR(st->st_mode)) {
    std::string path;
    bool named = fs->nodes().PathOf(ino, &path);  // not after an rmdir
    DirectoryAsSeen(fs, ctx, named ? &path : nullptr, st);
  }
  return 0;
}

void sfs_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  OpRequest op(req, OpKind::kLookup);
  fuse_entry_param e;
  op.ReplyEntry(DoLookup(op.fs(), op.ctx(), parent, name, &e), e);
}

void sfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  OpRequest op(req, std::nullopt);
  op.fs()->nodes().Forget(ino, nlookup);
  fuse_reply_none(req);
}

void sfs_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  OpRequest op(req, std::nullopt);
  for (size_t i = 0; i < count; ++i) op.fs()->nodes().Forget(forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void sfs_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  OpRequest op(req, OpKind::kGetattr);
  struct stat st;
  op.ReplyAttr(DoGetattr(op.fs(), op.ctx(), ino, fi, &st), st);
}

int DoReadlink(Filesystem* fs, fuse_ino_t ino, std::string* target) {
  std::shared_ptr<Node> node = fs->nodes().Get(ino);
  if (node == nullptr) return ENOENT;
  base::UniqueFd fd;
  if (int err = fs->nodes().OpenNode(*node, &fd)) return err;
  char buf[PATH_MAX + 1];
  ssize_t n = readlinkat(fd.get(), "", buf, PATH_MAX);
  if (n < 0) return errno;
  target->assign(buf, static_cast<size_t>(n));
  return 0;
}

void sfs_readlink(fuse_req_t req, fuse_ino_t ino) {
  OpRequest op(req, std::nullopt);
  std::string target;
  if (int err = DoReadlink(op.fs(), ino, &target)) return op.ReplyErr(err);
  fuse_reply_readlink(req, target.c_str());
}

void sfs_statfs(fuse_req_t req, fuse_ino_t) {
  OpRequest op(req, std::nullopt);
  std::shared_ptr<Node> root = op.fs()->nodes().Get(kRootNodeId);
  struct statvfs sv;
  if (fstatvfs(root->fd.get(), &sv) != 0) return op.ReplyErr(errno);
  fuse_reply_statfs(req, &sv);
}

int DoAccess(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, int mask) {
  Visible v;
  if (int err = ResolveVisible(fs, ctx, ino, &v)) return err;
  // A redacted read is still a read: access(R_OK) answers what open(O_RDONLY) would.
  if (mask & R_OK) {
    policy::Decision d = ctx.Decide(OP_READ, v.r.path, v.dir, &v.info);
    if (!d.Permits()) return ErrnoOf(d);
  }
  if (mask & W_OK) {
    if (int err = Verdict(ctx.Decide(OP_WRITE, v.r.path, v.dir, &v.info))) return err;
  }
  if ((mask & X_OK) && !v.dir && (v.st.st_mode & 0111) == 0) return EACCES;
  return 0;
}

void sfs_access(fuse_req_t req, fuse_ino_t ino, int mask) {
  OpRequest op(req, std::nullopt);
  op.ReplyErr(DoAccess(op.fs(), op.ctx(), ino, mask));
}

}  // namespace scopedfs::daemon
