// Request context (see request_context.h).
#include "daemon/request_context.h"

#include <utility>

namespace scopedfs::daemon {

RequestContext::RequestContext(uid_t uid, pid_t pid, std::shared_ptr<const policy::Engine> engine,
                               uint32_t storage_user_id,
                               const policy::ProcessContextSource* contexts)
    : uid_(uid), pid_(pid), engine_(std::move(engine)), storage_user_id_(storage_user_id) {
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
  if (engine_ == nullptr || domain_failed_) {
    policy::Decision d;
    d.outcome = OUTCOME_DENY;
    d.error = ERRNO_EACCES;
    return d;
  }
  policy::Request request;
  request.uid = uid_;
  request.op = op;
  request.path = path;
  request.node_type = directory ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
  request.content = info != nullptr && !directory ? &info->facts : nullptr;
  if (info != nullptr) request.owner_uid = info->owner;
  request.storage_user_id = storage_user_id_;
  request.selinux_domain = domain_;
  return engine_->Decide(request);
}

bool RequestContext::IsApp() const {
  if (engine_ == nullptr) return true;
  policy::UidKind kind = engine_->apps().Identify(uid_).kind;
  return kind == policy::UidKind::kApp || kind == policy::UidKind::kOther;
}

}  // namespace scopedfs::daemon
