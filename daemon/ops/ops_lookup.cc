// The LOOKUP, GETATTR, READLINK, STATFS, ACCESS and FORGET ops: a name found for the caller, with
// the view it reads (views.cc), published to the kernel (resolve.cc).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/kernel/after_reply.h"
#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/views.h"
#include "policy/storage_path.h"

namespace scopedfs::daemon {

namespace {

// A name that is not there takes the steps a hidden one does once it is opened (a stat, the facts
// cache's probe, the question whether the content decides its LOOKUP (ContentDecidesForChild), the
// engine's decision), with its directory in the object's place, so that
// its ENOENT costs what a hidden name's does (docs/security.md, timing). The answer is ENOENT
// whatever they find; the probe reads and caches nothing (a directory's every change is a version
// of its own, which would fill the cache).
void JudgeAbsentName(Filesystem* fs, const RequestContext& ctx, const Resolved& p, const char* name,
                     FactNeeds needs) {
  struct stat st;
  if (StatFd(p.fd.get(), &st) != 0) return;
  std::string path = ChildPath(p.path, name);
  FileInfo info = fs->facts().Cached(p.fd.get(), st, name, needs);
  // A hidden file's LOOKUP depends on its content (else it would be found): its facts lookup asks
  // that once (ContentDecidesForChild), before it reads the content, which DependsOnContent does
  // not look at.
  if (needs.content) (void)ctx.DependsOnContent(OP_LOOKUP, path, info);
  (void)ctx.DecideLookup(path, /*directory=*/false, &info, nullptr);
  ctx.RefusalSuperseded();  // nothing was refused: the name is not there
}

}  // namespace

// One engine call (Engine::DecideLookup) answers whether the caller sees the name and, for a
// regular file, which view it reads (ViewFor, as JudgeRead). The time of a refusal does not depend
// on what is there (docs/security.md, timing): a name the rules hide
// whatever the object is (another app's private area) is answered before the lower tree is
// touched; and a file's location scan, whose time grows with the file, waits until the name is
// found (unless the lookup rules read location).
namespace {

// Whether `path` (a node path) is the root of a package's area that is a separate mount on a
// device (Android/data/<pkg>, Android/obb/<pkg>: StorageLayout's separate_mount areas).
bool IsSeparateAreaRoot(const RequestContext& ctx, const std::string& path) {
  const policy::Engine* engine = ctx.engine();
  if (engine == nullptr) return false;
  absl::StatusOr<policy::PathInfo> info = engine->layout().Classify(ctx.PolicyPath(path));
  if (!info.ok() || info->area < 0 || !engine->layout().area_separate_mount(info->area)) {
    return false;
  }
  return info->area_package.data() + info->area_package.size() ==
         info->path.data() + info->path.size();
}

// The rest of a lookup once the lower object is open (`opened`, as `real` in `p`): the engine's
// decision (`decided` when already made, with facts read as `needs` say) and the entry the
// kernel gets.
int LookupOpened(Filesystem* fs, const RequestContext& ctx, const Resolved& p, const char* name,
                 const std::string& real, Child* opened, FactNeeds needs,
                 const policy::LookupDecisions* decided, fuse_entry_param* e,
                 int64_t* fresh_until_before, base::UniqueFd* refused) {
  fuse_ino_t parent = p.node->id;
  Child& child = *opened;
  bool judge_view = ViewJudged(ctx, child.st.st_mode);
  policy::LookupDecisions d;
  for (bool scanned = needs.location;; scanned = true) {
    media::ContentFacts located = child.info.facts;
    located.location = media::LocationPresence::kPresent;
    bool could_carry = judge_view && CouldCarryLocation(child.info);
    d = decided != nullptr ? *decided
                           : ctx.DecideLookup(child.path, S_ISDIR(child.st.st_mode), &child.info,
                                              could_carry ? &located : nullptr);
    decided = nullptr;
    if (!d.found) {
      if (refused != nullptr) *refused = std::move(child.fd);
      return ErrnoOf(d.lookup);
    }
    // Found: the view depends on the file's location, so its scan is taken now.
    if (scanned || !judge_view || child.info.content_read || !needs.content) break;
    needs.location = true;
    child.info = child.identity
                     ? fs->facts().Lookup(child.fd.get(), child.st, child.identity->id, real, needs)
                     : fs->facts().Lookup(child.fd.get(), child.st, real, needs);
  }
  View view = judge_view ? ViewFor(d.read, d.read_if_located) : kRawView;
  // The node keeps the lower spelling (its path is what decisions see); the kernel's dentry has
  // the caller's. A name found by another spelling is never cached (entry timeout 0, as
  // MediaProvider's case-insensitive matches): the next walk asks again, so a dentry of one
  // spelling never outlives a change made through another.
  std::shared_ptr<Node> node =
      PublishEntry(fs, ctx, parent, real.c_str(), &child, view, e, fresh_until_before);
  if (real != name) {
    e->entry_timeout = 0;
    if (node->attrs_cached_with_name.exchange(false, std::memory_order_relaxed)) {
      e->attr_timeout = 0;
    }
  }
  MarkKernelAttrsFresh(node.get(), std::min(e->entry_timeout, e->attr_timeout));
  // A package's own area (Android/data|obb/<pkg>) is hidden from every other app by its path
  // alone. A positive dentry of it left in the kernel would make another app's next walk there
  // ask twice (the revalidation, refused, then a lookup of a fresh dentry), where a walk to a
  // package that is not installed asks once: the kernel is told to drop it once this reply has
  // gone (the notifier's dir lock waits for the lookup to finish). The owner's next walk asks
  // once either way (the name is never cached).
  if (e->entry_timeout == 0 && fs->session() != nullptr && IsSeparateAreaRoot(ctx, child.path)) {
    FuseSession* session = fs->session();
    std::string dentry(name);
    AfterReply::Run(
        [session, parent, dentry] { session->notifier().InvalidateEntry(parent, dentry); });
  }
  return 0;
}

}  // namespace

int DoLookup(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent, const char* name,
             fuse_entry_param* e, int64_t* fresh_until_before, base::UniqueFd* refused) {
  Resolved p;
  if (int err = Resolve(fs, parent, &p)) return err;
  return DoLookupIn(fs, ctx, p, name, e, fresh_until_before, refused);
}

int DoLookupIn(Filesystem* fs, const RequestContext& ctx, const Resolved& p, const char* name,
               fuse_entry_param* e, int64_t* fresh_until_before, base::UniqueFd* refused) {
  if (NameError(name, ENOENT) == 0 && ctx.HiddenWhateverIsThere(ChildPath(p.path, name))) {
    return ENOENT;
  }
  FactNeeds needs = NeedsOf(ctx.engine());
  needs.location = ctx.engine() == nullptr || ctx.engine()->lookup_reads_location();
  std::string real;
  Child child;
  // The content only where it can decide what the caller finds or reads (an owner's own file
  // under Android's rules: never), and so the scan in LookupOpened too.
  bool content_decides = true;
  std::function<bool(const FileInfo&)> gate = ContentDecidesForChild(ctx, &child, &content_decides);
  needs.content_decides = &gate;
  if (int err = OpenLowerChild(fs, p, name, &child, &real, needs)) {
    if (err == ENOENT) JudgeAbsentName(fs, ctx, p, name, needs);
    return err;
  }
  if (!content_decides) needs.content = false;
  return LookupOpened(fs, ctx, p, name, real, &child, needs, nullptr, e, fresh_until_before,
                      refused);
}

int DoLookupListed(Filesystem* fs, const RequestContext& ctx, const Resolved& p, const char* name,
                   Child* child, const policy::LookupDecisions& decided, fuse_entry_param* e,
                   int64_t* fresh_until_before) {
  // The listing read every fact the engine's decisions of this caller can depend on (the content
  // and its location only where they can: ListedEntry's gate) and made the one decision a lookup
  // makes with them: nothing is read, scanned or judged again (`location` set ends the loop in
  // LookupOpened before any scan).
  return LookupOpened(fs, ctx, p, name, name, child, NeedsOf(ctx.engine()), &decided, e,
                      fresh_until_before, nullptr);
}

int DoGetattr(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, fuse_file_info* fi,
              struct stat* st) {
  if (fi != nullptr) {
    // An open file answers for itself, also once unlinked (its handle would be stale).
    if (fstat(FileOf(fi)->fd.get(), st) != 0) return errno;
  } else {
    // A caller of another user may reach a name cached for this user's callers (views.h):
    // it is judged here as at a LOOKUP.
    if (ctx.IsApp() && OfAnotherUserAt(fs, ctx, ino)) {
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
  OpRequest op(req, FUSE_LOOKUP);
  fuse_entry_param e;
  base::UniqueFd refused;
  op.ReplyEntry(DoLookup(op.fs(), op.ctx(), parent, name, &e, nullptr, &refused), e);
  // A hidden object's descriptor is closed once the answer has gone (AfterReply): over io_uring
  // the reply is committed only after the handler returns, and its close (the object's last,
  // 0.6 us on a file nobody looked at lately) would delay the ENOENT of a hidden name, where a
  // missing name has nothing to close (docs/security.md, timing).
  if (refused.valid()) {
    auto kept = std::make_shared<base::UniqueFd>(std::move(refused));
    AfterReply::Run([kept] { kept->reset(); });
  }
}

// The kernel evicted the inode, which it does only once no open of it is left. A file's node that
// leaves the table then can serve no later open (a new lookup makes a new node), so its idle
// backing id goes with it (backing_files.h): idle ids never outlive the inodes the kernel holds.
void ForgetWithIdleBacking(Filesystem* fs, fuse_ino_t ino, uint64_t nlookup) {
  std::shared_ptr<Node> node = fs->nodes().Get(ino);
  fs->nodes().Forget(ino, nlookup);
  if (node != nullptr && node->type == S_IFREG && fs->nodes().Get(ino) == nullptr) {
    fs->backing().DropIdle(node);
  }
}

void sfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  OpRequest op(req, FUSE_FORGET);
  ForgetWithIdleBacking(op.fs(), ino, nlookup);
  op.ReplyNone();
}

void sfs_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  OpRequest op(req, FUSE_BATCH_FORGET);
  for (size_t i = 0; i < count; ++i)
    ForgetWithIdleBacking(op.fs(), forgets[i].ino, forgets[i].nlookup);
  op.ReplyNone();
}

void sfs_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  OpRequest op(req, FUSE_GETATTR);
  struct stat st;
  op.ReplyAttr(DoGetattr(op.fs(), op.ctx(), ino, fi, &st), st, ino);
}

// A symlink's target is what it holds, as a file's bytes are: a caller reads it only where it
// may read the link, judged as an open for reading is, whoever walked to the node (a name found
// by LOOKUP under LISTING visibility, or a name cached for another caller). The kernel asks again
// at every readlink(2) and every walk through the link (the daemon never asks it to cache
// symlinks, FUSE_CACHE_SYMLINKS), so no target reaches a caller past this.
int DoReadlink(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, std::string* target) {
  Visible v;
  if (int err = ResolveVisible(fs, ctx, ino, &v)) return err;
  if (!S_ISLNK(v.st.st_mode)) return EINVAL;
  policy::Decision d = ctx.Decide(OP_READ, v.r.path, /*directory=*/false, &v.info);
  if (!d.Permits()) return ErrnoOf(d);
  char buf[PATH_MAX + 1];
  ssize_t n = readlinkat(v.r.fd.get(), "", buf, PATH_MAX);
  if (n < 0) return errno;
  target->assign(buf, static_cast<size_t>(n));
  return 0;
}

void sfs_readlink(fuse_req_t req, fuse_ino_t ino) {
  OpRequest op(req, FUSE_READLINK);
  std::string target;
  if (int err = DoReadlink(op.fs(), op.ctx(), ino, &target)) return op.ReplyErr(err);
  op.ReplyReadlink(target);
}

void sfs_statfs(fuse_req_t req, fuse_ino_t) {
  OpRequest op(req, FUSE_STATFS);
  std::shared_ptr<Node> root = op.fs()->nodes().Get(kRootNodeId);
  struct statvfs sv;
  if (fstatvfs(root->fd.get(), &sv) != 0) return op.ReplyErr(errno);
  op.ReplyStatfs(sv);
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
  OpRequest op(req, FUSE_ACCESS);
  op.ReplyErr(DoAccess(op.fs(), op.ctx(), ino, mask));
}

}  // namespace scopedfs::daemon
