// Resolving nodes and names for a request: a node's current path and an O_PATH fd of its lower
// object, a child as the lower tree spells it, a node as the caller may see it, and publishing a
// looked-up child to the kernel (the entry it gets, with the cache timeouts views.h sets).
#include "daemon/ops/resolve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/views.h"
#include "daemon/tables/case_names.h"

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

int StatFd(int fd, struct stat* st) {
  return fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

namespace {

// A node and its current path (Resolve's first half).
int ResolveNode(Filesystem* fs, fuse_ino_t ino, Resolved* out) {
  out->node = fs->nodes().Get(ino);
  if (out->node == nullptr) return ENOENT;
  // Under POSIX semantics an object outlives its last name while it is held open (fchmod,
  // ftruncate, a dir fd after rmdir work natively): it is judged by the path it had then. Under
  // ANDROID semantics an object without a name is refused.
  if (!fs->nodes().PathOf(ino, &out->path) &&
      !(fs->posix() && fs->nodes().LastPathOf(ino, &out->path))) {
    return ENOENT;
  }
  return 0;
}

}  // namespace

int Resolve(Filesystem* fs, fuse_ino_t ino, Resolved* out) {
  if (int err = ResolveNode(fs, ino, out)) return err;
  return fs->nodes().OpenNode(*out->node, &out->fd);
}

int LowerName(Filesystem* fs, const Resolved& parent, const char* name, std::string* real) {
  real->assign(name);
  if (fs->posix() || NameError(name, ENOENT) != 0) return 0;
  struct stat st;
  if (fstatat(parent.fd.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) return 0;
  std::string match;
  int err = fs->case_index().Find(parent.fd.get(), parent.node->generation, name, &match);
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
  child->identity.reset();
  if (!FactsCache::UsesIdentity(child->st, needs)) {
    child->info = fs->facts().Lookup(child->fd.get(), child->st, name, needs);
    return 0;
  }
  child->identity = IdentityOf(child->fd.get(), child->st);
  child->info = fs->facts().Lookup(child->fd.get(), child->st, child->identity->id, name, needs);
  return 0;
}

std::function<bool(const FileInfo&)> ContentDecidesForChild(const RequestContext& ctx,
                                                            const Child* child, bool* decides,
                                                            scopedfs::Op op) {
  return [&ctx, child, decides, op](const FileInfo& creator) {
    *decides = ctx.DependsOnContent(OP_LOOKUP, child->path, creator) ||
               ctx.DependsOnContent(op, child->path, creator);
    return *decides;
  };
}

ObjectId ObjectOf(const Child& child) {
  return child.identity ? child.identity->id : ObjectIdOf(child.fd.get(), child.st);
}

int OpenLowerChild(Filesystem* fs, const Resolved& parent, const char* name, Child* child,
                   std::string* real, FactNeeds needs) {
  real->assign(name);
  // Under ANDROID semantics the directory's case index names the one lower spelling to open,
  // whichever it is: a name found as spelled, one found in another case and one not there at all
  // take the same steps (an index probe, one open), so that none of them costs a time of its own
  // (docs/security.md, timing). The index may lag a change made behind the daemon's back: a name
  // it does not know is opened as spelled, and one it names wrongly is searched for as before.
  if (!fs->posix() && NameError(name, ENOENT) == 0) {
    std::string lower;
    int spelled =
        fs->case_index().LowerSpelling(parent.fd.get(), parent.node->generation, name, &lower);
    if (spelled == ENOENT) return OpenChild(fs, parent, name, child, needs);
    if (spelled == 0) {
      int err = OpenChild(fs, parent, lower.c_str(), child, needs);
      if (err != ENOENT) {
        if (err == 0) *real = std::move(lower);
        return err;
      }
    }
  }
  // No index to ask (too large, twins, unstampable) or a stale one: the name as spelled, then a
  // search.
  int err = OpenChild(fs, parent, name, child, needs);
  if (err != ENOENT || fs->posix() || NameError(name, ENOENT) != 0) return err;
  // A directory too large to search answers for exact names only.
  std::string match;
  if (fs->case_index().Find(parent.fd.get(), parent.node->generation, name, &match) != 0) {
    return ENOENT;
  }
  *real = std::move(match);
  return OpenChild(fs, parent, real->c_str(), child, needs);
}

// Hands the child's fd to the node table (one more kernel lookup of it) and fills the entry the
// kernel gets back.
std::shared_ptr<Node> PublishEntry(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent,
                                   const char* name, Child* child, View view, fuse_entry_param* e,
                                   int64_t* fresh_until_before) {
  std::shared_ptr<Node> node =
      child->identity
          ? fs->nodes().Upsert(parent, name, std::move(child->fd), *std::move(child->identity),
                               child->st.st_mode & S_IFMT, view)
          : fs->nodes().Upsert(parent, name, std::move(child->fd), child->st.st_dev,
                               child->st.st_ino, child->st.st_mode & S_IFMT, view);
  child->identity.reset();
  int64_t before = node->kernel_fresh_until_ns.exchange(0, std::memory_order_relaxed);
  if (fresh_until_before != nullptr) *fresh_until_before = before;
  *e = {};
  e->ino = node->id;
  e->attr = child->st;
  e->attr.st_ino = fs->PresentedIno(child->st.st_dev, child->st.st_ino);
  DirectoryAsSeen(fs, ctx, &child->path, &e->attr);
  e->attr_timeout = AttrTimeoutFor(ctx, child->st, fs->options().entry_cache_seconds);
  e->entry_timeout = EntryTimeoutFor(fs, ctx, child->path, S_ISDIR(child->st.st_mode),
                                     /*redacted=*/view != kRawView);
  // A raw view's attributes too, for a file whose view may differ: a change made through its
  // other view's inode drops them from the kernel (OpRequest::Changed).
  bool with_name =
      e->entry_timeout > 0 && CachesAttrsWithName(fs, ctx, &child->path, child->st.st_mode);
  node->attrs_cached_with_name.store(with_name, std::memory_order_relaxed);
  if (with_name) e->attr_timeout = e->entry_timeout;
  if (view != kRawView) NoteKernelAttrs(node.get(), child->st);
  return node;
}

double EntryTimeoutFor(Filesystem* fs, const RequestContext& ctx, const std::string& path,
                       bool directory, bool redacted) {
  const policy::Engine* engine = ctx.engine();
  if (engine == nullptr) return 0.0;
  // The kernel lets any caller walk through a cached name without a request, and then read the
  // attributes cached in its inode (statx AT_STATX_DONT_SYNC). Every walk by a caller of another
  // user starts at a name in the mount's root, so those names are never cached while such callers
  // may reach the mount: their walk asks LOOKUP there and is refused (or the names below stay out
  // of its reach), unless the operator says no other user reaches it or nobody is refused anything.
  // Under the device layout those are the users' storage directories: a walk into another
  // user's storage asks LOOKUP there; below them, the proofs are about every caller of that
  // storage's user (RequestContext::Place).
  // Under the device layout with the operator's assertion (only apps of --user_id reach the
  // mount), that user's storage directory is cached and no other: an app of the user walking
  // into another user's storage asks LOOKUP there, even after root's walk went through it.
  if (path.find('/') == std::string::npos && !ctx.CallerIndependent()) {
    const FilesystemOptions& options = fs->options();
    if (!options.mount_reached_by_one_user) return 0.0;
    if (ctx.device_layout() && path != absl::StrCat(options.user_id)) return 0.0;
  }
  bool everyone = ctx.CallerIndependent() || (directory && ctx.VisibleToEveryCaller(path)) ||
                  ((!redacted || RedactedNamesCached(fs)) && ctx.FoundByEveryCaller(path));
  return everyone ? fs->options().entry_cache_seconds : 0.0;
}

FileInfo InfoAtPath(Filesystem* fs, int fd, absl::string_view path, const struct stat& st,
                    FactNeeds needs, const ObjectId* object) {
  absl::string_view name = path;
  if (size_t slash = name.rfind('/'); slash != absl::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  return object != nullptr ? fs->facts().Lookup(fd, st, *object, name, needs)
                           : fs->facts().Lookup(fd, st, name, needs);
}

FileInfo InfoForDecisions(Filesystem* fs, const RequestContext& ctx, const Resolved& r,
                          const struct stat& st, std::initializer_list<scopedfs::Op> judged) {
  FactNeeds needs = NeedsOf(ctx.engine());
  if (judged.size() != 0 && needs.content && S_ISREG(st.st_mode)) {
    FactNeeds creator_only = needs;
    creator_only.content = false;
    FileInfo info = InfoOfNode(fs, r, st, creator_only);
    bool content_decides = ctx.DependsOnContent(OP_LOOKUP, r.path, info);
    for (scopedfs::Op op : judged) {
      content_decides = content_decides || ctx.DependsOnContent(op, r.path, info);
    }
    if (!content_decides) return info;
  }
  return InfoOfNode(fs, r, st, needs);
}

int ResolveVisible(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, Visible* v,
                   std::initializer_list<scopedfs::Op> judged) {
  if (int err = Resolve(fs, ino, &v->r)) return err;
  if (int err = StatFd(v->r.fd.get(), &v->st)) return err;
  v->dir = S_ISDIR(v->st.st_mode);
  v->info = InfoForDecisions(fs, ctx, v->r, v->st, judged);
  if (!FindsName(ctx, v->r.path, v->dir, v->info)) return ENOENT;
  return 0;
}

}  // namespace scopedfs::daemon
