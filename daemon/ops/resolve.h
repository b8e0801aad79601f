// Node resolution and publication (resolve.cc): a node's current path and lower fd, a child as
// the lower tree spells it, the entry the kernel gets, and what the kernel holds of a node.
// Private to daemon/ops.
#ifndef SCOPEDFS_DAEMON_OPS_RESOLVE_H_
#define SCOPEDFS_DAEMON_OPS_RESOLVE_H_

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "daemon/judge/facts_cache.h"
#include "daemon/judge/file_info.h"
#include "daemon/judge/request_context.h"
#include "daemon/ops/filesystem.h"
#include "daemon/tables/node_table.h"

namespace scopedfs::daemon {

// What the kernel holds of a node (Node::kernel_fresh_until_ns): after a LOOKUP or READDIRPLUS
// entry, its name and its attributes, until the entry's timeouts run out. Ops after which the
// kernel marks the attributes stale itself (an open, whose reads and writes change atime, size
// and mtime; an xattr change, which changes ctime) end it early; a listing, which changes only a
// directory's atime, does not (ops_dir.cc says why). READDIRPLUS (ops_dir.cc) sends a name whose
// attributes are fresh without them, as a READDIRPLUS entry with attributes makes the kernel forget
// the inode's cached ACLs (fuse_direntplus_link calls forget_all_cached_acls) and `ls -l` would ask
// for them again. A wrong guess costs a request, never a wrong answer.
inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
inline void MarkKernelAttrsFresh(Node* node, double seconds) {
  node->kernel_fresh_until_ns.store(
      seconds > 0 ? SteadyNowNs() + static_cast<int64_t>(seconds * 1e9) : 0,
      std::memory_order_relaxed);
}
inline void MarkKernelAttrsStale(Node* node) {
  node->kernel_fresh_until_ns.store(0, std::memory_order_relaxed);
}

// A redacted view's attributes as handed to the kernel (Node::kernel_attrs_version).
inline void NoteKernelAttrs(Node* node, const struct stat& st) {
  absl::MutexLock lock(&node->backing_mu);
  node->kernel_attrs_version = VersionOf(st);
}

int StatFd(int fd, struct stat* st);

// What the node table calls an O_TMPFILE file until a LINK names it: the policy judges it as a
// file of this name in the directory it was made in. Never looked up in the lower tree.
inline constexpr char kTmpfileName[] = "<O_TMPFILE>";

// A node, its current storage path and an O_PATH fd of its lower object for this request.
struct Resolved {
  std::shared_ptr<Node> node;
  std::string path;
  base::UniqueFd fd;
};
int Resolve(Filesystem* fs, fuse_ino_t ino, Resolved* out);

// The lower tree's spelling of `name` in `parent`. Under ANDROID semantics names are
// case-insensitive, as on a device's casefolded /data/media (case_names.h): `name` itself if it
// exists, else the entry that folds to it, else `name`; so every decision is made on the name as
// the lower tree has it, never on the caller's spelling. Under POSIX semantics, `name`. Returns 0,
// or EMFILE when the directory is too large to search (*real is then `name`).
int LowerName(Filesystem* fs, const Resolved& parent, const char* name, std::string* real);

// A child of a resolved directory as the lower tree has it, without following symlinks.
struct Child {
  base::UniqueFd fd;  // O_PATH, until handed to the node table
  struct stat st;
  std::string path;
  FileInfo info;
  // Read by OpenChild when the facts cache needs it, then handed on to the node table
  // (PublishEntry) and to ObjectOf, so a request asks the kernel for a child's handle once.
  std::optional<ObjectIdentity> identity;
};
// The object `child` is (ObjectIdOf of its fd), from its identity when OpenChild read it.
ObjectId ObjectOf(const Child& child);
int OpenChild(Filesystem* fs, const Resolved& parent, const char* name, Child* child,
              FactNeeds needs = {});
// The question FactNeeds::content_decides asks, for a child the caller looks up or lists: whether
// its LOOKUP or READ (or `op`) of it can depend on the file's content for this caller and creator
// (RequestContext::DependsOnContent). Where it cannot (an app's own files under Android's rules),
// OpenChild reads none of their bytes (no head, no location scan): the view the caller reads
// (ViewFor) is then the same whatever they hold. *decides gets each answer (left as it is until
// asked: set it true first). `ctx`, `child` and `decides` must outlive the function.
std::function<bool(const FileInfo&)> ContentDecidesForChild(const RequestContext& ctx,
                                                            const Child* child, bool* decides,
                                                            scopedfs::Op op = OP_READ);
// OpenChild of `name` as the lower tree spells it (LowerName); *real gets that spelling. A
// directory too large to search answers for the exact name only.
int OpenLowerChild(Filesystem* fs, const Resolved& parent, const char* name, Child* child,
                   std::string* real, FactNeeds needs = {});
// Hands the child's fd to the node table (one more kernel lookup of it) and fills the entry the
// kernel gets back, as the caller sees it. The node's attributes count as not fresh in the
// kernel (Node::kernel_fresh_until_ns) until DoLookup says otherwise; *fresh_until_before, when
// given, gets what they counted as before. Returns the node.
std::shared_ptr<Node> PublishEntry(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent,
                                   const char* name, Child* child, View view, fuse_entry_param* e,
                                   int64_t* fresh_until_before = nullptr);
// Content facts and owner of the lower object `fd` (stat'ed in `st`), judged under the name
// its node path `path` ends with.
FileInfo InfoAtPath(Filesystem* fs, int fd, absl::string_view path, const struct stat& st,
                    FactNeeds needs = {}, const ObjectId* object = nullptr);
// InfoAtPath of a resolved node: its fd was opened from the node, so the object is the node's
// (Node::object) and needs no name_to_handle_at.
inline FileInfo InfoOfNode(Filesystem* fs, const Resolved& r, const struct stat& st,
                           FactNeeds needs = {}) {
  ObjectId object = r.node->object();
  return InfoAtPath(fs, r.fd.get(), r.path, st, needs, &object);
}

// A node as the caller may see it: resolved, stat'ed, its content facts known, and not hidden
// from the caller (ENOENT otherwise, before anything type-specific can answer differently).
struct Visible {
  Resolved r;
  struct stat st;
  FileInfo info;
  bool dir = false;
};
// The facts of the resolved node `r` (stat'ed as `st`) that the caller's decisions of `judged`
// need, besides its LOOKUP's. When `judged` is given, and neither those decisions nor the LOOKUP
// can depend on a file's content for this caller and creator (RequestContext::DependsOnContent:
// an owner's SETATTR under Android's rules), the content is not read (content_read stays false):
// no head and no location scan of a file being written. Otherwise the content is read as far as
// the policy looks at it. (A LOOKUP still reads it where the view may differ by caller. A rename's
// check of every app's rights, made under the namespace lock, waits for no scan there: the rename
// warms the facts itself before it takes the lock, WarmRenameFacts and RetryWhileScanning.)
FileInfo InfoForDecisions(Filesystem* fs, const RequestContext& ctx, const Resolved& r,
                          const struct stat& st, std::initializer_list<scopedfs::Op> judged);
// `judged`: as for InfoForDecisions.
int ResolveVisible(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, Visible* v,
                   std::initializer_list<scopedfs::Op> judged = {});
// The view of a child the caller reads (ViewJudged, then JudgeRead).
View CallerView(const RequestContext& ctx, const Child& child);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_RESOLVE_H_
