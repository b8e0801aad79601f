// One FUSE request's view of who asks and under which policy: the caller's uid and pid, its SELinux
// domain (asked of the kernel once) and one snapshot of the engine. Every decision a request makes
// goes through its context, so a policy reload in the middle of a request never mixes two policies
// within it, and getpidcon runs once per request, not once per decision. A context also reports
// its request's refusals and redacted opens to the audit log (Audited, AuditRedacted), so a
// refusal is logged once per request, by the request that answered with it.
#ifndef SCOPEDFS_DAEMON_JUDGE_REQUEST_CONTEXT_H_
#define SCOPEDFS_DAEMON_JUDGE_REQUEST_CONTEXT_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "daemon/judge/file_info.h"
#include "daemon/observe/audit_log.h"
#include "policy/engine.h"
#include "policy/selinux_context.h"

namespace scopedfs::daemon {

class RequestContext {
 public:
  // `contexts` null or disabled: callers are judged in their configured domains. Enabled: the
  // kernel's domain of `pid`; a caller whose context cannot be read is refused everything.
  // `engine` null: everything is refused (cannot happen after startup; fails closed regardless).
  // `audit` null: nothing is audited.
  RequestContext(uid_t uid, pid_t pid, std::shared_ptr<const policy::Engine> engine,
                 uint32_t storage_user_id, const policy::ProcessContextSource* contexts,
                 AuditLog* audit = nullptr);

  // Another app judged within this request (the readers a rename or link is checked for): the
  // same engine snapshot, in that app's configured domain, since it has no process to ask about.
  RequestContext ForReader(uid_t uid) const;

  // The decision for `op` on `path` (relative to the storage root). `info` null: content unknown.
  // With an audit log, the context remembers whether its latest decision refused (HIDE or DENY).
  policy::Decision Decide(scopedfs::Op op, absl::string_view path, bool directory,
                          const FileInfo* info) const;

  // Called with the errno a request answers with, and returns it. When the request fails and its
  // latest decision refused, the failure is that refusal: one "denied" line. A name that does
  // not exist fails before any decision is made, so it is never logged; neither is a refusal that
  // a later permitting decision superseded (a readdir skipping hidden names, then succeeding).
  int Audited(int err) const;
  // A refusal that no single decision of this caller's makes (a rename or link the layout's move
  // rules refuse, or one that would let some app do more to the object): remembered as the
  // latest refusal, as a refusing decision is, with `check` in place of a rule name, so that
  // Audited(err) logs it. Returns `err`.
  int RefusedByCheck(int err, absl::string_view check, scopedfs::Op op, absl::string_view path,
                     bool directory, const FileInfo* info) const;
  // The latest refusal is not the request's answer: it only filtered what the request shows (a
  // listing skipping a name hidden from the caller), or listing visibility finds the name anyway
  // (FindsName). A later failure of the request is then not logged as that refusal.
  void RefusalSuperseded() const { refused_ = false; }
  // A LOOKUP's decisions from one engine call (Engine::DecideLookup), remembered for the audit
  // log as the lookup decision. `located`: the file's facts as if it carried location.
  policy::LookupDecisions DecideLookup(absl::string_view path, bool directory, const FileInfo* info,
                                       const media::ContentFacts* located) const;
  // Whether a LOOKUP of `path` is refused whatever is there, or whether anything is
  // (Engine::HiddenWhateverIsThere): then remembered as the latest refusal, as DecideLookup's.
  bool HiddenWhateverIsThere(absl::string_view path) const;
  // One "redacted" line: the caller opened `path` and reads it with location filled.
  void AuditRedacted(scopedfs::Op op, absl::string_view path, const FileInfo& info,
                     const policy::Decision& decision) const;

  // The operation the app asked for, when the request judges others on the way (a create asks
  // whether an existing name is hidden): audit lines name it, and the judged one beside it.
  void set_request_op(scopedfs::Op op) { request_op_ = op; }

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
  AuditLog* audit_ = nullptr;
  scopedfs::Op request_op_ = OP_UNSPECIFIED;

  // The latest decision, if it refused (kept only with an audit log). A request runs on one
  // thread, so Decide (const) may update it.
  struct Refusal {
    scopedfs::Op op = OP_UNSPECIFIED;
    std::string path;
    bool directory = false;
    bool has_content = false;
    media::ContentFacts content;
    std::optional<uint32_t> owner;
    std::string rule;
  };
  // Null when nothing may be decided (no engine, or an unreadable SELinux context): *refused is
  // then the fail-closed decision.
  bool BuildRequest(scopedfs::Op op, absl::string_view path, bool directory, const FileInfo* info,
                    policy::Request* request, policy::Decision* refused) const;
  void NoteDecision(const policy::Decision& d, scopedfs::Op op, absl::string_view path,
                    bool directory, const FileInfo* info) const;
  policy::Decision DecideUnaudited(scopedfs::Op op, absl::string_view path, bool directory,
                                   const FileInfo* info) const;
  void Audit(bool redacted, const Refusal& what, int err, uint32_t redact) const;
  mutable bool refused_ = false;
  mutable Refusal refusal_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_JUDGE_REQUEST_CONTEXT_H_
