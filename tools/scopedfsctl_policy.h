// The scopedfsctl commands that judge with a policy and app registry loaded from files (--policy,
// --apps, --packages_list): validate, explain (offline) and audit2why.
#ifndef SCOPEDFS_TOOLS_SCOPEDFSCTL_POLICY_H_
#define SCOPEDFS_TOOLS_SCOPEDFSCTL_POLICY_H_

#include "absl/types/span.h"

namespace scopedfs::policy::ctl {

// validate: loads the configuration and reports every problem as file:line:col.
int Validate();

// explain: the decision for one (uid, op, path[, content]) and the rule behind it. With --socket
// it asks the running daemon instead (LiveExplain, scopedfsctl_daemon.h).
int Explain();

// audit2why [LINE...]: one explanation per audit line (from the arguments, or stdin).
int Audit2WhyCommand(absl::Span<char* const> lines);

}  // namespace scopedfs::policy::ctl

#endif  // SCOPEDFS_TOOLS_SCOPEDFSCTL_POLICY_H_
