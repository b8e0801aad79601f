// Decision engine (see engine.h): first matching rule wins; no rule -> the default action.
#include "policy/engine.h"

#include <algorithm>
#include <atomic>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "policy/status_macros.h"

namespace scopedfs::policy {
namespace {

constexpr absl::string_view kDefaultRuleName = "<default>";
constexpr absl::string_view kDefaultReason = "no rule matched; the policy's default action applies";
constexpr absl::string_view kInvalidPathRuleName = "<invalid-path>";
constexpr absl::string_view kInvalidPathReason =
    "the path is not a valid storage path (empty/'.'/'..' segment, NUL byte, or too long)";
constexpr absl::string_view kInvalidRequestRuleName = "<invalid-request>";
constexpr absl::string_view kInvalidRequestReason = "the request names no operation";

// Directories and unread files: nothing is known, so nothing media-specific may be granted.
const media::ContentFacts kUnknownContent{};
constexpr absl::string_view kUncertainDenyReason =
    "the rule grants a redacted copy, but this file's location metadata could not be parsed, so "
    "no redacted copy can be vouched for (uncertain_location: DENY)";
constexpr absl::string_view kUncertainRedactReason =
    "the rule grants a redacted copy; this file's location metadata could not be parsed, so "
    "everything that could hold location is filled (uncertain_location: REDACT_ALL)";

constexpr absl::string_view kGuardReadRuleName = "<location-guard>";
constexpr absl::string_view kGuardReadReason =
    "the file may carry location metadata and the caller is neither its owner nor entitled to "
    "location (location_guard), so every location range the parsers find is filled";
constexpr absl::string_view kGuardWriteRuleName = "<location-guard>";
constexpr absl::string_view kGuardWriteReason =
    "the caller reads this file with location filled (location_guard), so it may not change it: "
    "a writer could break the metadata's structure, read the file raw and restore it";

// Every location kind: what a redacted read fills, whichever rule granted it, less the place
// names when the policy says they are not location (Policy.redact_place_names FALSE).
constexpr EnumMask kPlaceNameKinds = Bit(REDACTION_IPTC_PLACE) | Bit(REDACTION_XMP_PLACE);
constexpr EnumMask kAllLocationKinds = Bit(REDACTION_EXIF_GPS) | Bit(REDACTION_XMP_GPS) |
                                       Bit(REDACTION_ISOBMFF_LOCATION) | kPlaceNameKinds;

}  // namespace

int ErrnoOf(const Decision& d) {
  if (d.outcome == OUTCOME_HIDE) return ENOENT;
  switch (d.error) {
    case ERRNO_EPERM:
      return EPERM;
    case ERRNO_EROFS:
      return EROFS;
    case ERRNO_ENOENT:
      return ENOENT;
    case ERRNO_EEXIST:
      return EEXIST;
    default:
      return EACCES;
  }
}

absl::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case OUTCOME_ALLOW:
      return "ALLOW";
    case OUTCOME_ALLOW_REDACTED:
      return "ALLOW_REDACTED";
    case OUTCOME_DENY:
      return "DENY";
    case OUTCOME_HIDE:
      return "HIDE";
    default:
      return "UNSPECIFIED";
  }
}

absl::StatusOr<std::unique_ptr<const Engine>> Engine::Create(const LoadedConfig& config) {
  PermissionIndex permissions(config.policy);
  ASSIGN_OR_RETURN(StorageLayout layout, StorageLayout::Compile(config.policy.layout()));
  AppRegistry apps = AppRegistry::Build(config.apps, config.packages_list, permissions);
  std::unique_ptr<Engine> engine(
      new Engine(std::move(permissions), std::move(apps), std::move(layout)));
  static std::atomic<uint64_t> next_serial{1};
  engine->serial_ = next_serial.fetch_add(1, std::memory_order_relaxed);
  for (const Rule& rule : config.policy.rule()) {
    ASSIGN_OR_RETURN(CompiledRule compiled,
                     CompileRule(rule, engine->permissions_, engine->layout_));
    engine->rules_.push_back(std::move(compiled));
  }
  engine->rule_locations_ = config.rule_locations;
  engine->rule_locations_.resize(engine->rules_.size());
  ASSIGN_OR_RETURN(engine->default_action_,
                   CompileAction(config.policy.default_action(), /*outcome_required=*/false));
  for (const CompiledRule& rule : engine->rules_) {
    CompiledRule free = rule;
    free.node_type = NODE_TYPE_UNSPECIFIED;
    free.media_classes = 0;
    free.has_location = TRISTATE_UNSPECIFIED;
    free.owner = OWNERSHIP_UNSPECIFIED;
    engine->object_dependent_.push_back(
        rule.node_type != NODE_TYPE_UNSPECIFIED || rule.media_classes != 0 ||
        rule.has_location != TRISTATE_UNSPECIFIED || rule.owner != OWNERSHIP_UNSPECIFIED);
    engine->object_free_rules_.push_back(std::move(free));
    CompiledRule content_free = rule;
    content_free.media_classes = 0;
    content_free.has_location = TRISTATE_UNSPECIFIED;
    engine->content_dependent_.push_back(rule.media_classes != 0 ||
                                         rule.has_location != TRISTATE_UNSPECIFIED);
    engine->content_free_rules_.push_back(std::move(content_free));
  }
  // Location reaches a LOOKUP's decision through a has_location condition, or through an
  // ALLOW_REDACTED outcome (Uncertain turns it into DENY where location is uncertain).
  engine->lookup_reads_location_ =
      engine->default_action_.outcome == OUTCOME_ALLOW_REDACTED ||
      std::any_of(engine->rules_.begin(), engine->rules_.end(), [](const CompiledRule& rule) {
        return (rule.ops == 0 || (rule.ops & Bit(OP_LOOKUP)) != 0) &&
               (rule.has_location != TRISTATE_UNSPECIFIED ||
                rule.action.outcome == OUTCOME_ALLOW_REDACTED);
      });
  engine->policy_name_ = config.policy.name();
  engine->caller_independent_ =
      !config.policy.has_location_guard() &&
      std::none_of(engine->rules_.begin(), engine->rules_.end(),
                   [](const CompiledRule& rule) { return rule.DependsOnCaller(); });
  auto any_rule = [&engine](auto&& pred) {
    return std::any_of(engine->rules_.begin(), engine->rules_.end(), pred);
  };
  bool guard = config.policy.has_location_guard();
  engine->place_independent_ =
      !guard && !any_rule([](const CompiledRule& r) { return r.DependsOnPlace(); });
  engine->matches_names_ = any_rule([](const CompiledRule& r) { return !r.globs.empty(); });
  engine->may_redact_ =
      guard || engine->default_action_.outcome == OUTCOME_ALLOW_REDACTED ||
      any_rule([](const CompiledRule& r) { return r.action.outcome == OUTCOME_ALLOW_REDACTED; });
  engine->reads_owner_ =
      guard || any_rule([](const CompiledRule& r) { return r.owner != OWNERSHIP_UNSPECIFIED; });
  engine->reads_content_ = engine->may_redact_ || any_rule([](const CompiledRule& r) {
                             return r.media_classes != 0 || r.has_location != TRISTATE_UNSPECIFIED;
                           });
  if (guard) {
    engine->location_guard_ = true;
    for (const AppMatch& app : config.policy.location_guard().entitled()) {
      Rule rule;
      rule.set_name("location-guard-entitled");
      *rule.mutable_app() = app;
      rule.mutable_action()->set_outcome(OUTCOME_ALLOW);
      ASSIGN_OR_RETURN(CompiledRule compiled,
                       CompileRule(rule, engine->permissions_, engine->layout_));
      engine->location_entitled_.push_back(std::move(compiled));
    }
  }
  if (config.policy.semantics() == SEMANTICS_POSIX) engine->semantics_ = SEMANTICS_POSIX;
  if (config.policy.visibility() == VISIBILITY_LISTING) engine->visibility_ = VISIBILITY_LISTING;
  if (config.policy.uncertain_location() == UNCERTAIN_LOCATION_REDACT_ALL) {
    engine->uncertain_location_ = UNCERTAIN_LOCATION_REDACT_ALL;
  }
  engine->redaction_kinds_ = config.policy.redact_place_names() == TRISTATE_FALSE
                                 ? kAllLocationKinds & ~kPlaceNameKinds
                                 : kAllLocationKinds;
  return std::unique_ptr<const Engine>(std::move(engine));
}

// A request's inputs, classified and identified once for any number of rule walks.
struct Engine::Prepared {
  Decision invalid;  // outcome DENY with its reason when the request cannot be judged
  bool valid = false;
  PathInfo path;
  Caller caller;
  MatchInput in;
};

void Engine::Prepare(const Request& request, Prepared* p) const {
  if (request.op == OP_UNSPECIFIED) {
    p->invalid.outcome = OUTCOME_DENY;
    p->invalid.rule_name = kInvalidRequestRuleName;
    p->invalid.reason = kInvalidRequestReason;
    return;
  }
  // Paths are bounded to PATH_MAX - 1 so that path rules match cheaply; a policy that judges
  // nothing by the place needs no bound, and the kernel allows any depth below the storage
  // root. Malformed paths fail either way.
  absl::StatusOr<PathInfo> path =
      layout_.Classify(request.path, place_independent_ ? kAnyPathBytes : kMaxPathBytes);
  if (!path.ok()) {
    p->invalid.outcome = OUTCOME_DENY;
    p->invalid.rule_name = kInvalidPathRuleName;
    p->invalid.reason = kInvalidPathReason;
    return;
  }
  p->valid = true;
  p->path = *path;
  p->caller = apps_.Identify(request.uid);
  MatchInput& in = p->in;
  in.caller = &p->caller;
  in.selinux_domain = !request.selinux_domain.empty() || p->caller.app == nullptr
                          ? request.selinux_domain
                          : absl::string_view(p->caller.app->selinux_domain);
  in.op = request.op;
  in.path = &p->path;
  in.node_type = request.node_type;
  in.content = request.content != nullptr ? request.content : &kUnknownContent;
  in.caller_owns = request.op != OP_CREATE && request.op != OP_MKDIR &&
                   request.owner_uid.has_value() && *request.owner_uid == request.uid;
  in.cross_user = p->caller.user_id != request.storage_user_id;
  in.user_selected = p->caller.app != nullptr && p->caller.app->UserSelected(p->path.path);
}

Decision Engine::Evaluate(const MatchInput& in) const {
  Decision decision;
  for (size_t i = 0; i < rules_.size(); ++i) {
    const CompiledRule& rule = rules_[i];
    if (!rule.Matches(in)) continue;
    decision.outcome = rule.action.outcome;
    decision.error = rule.action.error;
    decision.redact = rule.action.redact;
    decision.rule_index = static_cast<int>(i);
    decision.rule_name = rule.name;
    decision.reason = rule.description;
    return Uncertain(GuardLocation(decision, in), *in.content);
  }
  decision.outcome = default_action_.outcome;
  decision.error = default_action_.error;
  decision.redact = default_action_.redact;
  decision.rule_name = kDefaultRuleName;
  decision.reason = kDefaultReason;
  return Uncertain(GuardLocation(decision, in), *in.content);
}

Decision Engine::Decide(const Request& request) const {
  Prepared p;
  Prepare(request, &p);
  return p.valid ? Listed(Evaluate(p.in), p) : p.invalid;
}

bool Engine::FoundRegardless(const Prepared& p) const {
  if (visibility_ != VISIBILITY_LISTING || !p.valid || p.in.cross_user) return false;
  return p.path.area < 0 || !layout_.area_separate_mount(static_cast<size_t>(p.path.area));
}

Decision Engine::Listed(Decision decision, const Prepared& p) const {
  if (decision.outcome != OUTCOME_HIDE || p.in.op == OP_LOOKUP || !FoundRegardless(p)) {
    return decision;
  }
  decision.outcome = OUTCOME_DENY;
  decision.error = ERRNO_EACCES;
  return decision;
}

bool Engine::FoundByEveryCaller(absl::string_view path) const {
  if (visibility_ != VISIBILITY_LISTING) return false;
  absl::StatusOr<PathInfo> info = layout_.Classify(path);
  if (!info.ok()) return false;
  return info->area < 0 || !layout_.area_separate_mount(static_cast<size_t>(info->area));
}

bool Engine::SubdirectoriesVisibleToEveryCaller(absl::string_view path) const {
  if (matches_names_) return false;
  // Where the children are areas' roots, any name stands for a package's area: whose area it is
  // depends on the caller, which VisibleToEveryCaller treats as such.
  bool holds_area_roots = false;
  std::vector<std::string> names = layout_.ChildNamesClassifiedApart(path, &holds_area_roots);
  if (path.empty()) {
    // A top_dir condition singles out names at the root.
    for (const CompiledRule& rule : rules_) {
      names.insert(names.end(), rule.top_dirs.begin(), rule.top_dirs.end());
    }
  }
  // Any other name is classified as this one is (no rule matches names).
  std::string other = "scopedfs-any-other-name";
  while (std::any_of(names.begin(), names.end(),
                     [&other](const std::string& n) { return absl::EqualsIgnoreCase(n, other); })) {
    other += "-";
  }
  names.push_back(other);
  for (const std::string& name : names) {
    std::string child = path.empty() ? name : absl::StrCat(path, "/", name);
    if (!VisibleToEveryCaller(child)) return false;
  }
  return true;
}

LookupDecisions Engine::DecideLookup(const Request& request,
                                     const media::ContentFacts* located) const {
  LookupDecisions out;
  Request lookup = request;
  lookup.op = OP_LOOKUP;
  Prepared p;
  Prepare(lookup, &p);
  if (!p.valid) {
    out.lookup = out.read = out.read_if_located = p.invalid;
    return out;
  }
  out.lookup = Evaluate(p.in);
  out.found = out.lookup.Permits() || FoundRegardless(p);
  if (!out.found || request.node_type != NODE_TYPE_FILE) return out;
  p.in.op = OP_READ;
  out.read = Listed(Evaluate(p.in), p);
  out.read_if_located = out.read;
  if (located != nullptr && out.read.outcome == OUTCOME_ALLOW) {
    p.in.content = located;
    out.read_if_located = Listed(Evaluate(p.in), p);
  }
  return out;
}

// First match, walked with the object unknown: a rule whose conditions other than the object's
// fail cannot match; one without object conditions that matches decides; one with them may or
// may not match, which is harmless only when it would HIDE too.
std::optional<Decision> Engine::HiddenWhateverIsThere(const Request& request) const {
  Request lookup;
  lookup.uid = request.uid;
  lookup.op = OP_LOOKUP;
  lookup.path = request.path;
  lookup.storage_user_id = request.storage_user_id;
  lookup.selinux_domain = request.selinux_domain;
  Prepared p;
  Prepare(lookup, &p);
  if (!p.valid || FoundRegardless(p)) return std::nullopt;
  Decision decision;
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (!object_free_rules_[i].Matches(p.in)) continue;
    const CompiledRule& rule = rules_[i];
    if (rule.action.outcome != OUTCOME_HIDE) return std::nullopt;
    if (object_dependent_[i]) continue;
    decision.outcome = OUTCOME_HIDE;
    decision.rule_index = static_cast<int>(i);
    decision.rule_name = rule.name;
    decision.reason = rule.description;
    return decision;
  }
  if (default_action_.outcome != OUTCOME_HIDE) return std::nullopt;
  decision.outcome = OUTCOME_HIDE;
  decision.rule_name = kDefaultRuleName;
  decision.reason = kDefaultReason;
  return decision;
}

// First match, walked with the content unknown: a rule whose other conditions fail cannot match
// whatever the content; one without content conditions that matches decides for every content,
// unless the outcome itself reads the content (Uncertain, GuardLocation); one with them may or may
// not match.
bool Engine::DependsOnContent(const Request& request) const {
  if (request.node_type != NODE_TYPE_FILE) return false;  // Prepare's content is kUnknownContent
  Request unread = request;
  unread.content = nullptr;
  Prepared p;
  Prepare(unread, &p);
  if (!p.valid) return false;
  auto outcome_reads_content = [this, &p](Outcome outcome) {
    if (outcome == OUTCOME_ALLOW_REDACTED) return true;
    return location_guard_ && outcome == OUTCOME_ALLOW && !p.in.caller_owns &&
           (p.in.op == OP_READ || p.in.op == OP_WRITE);
  };
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (!content_free_rules_[i].Matches(p.in)) continue;
    if (content_dependent_[i]) return true;
    return outcome_reads_content(rules_[i].action.outcome);
  }
  return outcome_reads_content(default_action_.outcome);
}

bool Engine::VisibleToEveryCaller(absl::string_view path) const {
  absl::StatusOr<PathInfo> info = layout_.Classify(path);
  if (!info.ok()) return false;
  MatchInput in;
  in.op = OP_LOOKUP;
  in.path = &*info;
  in.node_type = NODE_TYPE_DIRECTORY;
  in.content = &kUnknownContent;
  auto visible = [](Outcome o) { return o == OUTCOME_ALLOW || o == OUTCOME_ALLOW_REDACTED; };
  for (const CompiledRule& rule : rules_) {
    if (!rule.MatchesPlace(in)) continue;
    CallerMatch callers = rule.MatchesEveryCallerOfTheUser();
    if (callers == CallerMatch::kNever) continue;
    // Some caller (or every one) gets this rule's outcome: it must show the name.
    if (!visible(rule.action.outcome)) return false;
    if (callers == CallerMatch::kAlways) return true;
  }
  return visible(default_action_.outcome);
}

bool Engine::EntitledToLocation(const MatchInput& in) const {
  for (const CompiledRule& entitled : location_entitled_) {
    if (entitled.Matches(in)) return true;
  }
  return false;
}

Decision Engine::GuardLocation(Decision decision, const MatchInput& in) const {
  // What a redacted reader gets is decided by what the parsers found, never by the media class
  // the rule was written for: a HEIF with an MP4 location box, or an MP4 with an Exif item.
  if (decision.outcome == OUTCOME_ALLOW_REDACTED) {
    decision.redact = redaction_kinds_;
    return decision;
  }
  if (!location_guard_ || decision.outcome != OUTCOME_ALLOW || in.node_type != NODE_TYPE_FILE ||
      in.caller_owns) {
    return decision;
  }
  const media::ContentFacts& content = *in.content;
  if (in.op == OP_READ) {
    if (!content.MayHaveLocation() || EntitledToLocation(in)) return decision;
    decision.outcome = OUTCOME_ALLOW_REDACTED;
    decision.redact = redaction_kinds_;
    decision.rule_index = -1;
    decision.rule_name = kGuardReadRuleName;
    decision.reason = kGuardReadReason;
    return decision;
  }
  if (in.op == OP_WRITE) {
    bool carrier = content.MayHaveLocation() || media::FormatMayCarryLocation(content.format);
    if (!carrier || EntitledToLocation(in)) return decision;
    decision.outcome = OUTCOME_DENY;
    decision.error = ERRNO_EACCES;
    decision.redact = 0;
    decision.rule_index = -1;
    decision.rule_name = kGuardWriteRuleName;
    decision.reason = kGuardWriteReason;
  }
  return decision;
}

Decision Engine::Uncertain(Decision decision, const media::ContentFacts& content) const {
  if (decision.outcome != OUTCOME_ALLOW_REDACTED || !content.LocationUncertain()) return decision;
  if (uncertain_location_ == UNCERTAIN_LOCATION_REDACT_ALL) {
    decision.redact_fallback = true;
    decision.reason = kUncertainRedactReason;
    return decision;
  }
  decision.outcome = OUTCOME_DENY;
  decision.error = ERRNO_EACCES;
  decision.redact = 0;
  decision.reason = kUncertainDenyReason;
  return decision;
}

}  // namespace scopedfs::policy
