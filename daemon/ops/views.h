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

// Cache choices: what the kernel may keep of an entry or its attributes, and for how long, is the
// same for every caller who can reach the inode (docs/design.md, "What the kernel caches"); the
// timeouts below say per name and per caller class how long that is.
inline constexpr double kAttrTimeout = 1.0;

// Names the kernel hands us are single components; anything else is refused, never interpreted
// (`invalid` is the errno for that). A name longer than the lower tree can hold is ENAMETOOLONG.
int NameError(const char* name, int invalid);
using policy::ErrnoOf;
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
// Whether the caller may be of another Android user than the storage it acts on: under the
// device layout, which holds every user's storage in one mount, any caller may be.
inline bool OfAnotherUser(const RequestContext& ctx) {
  return ctx.device_layout() || ctx.uid() / policy::kPerUserRange != ctx.storage_user_id();
}
// The same for the node `ino` (its current path, under the device layout): a node without a path
// counts as another user's.
bool OfAnotherUserAt(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino);
// Whether a LOOKUP or stat by the caller finds the existing name `path` (policy.proto
// Visibility): the rules' lookup decision is not HIDE, or the visibility is LISTING and every
// caller of the storage's user finds it (Engine::FoundByEveryCaller). Listings still show only
// what the rules' lookup decision permits.
bool FindsName(const RequestContext& ctx, const std::string& path, bool directory,
               const FileInfo& info);
inline bool CallerIndependent(const RequestContext& ctx) { return ctx.CallerIndependent(); }
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
// mount_reached_by_one_user), the operator's assertion removes the reason above: a node whose
// name the kernel caches for every caller of the user (entry timeout > 0: not a redacted view,
// not a name found by another spelling, not in a package-private area) gets its attributes cached
// as long as its name, as MediaProvider caches them; the raw view of a file whose view may differ
// by caller too. A directory's attributes are DirectoryAsSeen's, the same for every caller; their
// times and link count change when an entry is added or removed, and the kernel marks a
// directory's attributes stale itself whenever a create, mkdir, link, unlink, rmdir or rename in
// it goes through the mount (fuse_dir_changed), whoever makes it. The kernel marks a file's
// attributes stale after a write (passthrough or not), a SETATTR, a link or an unlink through the
// mount, on the inode the request came through; a change made through the file's other view (an
// app owed the redacted view writing, truncating or chmodding it) drops the raw inode's before
// its reply (OpRequest::Changed); and a reload invalidates every inode (Filesystem::SetEngine).
// Changes made to the lower tree behind the daemon's back are seen once they expire, as names
// are. Never for a caller of another user: its requests are still judged wherever they reach the
// daemon. Under the device layout the assertion is about --user_id's storage, `<user_id>/`: only
// a name there (`path`, the node's path) is cached so, and only for a caller of that user;
// another user's storage is reached only through its name in the mount's root, which is never
// cached for the asserted user's callers (EntryTimeoutFor). `path` null: a node whose name was
// cached so at its LOOKUP (Node::attrs_cached_with_name; no rename takes a node from one user's
// storage to another's).
bool CachesAttrsWithName(const Filesystem* fs, const RequestContext& ctx, const std::string* path,
                         mode_t mode);
// Whether a redacted view's name may be cached like its raw view's: on a mount only one user's
// apps reach (FilesystemOptions::mount_reached_by_one_user). Both views of a file have the same
// attributes, so a stat through either inode is right for every caller; what keeps each caller to
// its own view's bytes is DoOpen, which then refuses an open of a redacted inode by a caller owed
// the raw view with ESTALE (as it refuses the raw inode to a caller owed the redacted one), and
// the kernel walks the path again asking LOOKUP and swaps the dentry. Elsewhere the redacted
// view's name is never cached, and a caller entitled to raw bytes that holds a redacted inode (an
// fd passed to it) reads the redacted copy, which hides nothing it may not see.
bool RedactedNamesCached(const Filesystem* fs);
// `path` names a directory when `directory` is set; `redacted`: the node published is a file's
// redacted view, whose name is cached only where RedactedNamesCached says (the cache choices above
// say why the raw view's is).
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
