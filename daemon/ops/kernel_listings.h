// Which listing of a directory the kernel keeps, and for whom, under a policy whose listings may
// differ by caller (docs/requests.md, "Kept listings"; daemon/tables/kept_listing.h).
#ifndef SCOPEDFS_DAEMON_OPS_KERNEL_LISTINGS_H_
#define SCOPEDFS_DAEMON_OPS_KERNEL_LISTINGS_H_

#include <dirent.h>

#include "daemon/ops/handles.h"
#include "daemon/ops/resolve.h"

namespace scopedfs::daemon {

// Whether the entry `ent` of the directory `r` (its lower fd `dir_fd`) is one that every caller
// who may list `r` lists: a directory the rules show to every caller of the storage's user
// whatever it holds and whoever made it (Engine::VisibleToEveryCaller: a proof from the rules
// alone, so no write to a file and no creator can change it). A file never is: under a policy
// whose rules look at the caller, its visibility depends on its creator and its content, which
// change without the directory changing.
bool ListedByEveryCaller(const RequestContext& ctx, const Resolved& r, int dir_fd,
                         const dirent* ent);

// For an OPENDIR of `r` (opened as dir->fd) under a policy that is not caller-independent: sets
// fi->cache_readdir and fi->keep_cache, dir->shared_listing, and dir->kept with dir->kept_fill
// for an open that may read or fill the kernel's listing.
void ChooseKernelListing(Filesystem* fs, const RequestContext& ctx, const Resolved& r, OpenDir* dir,
                         fuse_file_info* fi);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_KERNEL_LISTINGS_H_
