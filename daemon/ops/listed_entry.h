// One name of a lower directory as a caller may list it (ListedEntry), for the directory ops
// (ops_dir.cc): what a listing shows each caller, and what READDIRPLUS's lookup of a listed name
// reuses (DoLookupListed).
#ifndef SCOPEDFS_DAEMON_OPS_LISTED_ENTRY_H_
#define SCOPEDFS_DAEMON_OPS_LISTED_ENTRY_H_

#include <dirent.h>

#include "daemon/ops/handles.h"
#include "daemon/ops/resolve.h"
#include "policy/engine.h"

namespace scopedfs::daemon {

// A child a listing opened and judged (ListedEntry), and the engine's decisions of it.
struct ListedChild {
  Child child;
  policy::LookupDecisions decided;
};

// One name of the lower directory `r` as the caller may list it: 0 with *shown set (the entry is
// in *out, its `next` left to the caller), 0 without (removed meanwhile, or hidden from the
// caller), or an errno: any other failure (out of fds, an I/O error) fails the listing rather than
// leave the entry out in silence. With `keep`, a shown name other than . and .. leaves there the
// child it opened (with every fact the engine looks at) and the engine's decisions of it, for
// READDIRPLUS's lookup of it (DoLookupListed); . and .. leave it empty.
//
// One engine call judges the name (Engine::DecideLookup): the LOOKUP decision says whether the
// caller lists it (its `found` does not: LISTING visibility finds names it does not list), and
// for a file the read decisions say which view the caller reads, as JudgeRead's would.
int ListedEntry(Filesystem* fs, const RequestContext& ctx, const Resolved& r, const dirent* ent,
                DirEntry* out, bool* shown, bool* depends_on_content = nullptr,
                ListedChild* keep = nullptr);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OPS_LISTED_ENTRY_H_
