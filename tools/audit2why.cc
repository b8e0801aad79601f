// audit2why (see audit2why.h).
#include "tools/audit2why.h"

#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/observe/audit_log.h"
#include "daemon/service/explain_text.h"
#include "policy/app_registry.h"
#include "policy/engine.h"

namespace scopedfs::tools {
namespace {

using policy::Decision;
using policy::Engine;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Undoes EscapeAuditValue: \xNN -> the byte.
absl::StatusOr<std::string> Unescape(absl::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '\\') {
      out.push_back(value[i]);
      continue;
    }
    if (i + 3 >= value.size() || value[i + 1] != 'x' || HexDigit(value[i + 2]) < 0 ||
        HexDigit(value[i + 3]) < 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad escape in \"", value, "\""));
    }
    out.push_back(static_cast<char>(HexDigit(value[i + 2]) * 16 + HexDigit(value[i + 3])));
    i += 3;
  }
  return out;
}

std::string OutcomeText(const Decision& d) {
  std::string text(policy::OutcomeName(d.outcome));
  if (d.outcome == OUTCOME_HIDE) absl::StrAppend(&text, " (ENOENT)");
  if (d.outcome == OUTCOME_DENY) {
    absl::StrAppend(&text, " (",
                    d.error == ERRNO_UNSPECIFIED ? "EACCES" : Errno_Name(d.error).substr(6), ")");
  }
  return text;
}

bool SameOutcome(const Decision& a, const Decision& b) {
  if (a.outcome != b.outcome) return false;
  if (a.outcome == OUTCOME_DENY) return a.error == b.error;
  if (a.outcome == OUTCOME_ALLOW_REDACTED) return a.redact == b.redact;
  return true;
}

std::string RuleText(const Engine& engine, const Decision& d) {
  std::string text = absl::StrCat("\"", d.rule_name, "\"");
  if (d.rule_index >= 0) {
    absl::StrAppend(&text, " (", engine.rule_location(static_cast<size_t>(d.rule_index)), ")");
  }
  return text;
}

}  // namespace

absl::StatusOr<AuditRecord> ParseAuditLine(absl::string_view line) {
  AuditRecord r;
  size_t at = line.find("scopedfs: denied { ");
  size_t redacted_at = line.find("scopedfs: redacted { ");
  if (at == absl::string_view::npos ||
      (redacted_at != absl::string_view::npos && redacted_at < at)) {
    at = redacted_at;
    r.redacted = true;
  }
  if (at == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "no \"scopedfs: denied { ... }\" or \"scopedfs: redacted { ... }\" in the line");
  }
  absl::string_view rest = line.substr(line.find('{', at) + 1);
  size_t close = rest.find('}');
  if (close == absl::string_view::npos) return absl::InvalidArgumentError("no closing '}'");
  std::string op_name(absl::StripAsciiWhitespace(rest.substr(0, close)));
  std::optional<scopedfs::Op> op = daemon::ParseOpName(op_name);
  if (!op.has_value())
    return absl::InvalidArgumentError(absl::StrCat("unknown op \"", op_name, "\""));
  r.op = *op;
  r.requested = *op;
  rest.remove_prefix(close + 1);

  bool have_uid = false, have_path = false;
  std::optional<MediaClass> media;
  std::optional<media::LocationPresence> location;
  while (!rest.empty()) {
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (rest.empty()) break;
    size_t eq = rest.find('=');
    if (eq == absl::string_view::npos) break;
    std::string key(rest.substr(0, eq));
    rest.remove_prefix(eq + 1);
    std::string raw;
    if (!rest.empty() && rest[0] == '"') {
      size_t end = rest.find('"', 1);
      if (end == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("unterminated quotes after ", key, "="));
      }
      raw = std::string(rest.substr(1, end - 1));
      rest.remove_prefix(end + 1);
    } else {
      size_t end = rest.find_first_of(" \t\r\n");
      raw = std::string(rest.substr(0, end));
      rest.remove_prefix(end == absl::string_view::npos ? rest.size() : end);
    }
    absl::StatusOr<std::string> value = Unescape(raw);
    if (!value.ok()) return value.status();
    if (key == "uid") {
      if (!absl::SimpleAtoi(*value, &r.uid)) return absl::InvalidArgumentError("bad uid=");
      have_uid = true;
    } else if (key == "pkg") {
      r.package = *value == "-" ? "" : *value;
    } else if (key == "path") {
      r.path = *value;
      have_path = true;
    } else if (key == "tclass") {
      r.directory = *value == "dir";
    } else if (key == "media") {
      MediaClass c;
      if (!MediaClass_Parse(absl::StrCat("MEDIA_CLASS_", absl::AsciiStrToUpper(*value)), &c)) {
        return absl::InvalidArgumentError(absl::StrCat("unknown media=", *value));
      }
      media = c;
    } else if (key == "location") {
      if (*value == "absent") location = media::LocationPresence::kAbsent;
      if (*value == "present") location = media::LocationPresence::kPresent;
      if (*value == "malformed") location = media::LocationPresence::kMalformed;
      if (*value == "unknown") location = media::LocationPresence::kUnknown;
    } else if (key == "owner") {
      uint32_t owner;
      if (*value != "none" && absl::SimpleAtoi(*value, &owner)) r.owner = owner;
    } else if (key == "rule") {
      r.rule = *value;
    } else if (key == "errno") {
      r.errno_name = *value;
    } else if (key == "judged") {
      std::optional<scopedfs::Op> judged = daemon::ParseOpName(*value);
      if (!judged.has_value())
        return absl::InvalidArgumentError(absl::StrCat("unknown judged=", *value));
      r.op = *judged;
    }
  }
  if (!have_uid || !have_path) return absl::InvalidArgumentError("the line has no uid= or path=");
  if (!r.directory && media.has_value()) {
    media::ContentFacts facts;
    facts.media_class = *media;
    facts.location = location.value_or(media::LocationPresence::kUnknown);
    // Existing files were judged on their sniffed content; a new name only on its extension.
    facts.content_known = r.op != OP_CREATE && r.op != OP_MKDIR;
    r.content = facts;
  }
  return r;
}

absl::StatusOr<std::string> Audit2Why(const policy::LoadedConfig& config, const AuditRecord& record,
                                      uint32_t storage_user_id) {
  absl::StatusOr<std::unique_ptr<const Engine>> built = Engine::Create(config);
  if (!built.ok()) return built.status();
  const Engine& engine = **built;
  policy::Request request;
  request.uid = record.uid;
  request.op = record.op;
  request.path = record.path;
  request.node_type = record.directory ? NODE_TYPE_DIRECTORY : NODE_TYPE_FILE;
  if (record.content.has_value()) request.content = &*record.content;
  request.owner_uid = record.owner;
  request.storage_user_id = storage_user_id;
  Decision d = engine.Decide(request);

  std::ostringstream out;
  scopedfs::Op requested = record.requested != OP_UNSPECIFIED ? record.requested : record.op;
  out << "logged:   " << (record.redacted ? "redacted" : "denied") << " { "
      << daemon::OpName(requested) << " } \"" << daemon::EscapeAuditValue(record.path)
      << "\" by rule \"" << record.rule << "\""
      << (record.errno_name.empty() ? "" : absl::StrCat(" (", record.errno_name, ")")) << "\n";
  if (requested != record.op) {
    out << "judged:   " << daemon::OpName(record.op) << " of that name: the "
        << daemon::OpName(requested) << " was refused by it\n";
  }
  out << "decision: " << OutcomeText(d) << "\n";
  out << "rule:     " << RuleText(engine, d) << "\n";
  out << "reason:   " << d.reason << "\n";
  if (!record.rule.empty() && record.rule != "(default action)" && record.rule != d.rule_name) {
    out << "note:     the line names rule \"" << record.rule
        << "\": the policy or the app's permissions changed since it was logged\n";
  }
  policy::Caller caller = engine.apps().Identify(record.uid);
  if (caller.kind != policy::UidKind::kApp || caller.app == nullptr) {
    out << "caller:   uid " << record.uid << " (" << policy::UidKindName(caller.kind)
        << (caller.app == nullptr ? ", not in the app registry" : "") << ")\n";
  } else {
    out << "caller:   uid " << record.uid << ": " << absl::StrJoin(caller.app->packages, ", ")
        << (caller.app->target_sdk == 0
                ? std::string(" (target SDK unknown)")
                : absl::StrCat(" (target SDK ", caller.app->target_sdk, ")"))
        << "\n";
    // A grant that means nothing at this target SDK (Policy.target_sdk_permission): say so, as
    // granting it again would not help.
    for (const TargetSdkPermission& t : config.policy.target_sdk_permission()) {
      uint32_t sdk = caller.app->target_sdk;
      if (sdk == 0 || sdk < t.below_target_sdk()) continue;
      for (const std::string& from : t.from()) {
        int bit = engine.permissions().Find(from);
        if (bit < 0 || !caller.app->granted.test(static_cast<size_t>(bit))) continue;
        out << "sdk:      " << from << " does not count as " << t.permission()
            << " for an app targeting SDK " << t.below_target_sdk() << " or later\n";
      }
    }
  }

  // Each permission of the policy's vocabulary, flipped for the caller's app id, one at a time.
  std::vector<std::string> changes;
  uint32_t app_id = record.uid % policy::kPerUserRange;
  for (size_t bit = 0; bit < engine.permissions().size(); ++bit) {
    const std::string& name = engine.permissions().Name(bit);
    bool held = caller.app != nullptr && caller.app->granted.test(bit);
    policy::LoadedConfig changed = config;
    bool found = false;
    for (scopedfs::App& app : *changed.apps.mutable_app()) {
      if (app.uid() % policy::kPerUserRange != app_id) continue;
      found = true;
      auto* perms = app.mutable_permission();
      if (held) {
        for (int i = perms->size() - 1; i >= 0; --i) {
          if (perms->Get(i) == name) perms->DeleteSubrange(i, 1);
        }
      } else {
        app.add_permission(name);
        break;  // one package of a shared uid grants it to all
      }
    }
    if (!found) {
      if (held || caller.kind != policy::UidKind::kApp) continue;
      // Known only from packages.list, or not at all: an app entry of its own holds the grant.
      scopedfs::App* app = changed.apps.add_app();
      app->set_package(record.package.empty() ? absl::StrCat("uid.", record.uid) : record.package);
      app->set_uid(app_id);
      app->add_permission(name);
      for (auto it = changed.packages_list.begin(); it != changed.packages_list.end();) {
        it = it->uid % policy::kPerUserRange == app_id ? changed.packages_list.erase(it) : it + 1;
      }
    }
    absl::StatusOr<std::unique_ptr<const Engine>> variant = Engine::Create(changed);
    if (!variant.ok()) continue;
    Decision other = (*variant)->Decide(request);
    if (SameOutcome(d, other)) continue;
    changes.push_back(absl::StrCat(held ? "without " : "with ", name, ": ", OutcomeText(other),
                                   " by rule ", RuleText(**variant, other)));
  }
  if (changes.empty()) {
    out << "change:   no single permission changes the outcome";
    if (caller.kind != policy::UidKind::kApp) out << " (the caller is not an app)";
    out << "\n";
  }
  for (const std::string& change : changes) out << "change:   " << change << "\n";
  return out.str();
}

}  // namespace scopedfs::tools
