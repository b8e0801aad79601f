// Explain text (see explain_text.h).
#include "daemon/service/explain_text.h"

#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace scopedfs::daemon {
namespace {

using media::LocationPresence;
using policy::Caller;
using policy::Decision;
using policy::Engine;
using policy::EnumMask;
using policy::PathInfo;

std::string DescribeCaller(const Engine& engine, uint32_t uid, absl::string_view domain) {
  Caller caller = engine.apps().Identify(uid);
  std::string text = absl::StrCat("uid ", uid, " (", policy::UidKindName(caller.kind), ", user ",
                                  caller.user_id, ", app id ", caller.app_id, ")");
  if (caller.app == nullptr) return absl::StrCat(text, ": not in the app registry");
  auto names = [&engine](const policy::PermissionSet& set) {
    std::vector<std::string> perms;
    for (size_t i = 0; i < engine.permissions().size(); ++i) {
      if (set.test(i)) perms.push_back(engine.permissions().Name(i));
    }
    return perms.empty() ? std::string("none") : absl::StrJoin(perms, ", ");
  };
  std::string sdk = caller.app->target_sdk == 0
                        ? std::string("target SDK unknown")
                        : absl::StrCat("target SDK ", caller.app->target_sdk);
  std::string text_perms = names(caller.app->permissions);
  // Where the target SDK changes what the grants mean (Policy.target_sdk_permission).
  if (caller.app->permissions != caller.app->granted) {
    absl::StrAppend(&text_perms, " (granted: ", names(caller.app->granted), ")");
  }
  return absl::StrCat(text, ": ", absl::StrJoin(caller.app->packages, ", "), "\n          domain ",
                      domain.empty() ? caller.app->selinux_domain : std::string(domain), "; ", sdk,
                      "; permissions: ", text_perms);
}

std::string DescribeRedactions(EnumMask mask) {
  std::vector<std::string> names;
  for (int r = REDACTION_EXIF_GPS; r <= REDACTION_XMP_PLACE; ++r) {
    if (mask & policy::Bit(r)) names.push_back(Redaction_Name(static_cast<Redaction>(r)));
  }
  return absl::StrJoin(names, ", ");
}

std::string DescribeRange(uint64_t begin, uint64_t end) {
  return absl::StrCat("[", begin, ", ", end, ")");
}

}  // namespace

constexpr std::pair<const char*, scopedfs::Op> kOps[] = {
    {"lookup", OP_LOOKUP}, {"read", OP_READ},     {"write", OP_WRITE},
    {"create", OP_CREATE}, {"delete", OP_DELETE}, {"rename", OP_RENAME},
    {"mkdir", OP_MKDIR},   {"rmdir", OP_RMDIR},   {"setattr", OP_SETATTR}};

std::optional<scopedfs::Op> ParseOpName(absl::string_view name) {
  for (const auto& [n, op] : kOps) {
    if (name == n) return op;
  }
  return std::nullopt;
}

std::string OpNames() {
  std::vector<std::string> names;
  for (const auto& [n, op] : kOps) names.push_back(n);
  return absl::StrJoin(names, "|");
}

absl::string_view OpName(scopedfs::Op op) {
  for (const auto& [n, o] : kOps) {
    if (o == op) return n;
  }
  return "unspecified";
}

std::string ExplainText(const ExplainInput& in) {
  const Engine& engine = *in.engine;
  const policy::Request& request = in.request;
  const bool file = request.node_type == NODE_TYPE_FILE;
  std::ostringstream out;
  Decision d = engine.Decide(request);
  out << "decision: " << policy::OutcomeName(d.outcome);
  if (d.outcome == OUTCOME_DENY) {
    out << " (" << (d.error == ERRNO_UNSPECIFIED ? "EACCES" : Errno_Name(d.error).substr(6)) << ")";
  }
  out << "\n";
  if (d.outcome == OUTCOME_ALLOW_REDACTED)
    out << "redact:   " << DescribeRedactions(d.redact) << "\n";
  out << "rule:     " << d.rule_name;
  if (d.rule_index >= 0)
    out << " (" << engine.rule_location(static_cast<size_t>(d.rule_index)) << ")";
  out << "\nreason:   " << d.reason << "\n";
  if (engine.visibility() == VISIBILITY_LISTING) {
    // What a LOOKUP answers is not the lookup decision alone (policy.proto Visibility).
    bool other_user = request.uid / policy::kPerUserRange != request.storage_user_id;
    bool found = engine.FoundByEveryCaller(request.path) && !other_user;
    out << "visible:  LISTING: listings show the name only where a lookup is allowed; "
        << (found ? "a stat finds it for this caller whatever the rules say"
                  : "a stat finds it only where a lookup is allowed (a separate-mount area, or "
                    "a caller of another user)")
        << "\n";
  } else {
    out << "visible:  STRICT: a name a lookup hides does not exist for the caller\n";
  }
  out << "caller:   " << DescribeCaller(engine, request.uid, request.selinux_domain) << "\n";
  absl::StatusOr<PathInfo> info = engine.layout().Classify(request.path);
  if (info.ok()) {
    out << "path:     \"" << request.path << "\"";
    if (info->depth == DEPTH_ROOT) {
      out << " (the storage root)";
    } else {
      out << " (top-level \"" << info->top_dir << "\", "
          << (info->standard_top_dir ? "a default directory" : "not a default directory");
      if (info->area >= 0) {
        out << "; area " << engine.layout().area_name(static_cast<size_t>(info->area)) << " of \""
            << info->area_package << "\"";
      }
      out << ")";
    }
    out << ", " << (file ? "file" : "dir") << "\n";
  } else {
    out << "path:     invalid: " << info.status().message() << "\n";
  }
  const media::ContentFacts* facts = request.content;
  if (file && facts != nullptr) {
    std::string location;
    switch (facts->location) {
      case LocationPresence::kAbsent:
        location = in.scan != nullptr ? "absent (scanned)" : "absent (format carries none)";
        break;
      case LocationPresence::kPresent:
        location = in.scan != nullptr
                       ? absl::StrCat("present (", in.scan->ranges.size(), " ranges)")
                       : "present";
        break;
      case LocationPresence::kMalformed:
        location =
            in.scan != nullptr ? absl::StrCat("malformed (", in.scan->error, ")") : "malformed";
        break;
      case LocationPresence::kUnknown:
        location = "not parsed (treated as present)";
        break;
    }
    out << "content:  " << MediaClass_Name(facts->media_class).substr(12) << "; location "
        << location << "; " << in.content_note << "\n";
  }
  if (d.outcome == OUTCOME_ALLOW_REDACTED && file) {
    if (!in.sniffed_format.has_value()) {
      out << "fill:     decided when the file is read (no --content given)\n";
    } else if (in.scan == nullptr) {
      out << "fill:     none (format " << media::FormatName(*in.sniffed_format)
          << " carries no location)\n";
    } else {
      // What the daemon would serve: the one RedactedFills both call.
      std::vector<media::FillRange> plan = media::RedactedFills(
          in.scan, /*content_read=*/true, in.content_size, in.engine->redaction_kinds());
      if (plan.empty()) out << "fill:     none (no location found)\n";
      for (const media::FillRange& f : plan) {
        out << "fill:     " << DescribeRange(f.begin, f.end) << " with "
            << absl::StrFormat("0x%02x", f.fill) << "\n";
      }
    }
  }
  if (request.owner_uid.has_value()) out << "owner:    uid " << *request.owner_uid << "\n";
  return out.str();
}

}  // namespace scopedfs::daemon
