// The FUSE handlers the ops table names (filesystem.cc), by op family, and the pieces of one
// family that another uses. Every handler has one shape: a thin sfs_<op> makes an OpRequest
// (op_request.h), calls a Do<Op> that returns 0 or an errno, and replies through the OpRequest.
// Private to daemon/ops.
#ifndef SCOPEDFS_DAEMON_OPS_HANDLERS_H_
#define SCOPEDFS_DAEMON_OPS_HANDLERS_H_

#include <linux/fuse.h>
#include <sys/stat.h>

#include <cstdint>

#include "base/unique_fd.h"
#include "daemon/judge/request_context.h"
#include "daemon/kernel/fuse_session.h"
#include "daemon/ops/filesystem.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/op_request.h"
#include "daemon/ops/resolve.h"

namespace scopedfs::daemon {

// LOOKUP, and READDIRPLUS's entries: the entry leaves the kernel with the name and current
// attributes, fresh for the entry's timeouts. *fresh_until_before: as for PublishEntry.
// *refused (if given) gets the lower fd of a name the caller does not find, for the caller to
// close after its reply (a name not there has none: the answer waits for no close either way).
int DoLookup(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent, const char* name,
             fuse_entry_param* e, int64_t* fresh_until_before = nullptr,
             base::UniqueFd* refused = nullptr);
// DoLookup in the directory `p`, resolved by the caller: READDIRPLUS looks up each name of a chunk
// in one directory resolved once for the request (its listing was judged under one path too).
int DoLookupIn(Filesystem* fs, const RequestContext& ctx, const Resolved& p, const char* name,
               fuse_entry_param* e, int64_t* fresh_until_before = nullptr,
               base::UniqueFd* refused = nullptr);
// DoLookupIn of a name READDIRPLUS's listing read from `p` in this request (so the lower tree's
// own spelling) and already opened, with every fact the engine looks at, and judged visible
// (ListedEntry, ops_dir.cc): the same decision and entry as DoLookupIn, without opening, reading
// and judging the object a second time. `child` may come without its fd when its identity names an
// object the node table keeps by handle (NodeTable::KeepsByHandle).
// `decided`: the engine's decisions of the child (RequestContext::DecideLookup) the listing made.
int DoLookupListed(Filesystem* fs, const RequestContext& ctx, const Resolved& p, const char* name,
                   Child* child, const policy::LookupDecisions& decided, fuse_entry_param* e,
                   int64_t* fresh_until_before);
int DoOpen(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, fuse_file_info* fi,
           int* backing_id);

// Drops the cached and recorded facts of a handle's file once it has been written through the
// mount (ops_file.cc).
void Written(Filesystem* fs, OpenFile* file);
// The end of an open handle (RELEASE, or an OPEN or CREATE whose reply the kernel did not take):
// its slot, record and flock locks, backing id, and the handle itself.
void CloseHandle(Filesystem* fs, OpRequest& op, OpenFile* file, bool flock_release);
// The kernel forgot `nlookup` lookups of `ino` (FORGET; or a CREATE whose entry it never got):
// NodeTable::Forget, and the node's idle backing id when that took the node out of the table.
void ForgetWithIdleBacking(Filesystem* fs, fuse_ino_t ino, uint64_t nlookup);

// ops_lookup.cc
void sfs_lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
void sfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void sfs_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets);
void sfs_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void sfs_readlink(fuse_req_t req, fuse_ino_t ino);
void sfs_statfs(fuse_req_t req, fuse_ino_t ino);
void sfs_access(fuse_req_t req, fuse_ino_t ino, int mask);
// ops_create.cc
void sfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
void sfs_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev);
void sfs_symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name);
void sfs_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                fuse_file_info* fi);
// The entry for a name just made by the caller (a new object is the caller's own, raw view; a new
// link to existing content shows the caller the view it reads there). LINK uses it too.
int EntryFor(Filesystem* fs, const RequestContext& ctx, fuse_ino_t parent, const Resolved& p,
             const char* name, bool existing_content, fuse_entry_param* e);
// Android's emulated storage has no links: MediaProvider implements neither LINK nor SYMLINK, so
// on a device `ln` and `ln -s` fail with ENOSYS there. Answering as a device does removes, under
// ANDROID semantics, every way a second name could carry rights the first one lacks; under POSIX
// semantics links are made, and CheckNoGain holds them to what the first name allows.
inline constexpr int kNoLinksOnAndroid = ENOSYS;
// ops_namespace.cc
void sfs_unlink(fuse_req_t req, fuse_ino_t parent, const char* name);
void sfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name);
void sfs_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
                const char* newname, unsigned int flags);
void sfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname);
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

#endif  // SCOPEDFS_DAEMON_OPS_HANDLERS_H_
