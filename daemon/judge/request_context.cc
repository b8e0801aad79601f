// Request context (see request_context.h).
#include "daemon/judge/request_context.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "daemon/kernel/after_reply.h"
#include "policy/app_registry.h"

namespace scopedfs::daemon {

namespace {

// The rule names audit lines and explanations give the device layout's own decisions.
constexpr absl::string_view kMountRootRule = "(device layout: the mount root)";
constexpr absl::string_view kOutsideRule = "(device layout: outside every user's storage)";

// A canonical decimal user id: "0", or digits without a leading zero, at most kMaxStorageUser.
bool ParseUser(absl::string_view segment, uint32_t* user) {
  if (segment.empty() || segment.size() > 5 || (segment.size() > 1 && segment[0] == '0')) {
    return false;
  }
  uint32_t value = 0;
  for (char c : segment) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > kMaxStorageUser) return false;
  *user = value;
  return true;
}

bool ChangesMountRootNames(scopedfs::Op op) {
  return op == OP_CREATE || op == OP_MKDIR || op == OP_DELETE || op == OP_RMDIR || op == OP_RENAME;
}

}  // namespace

Placement PlaceNodePath(bool device_layout, uint32_t user_id, absl::string_view node_path) {
  Placement out;
  if (!device_layout) {
    out.user = user_id;
    out.path = node_path;
    return out;
  }
  if (node_path.empty()) {
    out.kind = Placement::Kind::kMountRoot;
    return out;
  }
  size_t slash = node_path.find('/');
  absl::string_view first = node_path.substr(0, slash);
  if (!ParseUser(first, &out.user)) {
    out.kind = Placement::Kind::kOutside;
    out.path = node_path;
    return out;
  }
  out.storage_root_in_mount_root = slash == absl::string_view::npos;
  out.path = out.storage_root_in_mount_root ? absl::string_view() : node_path.substr(slash + 1);
  return out;
}

RequestContext::RequestContext(uid_t uid, pid_t pid, std::shared_ptr<const policy::Engine> engine,
                               uint32_t storage_user_id,
                               const policy::ProcessContextSource* contexts, AuditLog* audit,
                               bool device_layout)
    : uid_(uid),
      pid_(pid),
      engine_(std::move(engine)),
      storage_user_id_(storage_user_id),
      device_layout_(device_layout),
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
  reader.device_layout_ = device_layout_;
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
    out.found = out.lookup.Permits();
  } else {
    out = engine_->DecideLookup(request, located);
  }
  NoteDecision(out.lookup, OP_LOOKUP, path, directory, info);
  return out;
}

bool RequestContext::HiddenWhateverIsThere(absl::string_view path) const {
  policy::Request request;
  policy::Decision refused;
  if (!BuildRequest(OP_LOOKUP, path, false, nullptr, &request, &refused)) {
    // The device layout hides names outside every storage from apps, whatever they are.
    if (engine_ == nullptr || domain_failed_ || refused.outcome != OUTCOME_HIDE) return false;
    NoteDecision(refused, OP_LOOKUP, path, false, nullptr);
    return true;
  }
  std::optional<policy::Decision> hidden = engine_->HiddenWhateverIsThere(request);
  if (!hidden) return false;
  NoteDecision(*hidden, OP_LOOKUP, path, false, nullptr);
  return true;
}

std::string RequestContext::ListingViewer() const {
  if (engine_ == nullptr || domain_failed_) return "";
  return absl::StrCat(engine_->serial(), ":", uid_, ":", domain_);
}

std::string RequestContext::EveryCallerViewer() const {
  if (engine_ == nullptr) return "";
  return absl::StrCat(engine_->serial(), ":*");
}

bool RequestContext::OfThisSnapshot(absl::string_view viewer) const {
  return engine_ != nullptr && absl::StartsWith(viewer, absl::StrCat(engine_->serial(), ":"));
}

bool RequestContext::DependsOnContent(scopedfs::Op op, absl::string_view path,
                                      const FileInfo& info) const {
  policy::Request request;
  policy::Decision decided;
  if (!BuildRequest(op, path, /*directory=*/false, &info, &request, &decided)) return false;
  return engine_->DependsOnContent(request);
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
  if (err != 0 && refused_ && audit_ != nullptr) {
    refused_ = false;  // audited once
    Audit(false, std::move(refusal_), err, 0);
  }
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
  Audit(true, std::move(what), 0, decision.redact);
}

void RequestContext::Audit(bool redacted, Refusal what, int err, uint32_t redact) const {
  // Recorded once the answer has gone (AfterReply): over io_uring the reply is committed only
  // after the handler returns, and a hidden name's refusal would cost its ENOENT what a missing
  // name's does not spend (docs/security.md, timing). What it needs is taken along.
  scopedfs::Op op = request_op_ != OP_UNSPECIFIED ? request_op_ : what.op;
  auto line = [audit = audit_, engine = engine_, uid = uid_, pid = pid_, redacted, op, err, redact,
               what = std::move(what)] {
    AuditEvent event;
    event.redacted = redacted;
    event.op = op;
    event.judged = what.op;
    event.uid = uid;
    event.pid = pid;
    if (engine != nullptr) {
      policy::Caller caller = engine->apps().Identify(uid);
      if (caller.app != nullptr && !caller.app->packages.empty()) {
        event.package = caller.app->packages[0];
      }
    }
    event.path = what.path;
    event.directory = what.directory;
    event.content = what.has_content ? &what.content : nullptr;
    event.owner = what.owner;
    event.rule = what.rule;
    event.err = err;
    event.redact = redact;
    audit->Record(event);
  };
  AfterReply::Run(std::move(line));
}

bool RequestContext::BuildRequest(scopedfs::Op op, absl::string_view path, bool directory,
                                  const FileInfo* info, policy::Request* request,
                                  policy::Decision* decided) const {
  if (engine_ == nullptr || domain_failed_) {
    decided->outcome = OUTCOME_DENY;
    decided->error = ERRNO_EACCES;
    decided->rule_name =
        engine_ == nullptr ? "(no policy)" : "(caller's SELinux context unreadable)";
    return false;
  }
  Placement place = Place(path);
  uint32_t storage_user = place.user;
  absl::string_view judged = place.path;
  // Whatever the name (a user's storage or not, there or not): one answer, which tells nothing.
  bool in_mount_root = place.storage_root_in_mount_root ||
                       (place.kind == Placement::Kind::kOutside && path.find('/') == path.npos);
  if (in_mount_root && ChangesMountRootNames(op) && IsApp()) {
    decided->outcome = OUTCOME_DENY;
    decided->error = ERRNO_EACCES;
    decided->rule_name = kMountRootRule;
    return false;
  }
  if (place.kind != Placement::Kind::kStorage) {
    // Judged as the caller's own user's: its storage root for the mount root, the node path as
    // it is outside every storage.
    storage_user = policy::UserIdOf(uid_);
    if (IsApp()) {
      decided->error = ERRNO_EACCES;
      decided->rule_name =
          place.kind == Placement::Kind::kMountRoot ? kMountRootRule : kOutsideRule;
      if (place.kind == Placement::Kind::kOutside) {
        decided->outcome = OUTCOME_HIDE;
      } else {
        decided->outcome = op == OP_LOOKUP || op == OP_READ ? OUTCOME_ALLOW : OUTCOME_DENY;
      }
      return false;
    }
  }
  request->uid = uid_;
  request->op = op;
  request->path = judged;
  request->node_type = directory ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
  request->content = info != nullptr && !directory ? &info->facts : nullptr;
  if (info != nullptr) request->owner_uid = info->owner;
  request->storage_user_id = storage_user;
  request->selinux_domain = domain_;
  return true;
}

policy::Decision RequestContext::DecideUnaudited(scopedfs::Op op, absl::string_view path,
                                                 bool directory, const FileInfo* info) const {
  policy::Request request;
  policy::Decision decided;
  if (!BuildRequest(op, path, directory, info, &request, &decided)) return decided;
  return engine_->Decide(request);
}

uint32_t RequestContext::StorageUserOf(absl::string_view path) const {
  Placement place = Place(path);
  return place.kind == Placement::Kind::kStorage ? place.user : policy::UserIdOf(uid_);
}

absl::string_view RequestContext::PolicyPath(absl::string_view path) const {
  return Place(path).path;
}

bool RequestContext::SameStorage(absl::string_view from, absl::string_view to) const {
  if (!device_layout_) return true;
  Placement f = Place(from), t = Place(to);
  if (f.kind == Placement::Kind::kMountRoot || t.kind == Placement::Kind::kMountRoot) return false;
  if (f.kind != t.kind || f.storage_root_in_mount_root || t.storage_root_in_mount_root) {
    return false;
  }
  return f.kind == Placement::Kind::kOutside || f.user == t.user;
}

bool RequestContext::OfAnotherUser(absl::string_view path) const {
  Placement place = Place(path);
  switch (place.kind) {
    case Placement::Kind::kStorage:
      return policy::UserIdOf(uid_) != place.user;
    case Placement::Kind::kMountRoot:
      return false;
    case Placement::Kind::kOutside:
      break;
  }
  return true;
}

bool RequestContext::VisibleToEveryCaller(absl::string_view path) const {
  Placement place = Place(path);
  return engine_ != nullptr && place.kind == Placement::Kind::kStorage &&
         engine_->VisibleToEveryCaller(place.path);
}

bool RequestContext::FoundByEveryCaller(absl::string_view path) const {
  Placement place = Place(path);
  return engine_ != nullptr && place.kind == Placement::Kind::kStorage &&
         engine_->FoundByEveryCaller(place.path);
}

bool RequestContext::SubdirectoriesVisibleToEveryCaller(absl::string_view path) const {
  Placement place = Place(path);
  return engine_ != nullptr && place.kind == Placement::Kind::kStorage &&
         engine_->SubdirectoriesVisibleToEveryCaller(place.path);
}

bool RequestContext::CallerIndependent() const {
  return engine_ != nullptr && engine_->caller_independent() && !device_layout_;
}

bool RequestContext::IsApp() const {
  if (engine_ == nullptr) return true;
  policy::UidKind kind = engine_->apps().Identify(uid_).kind;
  return kind == policy::UidKind::kApp || kind == policy::UidKind::kOther;
}

}  // namespace scopedfs::daemon
