// Request context (see request_context.h).
#include "daemon/judge/request_context.h"

#include <utility>

namespace scopedfs::daemon {

RequestContext::RequestContext(uid_t uid, pid_t pid, std::shared_ptr<const policy::Engine> engine,
                               uint32_t storage_user_id,
                               const policy::ProcessContextSource* contexts, AuditLog* audit)
    : uid_(uid),
      pid_(pid),
      engine_(std::move(engine)),
      storage_user_id_(storage_user_id),
      audit_(audit != nullptr && audit->enabled() ? audit : nullptr) {
  if (contexts == nullptr || !contexts->Enabled()) return;
  absl::StatusOr<std::string> resolved = policy::CallerDomainResolver(contexts).Resolve(pid, "");
  if (resolved.ok()) {
    domain_ = *std::move(resolved);
  } else {
    // With SELinux on, the kernel's word is the only one that counts: no context, no access.
    domain_failed_ = true;
  }
}

RequestContext RequestContext::ForReader(uid_t uid) const {
  RequestContext reader;
  reader.uid_ = uid;
  reader.pid_ = 0;
  reader.engine_ = engine_;
  reader.storage_user_id_ = storage_user_id_;
  return reader;
}

policy::Decision RequestContext::Decide(scopedfs::Op op, absl::string_view path, bool directory,
                                        const FileInfo* info) const {
  policy::Decision d = DecideUnaudited(op, path, directory, info);
  NoteDecision(d, op, path, directory, info);
  return d;
}

policy::LookupDecisions RequestContext::DecideLookup(absl::string_view path, bool directory,
                                                     const FileInfo* info,
                                                     const media::ContentFacts* located) const {
  policy::LookupDecisions out;
  policy::Request request;
  if (!BuildRequest(OP_LOOKUP, path, directory, info, &request, &out.lookup)) {
    out.read = out.read_if_located = out.lookup;
  } else {
    out = engine_->DecideLookup(request, located);
  }
  NoteDecision(out.lookup, OP_LOOKUP, path, directory, info);
  return out;
}

bool RequestContext::HiddenWhateverIsThere(absl::string_view path) const {
  policy::Request request;
  policy::Decision refused;
  if (!BuildRequest(OP_LOOKUP, path, false, nullptr, &request, &refused)) return false;
  std::optional<policy::Decision> hidden = engine_->HiddenWhateverIsThere(request);
  if (!hidden) return false;
  NoteDecision(*hidden, OP_LOOKUP, path, false, nullptr);
  return true;
}

void RequestContext::NoteDecision(const policy::Decision& d, scopedfs::Op op,
                                  absl::string_view path, bool directory,
                                  const FileInfo* info) const {
  if (audit_ == nullptr) return;
  refused_ = d.outcome == OUTCOME_HIDE || d.outcome == OUTCOME_DENY;
  if (refused_) {
    refusal_.op = op;
    refusal_.path.assign(path.data(), path.size());
    refusal_.directory = directory;
    refusal_.has_content = info != nullptr && !directory;
    if (refusal_.has_content) refusal_.content = info->facts;
    refusal_.owner = info != nullptr ? info->owner : std::nullopt;
    refusal_.rule.assign(d.rule_name.data(), d.rule_name.size());
  }
}

int RequestContext::RefusedByCheck(int err, absl::string_view check, scopedfs::Op op,
                                   absl::string_view path, bool directory,
                                   const FileInfo* info) const {
  policy::Decision refused;
  refused.outcome = OUTCOME_DENY;
  refused.rule_name = check;
  NoteDecision(refused, op, path, directory, info);
  return err;
}

int RequestContext::Audited(int err) const {
  if (err != 0 && refused_ && audit_ != nullptr) Audit(false, refusal_, err, 0);
  return err;
}

void RequestContext::AuditRedacted(scopedfs::Op op, absl::string_view path, const FileInfo& info,
                                   const policy::Decision& decision) const {
  if (audit_ == nullptr) return;
  Refusal what;
  what.op = op;
  what.path = std::string(path);
  what.has_content = true;
  what.content = info.facts;
  what.owner = info.owner;
  what.rule = std::string(decision.rule_name);
  Audit(true, what, 0, decision.redact);
}

void RequestContext::Audit(bool redacted, const Refusal& what, int err, uint32_t redact) const {
  AuditEvent event;
  event.redacted = redacted;
  event.op = request_op_ != OP_UNSPECIFIED ? request_op_ : what.op;
  event.judged = what.op;
  event.uid = uid_;
  event.pid = pid_;
  std::string package;
  if (engine_ != nullptr) {
    policy::Caller caller = engine_->apps().Identify(uid_);
    if (caller.app != nullptr && !caller.app->packages.empty()) package = caller.app->packages[0];
  }
  event.package = package;
  event.path = what.path;
  event.directory = what.directory;
  event.content = what.has_content ? &what.content : nullptr;
  event.owner = what.owner;
  event.rule = what.rule;
  event.err = err;
  event.redact = redact;
  audit_->Record(event);
}

bool RequestContext::BuildRequest(scopedfs::Op op, absl::string_view path, bool directory,
                                  const FileInfo* info, policy::Request* request,
                                  policy::Decision* refused) const {
  if (engine_ == nullptr || domain_failed_) {
    refused->outcome = OUTCOME_DENY;
    refused->error = ERRNO_EACCES;
    refused->rule_name =
        engine_ == nullptr ? "(no policy)" : "(caller's SELinux context unreadable)";
    return false;
  }
  request->uid = uid_;
  request->op = op;
  request->path = path;
  request->node_type = directory ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
  request->content = info != nullptr && !directory ? &info->facts : nullptr;
  if (info != nullptr) request->owner_uid = info->owner;
  request->storage_user_id = storage_user_id_;
  request->selinux_domain = domain_;
  return true;
}

policy::Decision RequestContext::DecideUnaudited(scopedfs::Op op, absl::string_view path,
                                                 bool directory, const FileInfo* info) const {
  policy::Request request;
  policy::Decision refused;
  if (!BuildRequest(op, path, directory, info, &request, &refused)) return refused;
  return engine_->Decide(request);
}

bool RequestContext::IsApp() const {
  if (engine_ == nullptr) return true;
  policy::UidKind kind = engine_->apps().Identify(uid_).kind;
  return kind == policy::UidKind::kApp || kind == policy::UidKind::kOther;
}

}  // namespace scopedfs::daemon
