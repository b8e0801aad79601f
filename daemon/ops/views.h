// The decisions every op shares (views.cc): errnos and modes, what a caller sees of a directory,
// the kernel cache timeouts, and which view (inode) a caller reads a file through. Private to
// daemon/ops.
#ifndef SCOPEDFS_DAEMON_OPS_VIEWS_H_
#define SCOPEDFS_DAEMON_OPS_VIEWS_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <optional>
#include <string>

#include "daemon/judge/file_info.h"
#include "daemon/judge/request_context.h"
#include "daemon/ops/filesystem.h"
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

// Names the kernel hands us are single components; anything else is refused, never interpreted
// (`invalid` is the errno for that). A name longer than the lower tree can hold is ENAMETOOLONG.
int NameError(const char* name, int invalid);
int ErrnoOf(const policy::Decision& d);
// 0 if the decision lets the operation go ahead on raw bytes (a redacted read is not a raw one).
int Verdict(const policy::Decision& d);
// Android semantics: the mode a new file (0664) or directory (0775) gets, set-id bits only from
// root.
mode_t AndroidNewMode(const RequestContext& ctx, mode_t mode, bool directory);

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

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_VIEWS_H_
