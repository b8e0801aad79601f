// Live explain: the control socket's answer to `scopedfsctl --socket=S explain`. The decision is
// made with the engine in force and the lower file's real facts (the facts cache the ops use:
// sniffed format, location scan, recorded creator), then described as `scopedfsctl explain`
// describes an offline one (explain_text.h).
#ifndef SCOPEDFS_DAEMON_SERVICE_LIVE_EXPLAIN_H_
#define SCOPEDFS_DAEMON_SERVICE_LIVE_EXPLAIN_H_

#include "daemon/ops/filesystem.h"
#include "proto/control.pb.h"

namespace scopedfs::daemon {

// The path is walked in the lower tree one name at a time with openat(O_PATH | O_NOFOLLOW), as
// the ops walk it; a name that does not exist is judged as a new file from its name (what a
// create would see), and the answer says so.
ControlResponse LiveExplain(const ExplainRequest& request, Filesystem* fs);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_LIVE_EXPLAIN_H_
