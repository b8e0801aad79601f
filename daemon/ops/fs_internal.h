// Private to the daemon's op files (ops_*.cc, namespace_checks.cc, filesystem.cc): the handles the
// kernel holds, node resolution and publication (resolve.cc), the view and mode rules every op
// applies (views.cc), the tree walk (tree_walk.cc), and the FUSE glue each op file exports to the
// ops table. Not a public interface: include filesystem.h instead.
//
// Every op has one shape: a thin sfs_<op> handler makes an OpRequest (op_request.h: the request's
// one context, its timer, and the reply, which audits a refusal), calls a Do<Op> that returns 0
// or an errno, and replies through the OpRequest in exactly one place.
#ifndef SCOPEDFS_DAEMON_OPS_FS_INTERNAL_H_
#define SCOPEDFS_DAEMON_OPS_FS_INTERNAL_H_

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "daemon/judge/file_info.h"
#include "daemon/judge/request_context.h"
#include "daemon/judge/scan_queue.h"
#include "daemon/kernel/fuse_session.h"
#include "daemon/observe/stats.h"
#include "daemon/ops/filesystem.h"
#include "daemon/ops/op_request.h"
#include "daemon/ops/redacted_read.h"
#include "daemon/tables/node_table.h"
#include "policy/engine.h"

namespace scopedfs::daemon {

// Cache choices. The kernel's dentries and attributes are shared by every caller, so a name
// whose visibility or view depends on who asks gets entry_timeout 0: the kernel re-asks LOOKUP on
// every path walk and never serves one app a dentry another app filled. Negative entries are never
// cached. Names proven the same for every caller of the storage's user are cached for
// FilesystemOptions::entry_cache_seconds: every name under a caller-independent policy
// (Engine::caller_independent, e.g. the permissive one); directories the rules show to everyone
// (Engine::VisibleToEveryCaller: Android's shared directories, not Android/data/<pkg>); and under
// LISTING visibility (policy.proto Visibility) every name a LOOKUP finds for every caller
// (Engine::FoundByEveryCaller: all but separate-mount areas), unless the node published is a
// file's redacted view. This is MediaProvider's choice (get_entry_timeout: no caching for
// package-owned paths and names with transforms), with its infinite timeout bounded.
// A file whose view may differ by caller (one that could carry location, under a policy that may
// redact) has its raw view's name cached all the same, since DoOpen keeps every caller to its
// own view whatever inode a cached name leads it to: an open by a caller owed the redacted view
// through the raw inode fails ESTALE, on which the VFS walks the path again with LOOKUP_REVAL
// (do_filp_open), fuse_dentry_revalidate asks LOOKUP even of a fresh name, the answer's node
// differs and the kernel swaps the dentry for the caller's view. The same covers a file cached
// while of no carrier format that later gets location, and execve. The redacted view's name gets
// timeout 0, so a caller owed the raw view never meets the redacted inode through a cached name:
// its next walk asks and swaps it back. Two apps alternating thus cost at most one more LOOKUP
// round and one refused OPEN per swap; a stat needs no swap, as both views have the same
// attributes. An ESTALE reaches the app only where no walk precedes the open (a reopen of an
// O_PATH fd through /proc/self/fd) or where the file's judgement changes between the second
// walk's LOOKUP and its OPEN (docs/visibility.md).
// Callers of other users are outside all of these proofs: every request of theirs on a node is
// judged (DoGetattr), and the names in the mount's root, where each of their walks starts, are
// never cached unless the operator says no other user reaches the mount or the policy is
// caller-independent (EntryTimeoutFor): so they walk through no cached name, and read no
// attributes another caller's request left in the kernel (statx AT_STATX_DONT_SYNC reads an
// inode's cached attributes whatever their timeout). Attributes never depend on the caller, as
// the kernel keeps one set per inode: a directory's are DirectoryAsSeen's for every caller. A
// file's are cached for a second, except under LISTING (AttrTimeoutFor; on a mount only one
// user's apps reach, as long as its name: CachesAttrsWithName); a directory's are not cached
// unless the policy is caller-independent.
// A reload invalidates every name and inode the kernel holds (Filesystem::SetEngine); the daemon's
// own namespace changes are the kernel's own requests, which update its cache. Changes made to the
// lower tree behind the daemon's back are seen once a cached name expires.
inline constexpr double kAttrTimeout = 1.0;

// An open file handle (fuse_file_info::fh).
struct OpenFile {
  OpenFile(base::UniqueFd fd_in, std::shared_ptr<Node> node_in)
      : fd(std::move(fd_in)), node(std::move(node_in)) {}

  base::UniqueFd fd;
  std::shared_ptr<Node> node;
  bool passthrough = false;
  bool writable = false;
  // The app whose budget the handle is charged to (Filesystem::TakeHandleSlot), and the plans
  // its reads make; nullopt for root and the system uids.
  std::optional<uid_t> slot;
  RedactionPlan plan;  // redacted views: the shared fills of the version last read
  // Every lock owner that asked for a record lock through this handle. A process's (POSIX) locks
  // go when it closes any fd of the file (FLUSH), but an open file description's (OFD) locks go
  // only with the description itself, of which the kernel tells nothing but RELEASE: so RELEASE
  // ends all of them.
  absl::Mutex lock_owners_mu;
  absl::flat_hash_set<uint64_t> lock_owners ABSL_GUARDED_BY(lock_owners_mu);

  bool redacted() const { return node->view != kRawView; }
  // The lower file its locks are held on (file_locks.h): every view of it shares them.
  FileLocks::FileKey lock_key() const { return node->object(); }
};

struct DirEntry {
  std::string name;
  ino_t ino;
  unsigned char type;
  dev_t dev = 0;   // 0 for . and ..
  off_t next = 0;  // the READDIR offset of the entry after it
};

// An open directory handle (fuse_file_info::fh): the directory's fd and, under a policy whose
// listings depend on the caller, the filtered listing, taken once per open. Under a
// caller-independent policy the listing is the same for every caller, so the kernel caches it
// (FOPEN_CACHE_DIR) and each READDIR the kernel still sends reads the lower directory from the
// offset it names (ops_dir.cc); once OPENDIR was answered ENOSYS there is no handle at all (fh 0,
// DirOf gives null).
struct OpenDir {
  base::UniqueFd fd;
  std::optional<uid_t> slot;   // the app's handle-quota slot
  bool kernel_caches = false;  // opened under a caller-independent policy: no snapshot
  std::vector<DirEntry> entries;
  bool loaded = false;
};

inline Filesystem* Fs(fuse_req_t req) {
  return static_cast<Filesystem*>(FuseSession::FilesystemOf(req));
}
inline OpenFile* FileOf(fuse_file_info* fi) { return reinterpret_cast<OpenFile*>(fi->fh); }
inline OpenDir* DirOf(fuse_file_info* fi) { return reinterpret_cast<OpenDir*>(fi->fh); }
std::string ProcPath(int fd);
std::string ChildPath(const std::string& parent, absl::string_view name);

// --- Tree walk (tree_walk.cc) -----------------------------------------------------------------

// A directory stream that owns its fd (closedir when it goes away).
class DirStream {
 public:
  DirStream() = default;
  DirStream(const DirStream&) = delete;
  DirStream& operator=(const DirStream&) = delete;
  ~DirStream();
  // A stream of its own, from the start, on the directory `dir_fd` (any fd of it, O_PATH too).
  // Returns 0 or an errno.
  int Open(int dir_fd);
  dirent* Next() { return readdir(dir_); }  // with . and ..
  int fd() const { return dirfd(dir_); }
  // Continues from `offset`, a d_off this stream's directory returned (0: the start).
  void Seek(off_t offset) { seekdir(dir_, static_cast<long>(offset)); }

 private:
  DIR* dir_ = nullptr;
};

// Visits every entry below the directory `dir_fd` (directories before what they hold, symlinks
// and specials too), depth first, without following symlinks: visit(fd, st, path relative to
// dir_fd, name) with the entry's O_PATH fd. Returns 0, the first non-zero value `visit` returned,
// or EXDEV when the walk cannot be complete: more than *budget entries, more than 64 levels, or
// an entry that cannot be opened or stat'ed (one removed meanwhile is skipped).
int ForEachEntryBelow(int dir_fd, int* budget,
                      const std::function<int(int fd, const struct stat& st, const std::string& rel,
                                              absl::string_view name)>& visit);

// --- Decisions (views.cc) ----------------------------------------------------------------------

// Names the kernel hands us are single components; anything else is refused, never interpreted
// (`invalid` is the errno for that). A name longer than the lower tree can hold is ENAMETOOLONG.
int NameError(const char* name, int invalid);
int ErrnoOf(const policy::Decision& d);
// 0 if the decision lets the operation go ahead on raw bytes (a redacted read is not a raw one).
int Verdict(const policy::Decision& d);
mode_t ClampMode(const RequestContext& ctx, mode_t mode, bool directory);

// Under POSIX semantics, who makes a new object in the lower tree: the caller's fsuid, fsgid and
// umask (caller_creds.h). nullopt under ANDROID semantics, where the
// daemon makes everything as itself and records the caller.
struct PosixCaller {
  uid_t uid;
  gid_t gid;
  mode_t umask;
};
std::optional<PosixCaller> PosixCallerOf(Filesystem* fs, fuse_req_t req);
// The attributes a caller gets for the directory at `path` (views.cc says which and why);
// null: a directory without a name any more.
void DirectoryAsSeen(Filesystem* fs, const RequestContext& ctx, const std::string* path,
                     struct stat* st);
inline bool OfAnotherUser(const RequestContext& ctx) {
  return ctx.uid() / policy::kPerUserRange != ctx.storage_user_id();
}
// Whether a LOOKUP or stat by the caller finds the existing name `path` (policy.proto
// Visibility): the rules' lookup decision is not HIDE, or the visibility is LISTING and every
// caller of the storage's user finds it (Engine::FoundByEveryCaller). Listings still show only
// what the rules' lookup decision permits.
bool FindsName(const RequestContext& ctx, const std::string& path, bool directory,
               const FileInfo& info);
inline bool CallerIndependent(const RequestContext& ctx) {
  return ctx.engine() != nullptr && ctx.engine()->caller_independent();
}
// Attributes are cached for a second; under a caller-independent policy, where they are the same
// for every caller, as long as names are (`cached`: FilesystemOptions::entry_cache_seconds).
// Under LISTING visibility never: names are cached for every caller of the storage's user there,
// and a caller of another user walking through one must reach the daemon at its GETATTR (where
// it is refused) rather than be served attributes another caller's request left in the kernel.
inline double AttrTimeoutFor(const RequestContext& ctx, const struct stat& st, double cached) {
  if (CallerIndependent(ctx)) return std::max(cached, kAttrTimeout);
  if (ctx.engine() != nullptr && ctx.engine()->visibility() == VISIBILITY_LISTING) return 0.0;
  return S_ISDIR(st.st_mode) ? 0.0 : kAttrTimeout;
}
// Under LISTING on a mount only one user's apps reach (FilesystemOptions::
// mount_reached_by_one_user), the operator's assertion removes the reason above: a non-directory
// whose name the kernel caches for every caller of the user (entry timeout > 0: not a redacted
// view, not a name found by another spelling, not in a package-private area) gets its attributes
// cached as long as its name, as MediaProvider caches them; the raw view of a file whose view may
// differ by caller too. Directories keep 0: their times change with every entry anyone adds. The
// kernel marks the attributes stale itself after a write (passthrough or not), a SETATTR, a link or
// an unlink through the mount, on the inode the request came through; a change made through the
// file's other view (an app owed the redacted view writing, truncating or chmodding it) drops the
// raw inode's before its reply (OpRequest::Changed); and a reload invalidates every inode
// (Filesystem::SetEngine). Never for a caller of another user: its requests are still judged
// wherever they reach the daemon.
inline bool CachesAttrsWithName(const Filesystem* fs, const RequestContext& ctx, mode_t mode) {
  return fs->options().mount_reached_by_one_user && !S_ISDIR(mode) && ctx.engine() != nullptr &&
         ctx.engine()->visibility() == VISIBILITY_LISTING && !OfAnotherUser(ctx);
}
// `path` names a directory when `directory` is set; `redacted`: the node published is a file's
// redacted view, whose name is never cached (the cache choices above say why the raw view's is).
double EntryTimeoutFor(Filesystem* fs, const RequestContext& ctx, const std::string& path,
                       bool directory, bool redacted);
// Which view (inode) a caller reads a file through, written once: the redacted view when its read
// is redacted, or when it reads the file raw now but would read it redacted were the file to
// carry location (`read_if_located`; CouldCarryLocation says when that is asked, and it is
// `read` otherwise), so location its owner writes later reaches it filled. JudgeRead, DoLookup
// (from one engine call) and CallerView all apply it.
View ViewFor(const policy::Decision& read, const policy::Decision& read_if_located);
// Whether a node of `mode` has a view to judge for the caller: a regular file under a policy
// that may redact. Anything else is read raw.
bool ViewJudged(const RequestContext& ctx, mode_t mode);
// Whether a file may carry location: of a carrier format, or of content not known yet.
bool CouldCarryLocation(const FileInfo& info);

// A caller's read of a file: the decision, and the view (inode) it must read through.
struct ReadJudgement {
  policy::Decision decision;
  View view = kRawView;
  // How much of the file's bytes the caller gets: a rename or link must never raise it.
  int Rank() const {
    if (!decision.Permits()) return 0;
    return view == kRawView ? 2 : 1;
  }
};
ReadJudgement JudgeRead(const RequestContext& ctx, const std::string& path, const FileInfo& info);

// --- Nodes (resolve.cc) ------------------------------------------------------------------------

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
};
int OpenChild(Filesystem* fs, const Resolved& parent, const char* name, Child* child,
              FactNeeds needs = {});
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
FileInfo InfoOfNode(Filesystem* fs, const Resolved& r, const struct stat& st, FactNeeds needs = {});

// A node as the caller may see it: resolved, stat'ed, its content facts known, and not hidden
// from the caller (ENOENT otherwise, before anything type-specific can answer differently).
struct Visible {
  Resolved r;
  struct stat st;
  FileInfo info;
  bool dir = false;
};
int ResolveVisible(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, Visible* v);
// The view of a child the caller reads (ViewJudged, then JudgeRead).
View CallerView(const RequestContext& ctx, const Child& child);

// LOOKUP, and READDIRPLUS's entries: the entry leaves the kernel with the name and current
// attributes, fresh for the entry's timeouts. *fresh_until_before: as for PublishEntry.
int DoLookup(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent, const char* name,
             fuse_entry_param* e, int64_t* fresh_until_before = nullptr);
int DoOpen(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, fuse_file_info* fi,
           int* backing_id);

// --- Namespace checks (namespace_checks.cc) ----------------------------------------------------

// Scans and the locks others wait for (scan_queue.h). The kernel holds a directory's lock while
// it asks LOOKUP, READDIR(PLUS) and the namespace ops there, so those wait at most this long for a
// location scan (filesystem.cc sets it per op); other ops wait for theirs. Under the namespace
// lock nothing waits (NoScanWait): a rename or link whose checks met a file not scanned yet
// returns kFactsNotCurrent before changing anything, and is retried with the lock released.
inline constexpr absl::Duration kDirLockedScanWait = absl::Milliseconds(20);
inline constexpr absl::Duration kRequestScanWait = absl::Seconds(30);
inline constexpr int kFactsNotCurrent = -1;  // never an errno

inline constexpr int kMaxRenameCheckEntries = 4096;

// For create/mkdir/symlink/mknod/link targets: 0 if `name` is free in `parent`, in any case
// (LowerName), EEXIST-worthy (*exists_visible) if it or a case variant exists and the caller sees
// it, EACCES if what exists is hidden from the caller (never revealed by EEXIST), EMFILE if the
// directory is too large to vouch for. *real: the lower spelling of what exists, else `name`.
int CheckFreeName(Filesystem* fs, const RequestContext& ctx, const Resolved& parent,
                  const char* name, bool* exists_visible, std::string* real = nullptr);
// A directory move's tree, judged outside the namespace lock (PrecheckTreeMove) while the names
// it depends on were those of `generation` (Filesystem::namespace_generation).
struct TreeVerdict {
  bool valid = false;
  uint64_t generation = 0;
  std::string from, to;
  int err = 0;
};
void PrecheckTreeMove(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent,
                      const char* name, fuse_ino_t newparent, const char* newname,
                      TreeVerdict* verdict);
int CheckNoGain(Filesystem* fs, const RequestContext& ctx, const std::string& from,
                const FileInfo& info, const std::string& to, absl::string_view to_name, mode_t type,
                int fd, const TreeVerdict* tree = nullptr);
int CheckLayoutMove(const RequestContext& ctx, const std::string& from, const std::string& to);
int CheckPlace(Filesystem* fs, const RequestContext& ctx, const Resolved& parent, const char* name,
               bool directory, const FileInfo& moving, bool exchange, unsigned int flags);
void WarmRenameFacts(Filesystem* fs, fuse_ino_t parent, const char* name);

// The end of an open handle (RELEASE, or an OPEN or CREATE whose reply the kernel did not take):
// its slot, record and flock locks, backing id, and the handle itself.
void CloseHandle(Filesystem* fs, OpRequest& op, OpenFile* file, bool flock_release);
// The kernel forgot `nlookup` lookups of `ino` (FORGET; or a CREATE whose entry it never got):
// NodeTable::Forget, and the node's idle backing id when that took the node out of the table.
void ForgetWithIdleBacking(Filesystem* fs, fuse_ino_t ino, uint64_t nlookup);

// --- FUSE glue, by op family -------------------------------------------------------------------

// ops_lookup.cc
void sfs_lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
void sfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void sfs_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets);
void sfs_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void sfs_readlink(fuse_req_t req, fuse_ino_t ino);
void sfs_statfs(fuse_req_t req, fuse_ino_t ino);
void sfs_access(fuse_req_t req, fuse_ino_t ino, int mask);
// ops_namespace.cc
void sfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
void sfs_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev);
void sfs_unlink(fuse_req_t req, fuse_ino_t parent, const char* name);
void sfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name);
void sfs_symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name);
void sfs_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
                const char* newname, unsigned int flags);
void sfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname);
void sfs_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                fuse_file_info* fi);
// ops_file.cc
void sfs_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void sfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi);
void sfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void sfs_write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
               fuse_file_info* fi);
void sfs_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void sfs_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void sfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
void sfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
                   fuse_file_info* fi);
void sfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi);
void sfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info* fi_in,
                         fuse_ino_t ino_out, off_t off_out, fuse_file_info* fi_out, size_t len,
                         int flags);
// ops_lock.cc
void sfs_getlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock);
void sfs_setlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock, int sleep);
void sfs_flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, int op);
// ops_dir.cc
void sfs_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void sfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void sfs_releasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void sfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
// ops_xattr.cc
void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                  int flags);
void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_FS_INTERNAL_H_
