// The scopedfsctl commands that ask a running scopedfsd over its control socket (--socket): stats,
// reload and explain --socket.
#ifndef SCOPEDFS_TOOLS_SCOPEDFSCTL_DAEMON_H_
#define SCOPEDFS_TOOLS_SCOPEDFSCTL_DAEMON_H_

namespace scopedfs::policy::ctl {

// explain --socket: the daemon decides and describes; this only forwards the question.
int LiveExplain();

// stats: the daemon's live counters, as text or (--json) one JSON object.
int StatsCommand();

// reload: makes the daemon load its policy again, or the files --policy/--apps/--packages_list
// name.
int ReloadCommand();

}  // namespace scopedfs::policy::ctl

#endif  // SCOPEDFS_TOOLS_SCOPEDFSCTL_DAEMON_H_
