// audit2why for scopedfs: reads an audit line (daemon/observe/audit_log.h) and says why the daemon
// decided as it did: the rule and its reason, replayed with a given policy and app registry, and
// which single permission, granted to or taken from the caller, would change the outcome (each is
// tried by deciding the same request again with an engine built from the changed registry).
#ifndef SCOPEDFS_TOOLS_AUDIT2WHY_H_
#define SCOPEDFS_TOOLS_AUDIT2WHY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "media/content_facts.h"
#include "policy/config.h"
#include "proto/policy.pb.h"

namespace scopedfs::tools {

// What an audit line records about one decision.
struct AuditRecord {
  bool redacted = false;
  scopedfs::Op op = OP_UNSPECIFIED;  // the question the decision answered (judged=, else the op)
  scopedfs::Op requested = OP_UNSPECIFIED;  // what the app asked for: the op in { }
  uint32_t uid = 0;
  std::string package;  // "" for pkg=-
  std::string path;     // unescaped
  bool directory = false;
  std::optional<media::ContentFacts> content;
  std::optional<uint32_t> owner;
  std::string rule;
  std::string errno_name;  // denied lines
};

// Parses the first `scopedfs: denied|redacted { op } ...` in `line` (a syslog or journal prefix
// before it is fine). InvalidArgument says what is missing or malformed.
absl::StatusOr<AuditRecord> ParseAuditLine(absl::string_view line);

// The explanation of `record` under `config`, as printed by `scopedfsctl audit2why`.
absl::StatusOr<std::string> Audit2Why(const policy::LoadedConfig& config, const AuditRecord& record,
                                      uint32_t storage_user_id);

}  // namespace scopedfs::tools

#endif  // SCOPEDFS_TOOLS_AUDIT2WHY_H_
