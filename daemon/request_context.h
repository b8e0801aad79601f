// One FUSE request's view of who asks and under which policy: the caller's uid and pid, its SELinux
// domain (asked of the kernel once) and one snapshot of the engine. Every decision a request makes
// goes through its context, so a policy reload in the middle of a request never mixes two policies
// within it, and getpidcon runs once per request, not once per decision.
#ifndef SCOPEDFS_DAEMON_REQUEST_CONTEXT_H_
#define SCOPEDFS_DAEMON_REQUEST_CONTEXT_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "daemon/file_info.h"
#include "policy/engine.h"
#include "policy/selinux_context.h"

namespace scopedfs::daemon {

class RequestContext {
 public:
  // `contexts` null or disabled: callers are judged in their configured domains. Enabled: the
  // kernel's domain of `pid`; a caller whose context cannot be read is refused everything.
  // `engine` null: everything is refused (cannot happen after startup; fails closed regardless).
  RequestContext(uid_t uid, pid_t pid, std::shared_ptr<const policy::Engine> engine,
                 uint32_t storage_user_id, const policy::ProcessContextSource* contexts);

  // Another app judged within this request (the readers a rename or link is checked for): the
  // same engine snapshot, in that app's configured domain, since it has no process to ask about.
  RequestContext ForReader(uid_t uid) const;

  // The decision for `op` on `path` (relative to the storage root). `info` null: content unknown.
  policy::Decision Decide(scopedfs::Op op, absl::string_view path, bool directory,
                          const FileInfo* info) const;

  uid_t uid() const { return uid_; }
  pid_t pid() const { return pid_; }
  uint32_t storage_user_id() const { return storage_user_id_; }
  const policy::Engine* engine() const { return engine_.get(); }
  // An app or an unknown uid, rather than root, a system uid, shell or the media service: apps
  // get clamped modes and see directories without what is hidden from them.
  bool IsApp() const;

 private:
  RequestContext() = default;

  uid_t uid_ = 0;
  pid_t pid_ = 0;
  std::shared_ptr<const policy::Engine> engine_;
  uint32_t storage_user_id_ = 0;
  std::string domain_;          // empty: the app's configured domain
  bool domain_failed_ = false;  // SELinux on and the caller's context unreadable
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_REQUEST_CONTEXT_H_
