// Rule compilation and matching (see rule_set.h; the static analysis is in rule_analysis.cc).
#include "policy/rule_set.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/folded_name.h"

namespace scopedfs::policy {
namespace {

constexpr uint64_t kAllAreas = ~uint64_t{0};

// As a casefolded lower compares names (folded_name.h): "Muſic" is the top-level Music.
bool ContainsFolded(const std::vector<std::string>& list, absl::string_view value) {
  return std::any_of(list.begin(), list.end(),
                     [value](const std::string& s) { return base::FoldsTogether(s, value); });
}

bool ContainsExact(const std::vector<std::string>& list, absl::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool TristateHolds(Tristate want, bool actual) {
  return want == TRISTATE_UNSPECIFIED || (want == TRISTATE_TRUE) == actual;
}

}  // namespace

bool CompiledRule::DependsOnCaller() const {
  return !packages.empty() || !uids.empty() || !app_ids.empty() || !user_ids.empty() ||
         holds_all.any() || holds_any.any() || holds_none.any() || !selinux_domains.empty() ||
         owner != OWNERSHIP_UNSPECIFIED || cross_user != TRISTATE_UNSPECIFIED ||
         registered != TRISTATE_UNSPECIFIED || user_selected != TRISTATE_UNSPECIFIED ||
         area == AREA_RELATION_OWN || area == AREA_RELATION_OTHER;
}

bool CompiledRule::DependsOnPlace() const {
  return !top_dirs.empty() || !globs.empty() || depth != DEPTH_UNSPECIFIED ||
         standard_top_dir != TRISTATE_UNSPECIFIED || area != AREA_RELATION_UNSPECIFIED ||
         media_classes != 0 || has_location != TRISTATE_UNSPECIFIED;
}

bool CompiledRule::Matches(const MatchInput& in) const {
  return MatchesPlace(in) && MatchesCaller(in);
}

bool CompiledRule::MatchesCaller(const MatchInput& in) const {
  const Caller& caller = *in.caller;
  if (!packages.empty() && std::none_of(packages.begin(), packages.end(), [&caller](const auto& p) {
        return caller.HoldsPackage(p);
      })) {
    return false;
  }
  if (!uids.empty() && std::none_of(uids.begin(), uids.end(),
                                    [&caller](IdSpan s) { return s.Contains(caller.uid); })) {
    return false;
  }
  if (!app_ids.empty() && std::none_of(app_ids.begin(), app_ids.end(),
                                       [&caller](IdSpan s) { return s.Contains(caller.app_id); })) {
    return false;
  }
  if (!user_ids.empty() &&
      std::find(user_ids.begin(), user_ids.end(), caller.user_id) == user_ids.end()) {
    return false;
  }
  static const PermissionSet kNoPermissions;
  const PermissionSet& held = caller.app != nullptr ? caller.app->permissions : kNoPermissions;
  if ((held & holds_all) != holds_all) return false;
  if (holds_any.any() && (held & holds_any).none()) return false;
  if ((held & holds_none).any()) return false;
  if (!selinux_domains.empty() && !ContainsExact(selinux_domains, in.selinux_domain)) return false;
  if (owner != OWNERSHIP_UNSPECIFIED && (owner == OWNERSHIP_CALLER_OWNS) != in.caller_owns) {
    return false;
  }
  if (!TristateHolds(cross_user, in.cross_user)) return false;
  if (!TristateHolds(registered, caller.app != nullptr)) return false;
  if (!TristateHolds(user_selected, in.user_selected)) return false;
  // MatchesPlace checked that the path is in a listed area; whose it is depends on the caller.
  if (area == AREA_RELATION_OWN && !caller.HoldsPackage(in.path->area_package)) return false;
  if (area == AREA_RELATION_OTHER && caller.HoldsPackage(in.path->area_package)) return false;
  return true;
}

bool CompiledRule::MatchesPlace(const MatchInput& in) const {
  if (ops != 0 && (ops & Bit(in.op)) == 0) return false;
  const PathInfo& path = *in.path;
  bool at_root = path.depth == DEPTH_ROOT;
  if (!top_dirs.empty() && (at_root || !ContainsFolded(top_dirs, path.top_dir))) return false;
  if (!globs.empty() &&
      (at_root || std::none_of(globs.begin(), globs.end(),
                               [&path](const Glob& g) { return g.Matches(path.path); }))) {
    return false;
  }
  if (depth != DEPTH_UNSPECIFIED && depth != path.depth) return false;
  if (standard_top_dir != TRISTATE_UNSPECIFIED &&
      (at_root || !TristateHolds(standard_top_dir, path.standard_top_dir))) {
    return false;
  }
  if (area != AREA_RELATION_UNSPECIFIED) {
    bool in_listed_area = path.area >= 0 && (area_mask >> path.area & 1) != 0;
    switch (area) {
      case AREA_RELATION_OWN:
      case AREA_RELATION_OTHER:
        if (!in_listed_area) return false;
        break;
      case AREA_RELATION_NONE:
        if (in_listed_area) return false;
        break;
      default:
        return false;
    }
  }
  if (node_type != NODE_TYPE_UNSPECIFIED && node_type != in.node_type) return false;

  bool directory = in.node_type == NODE_TYPE_DIRECTORY;
  MediaClass media_class = directory ? MEDIA_CLASS_NONE : in.content->media_class;
  if (media_classes != 0 && (media_classes & Bit(media_class)) == 0) return false;
  if (!TristateHolds(has_location, !directory && in.content->MayHaveLocation())) return false;
  return true;
}

CallerMatch CompiledRule::MatchesEveryCallerOfTheUser() const {
  // Any caller of the mounted storage's user: never cross-user.
  if (cross_user == TRISTATE_TRUE) return CallerMatch::kNever;
  bool depends = !packages.empty() || !uids.empty() || !app_ids.empty() || !user_ids.empty() ||
                 holds_all.any() || holds_any.any() || holds_none.any() ||
                 !selinux_domains.empty() || owner != OWNERSHIP_UNSPECIFIED ||
                 registered != TRISTATE_UNSPECIFIED || user_selected != TRISTATE_UNSPECIFIED ||
                 area == AREA_RELATION_OWN || area == AREA_RELATION_OTHER;
  return depends ? CallerMatch::kDepends : CallerMatch::kAlways;
}

absl::StatusOr<CompiledAction> CompileAction(const Action& action, bool outcome_required,
                                             const ProblemFn& report) {
  std::string first_problem;
  auto problem = [&](std::vector<FieldStep> steps, std::string message) {
    if (first_problem.empty()) first_problem = message;
    if (report) report(std::move(steps), std::move(message));
  };
  CompiledAction compiled;
  compiled.outcome = action.outcome();
  compiled.error = action.error();
  if (!Outcome_IsValid(action.outcome())) {
    problem({{"outcome"}}, absl::StrCat("unknown outcome number ", action.outcome()));
    compiled.outcome = OUTCOME_HIDE;
  }
  if (!Errno_IsValid(action.error())) {
    problem({{"error"}}, absl::StrCat("unknown error number ", action.error()));
    compiled.error = ERRNO_UNSPECIFIED;
  }
  if (action.outcome() == OUTCOME_UNSPECIFIED) {
    if (outcome_required) problem({{"outcome"}}, "action needs an outcome");
    compiled.outcome = OUTCOME_HIDE;
  }
  if (action.error() != ERRNO_UNSPECIFIED && action.outcome() != OUTCOME_DENY) {
    problem({{"error"}},
            absl::StrCat("error ", Errno_Name(action.error()), " only applies to OUTCOME_DENY"));
  }
  for (int i = 0; i < action.redact_size(); ++i) {
    if (!Redaction_IsValid(action.redact(i))) {
      problem({{"redact", i}}, absl::StrCat("unknown redaction number ", action.redact(i)));
      continue;
    }
    if (action.redact(i) == REDACTION_UNSPECIFIED) {
      problem({{"redact", i}}, "REDACTION_UNSPECIFIED is not a redaction");
    }
    compiled.redact |= Bit(action.redact(i));
  }
  if (action.outcome() == OUTCOME_ALLOW_REDACTED && action.redact_size() == 0) {
    problem({{"outcome"}}, "OUTCOME_ALLOW_REDACTED needs at least one redact entry");
  }
  if (action.outcome() != OUTCOME_ALLOW_REDACTED && action.redact_size() > 0) {
    problem({{"redact", 0}}, "redact only applies to OUTCOME_ALLOW_REDACTED");
  }
  if (!first_problem.empty()) return absl::InvalidArgumentError(first_problem);
  return compiled;
}

absl::StatusOr<CompiledRule> CompileRule(const Rule& rule, const PermissionIndex& permissions,
                                         const StorageLayout& layout, const ProblemFn& report) {
  std::string first_problem;
  auto problem = [&](std::vector<FieldStep> steps, std::string message) {
    if (first_problem.empty()) first_problem = message;
    if (report) report(std::move(steps), std::move(message));
  };
  CompiledRule c;
  c.name = rule.name();
  c.description = rule.description();
  if (rule.name().empty()) problem({}, "rule needs a name");

  for (int i = 0; i < rule.op_size(); ++i) {
    if (!Op_IsValid(rule.op(i))) {
      problem({{"op", i}}, absl::StrCat("unknown operation number ", rule.op(i)));
      continue;
    }
    if (rule.op(i) == OP_UNSPECIFIED) problem({{"op", i}}, "OP_UNSPECIFIED is not an operation");
    c.ops |= Bit(rule.op(i));
  }

  const AppMatch& app = rule.app();
  for (int i = 0; i < app.package_size(); ++i) {
    if (app.package(i).empty()) problem({{"app"}, {"package", i}}, "empty package name");
    c.packages.push_back(app.package(i));
  }
  auto spans = [&](const google::protobuf::RepeatedPtrField<IdRange>& ranges,
                   absl::string_view field, std::vector<IdSpan>* out) {
    for (int i = 0; i < ranges.size(); ++i) {
      IdSpan span{ranges[i].first(), ranges[i].last() == 0 ? ranges[i].first() : ranges[i].last()};
      if (span.last < span.first) {
        problem({{"app"}, {field, i}},
                absl::StrCat("range ", span.first, "..", span.last, " is reversed"));
      }
      out->push_back(span);
    }
  };
  spans(app.uid(), "uid", &c.uids);
  spans(app.app_id(), "app_id", &c.app_ids);
  for (int i = 0; i < app.app_id_size(); ++i) {
    if (c.app_ids[static_cast<size_t>(i)].last >= kPerUserRange) {
      problem({{"app"}, {"app_id", i}},
              absl::StrCat("app ids are below ", kPerUserRange, " (uid % ", kPerUserRange, ")"));
    }
  }
  c.user_ids.assign(app.user_id().begin(), app.user_id().end());
  auto perms = [&](const google::protobuf::RepeatedPtrField<std::string>& names,
                   absl::string_view field, PermissionSet* out) {
    for (int i = 0; i < names.size(); ++i) {
      int bit = permissions.Find(names[i]);
      if (bit < 0) {
        problem({{"app"}, {field, i}},
                absl::StrCat("unknown permission \"", names[i],
                             "\" (not declared by the policy's permission list)"));
      } else {
        out->set(static_cast<size_t>(bit));
      }
    }
  };
  perms(app.holds_all(), "holds_all", &c.holds_all);
  perms(app.holds_any(), "holds_any", &c.holds_any);
  perms(app.holds_none(), "holds_none", &c.holds_none);
  for (int i = 0; i < app.selinux_domain_size(); ++i) {
    if (app.selinux_domain(i).empty()) {
      problem({{"app"}, {"selinux_domain", i}}, "empty SELinux domain");
    }
    c.selinux_domains.push_back(app.selinux_domain(i));
  }
  c.owner = app.owner();
  c.cross_user = app.cross_user();
  c.registered = app.registered();
  c.user_selected = app.user_selected();
  // Text format accepts any number for a proto3 enum; only named values mean anything.
  auto check_enum = [&](bool valid, std::vector<FieldStep> steps, int value) {
    if (!valid) problem(std::move(steps), absl::StrCat("unknown enum value ", value));
  };
  check_enum(Ownership_IsValid(app.owner()), {{"app"}, {"owner"}}, app.owner());
  check_enum(Tristate_IsValid(app.cross_user()), {{"app"}, {"cross_user"}}, app.cross_user());
  check_enum(Tristate_IsValid(app.registered()), {{"app"}, {"registered"}}, app.registered());
  check_enum(Tristate_IsValid(app.user_selected()), {{"app"}, {"user_selected"}},
             app.user_selected());

  const PathMatch& path = rule.path();
  for (int i = 0; i < path.top_dir_size(); ++i) {
    const std::string& dir = path.top_dir(i);
    if (dir.empty() || absl::StrContains(dir, '/') || dir == "." || dir == "..") {
      problem({{"path"}, {"top_dir", i}},
              absl::StrCat("top_dir \"", absl::CEscape(dir), "\" is not a single path segment"));
    }
    c.top_dirs.push_back(dir);
  }
  for (int i = 0; i < path.glob_size(); ++i) {
    absl::StatusOr<Glob> glob = Glob::Compile(path.glob(i));
    if (!glob.ok()) {
      problem({{"path"}, {"glob", i}}, std::string(glob.status().message()));
    } else {
      c.globs.push_back(*std::move(glob));
    }
  }
  c.depth = path.depth();
  c.standard_top_dir = path.standard_top_dir();
  c.area = path.area();
  c.node_type = path.node_type();
  check_enum(Depth_IsValid(path.depth()), {{"path"}, {"depth"}}, path.depth());
  check_enum(Tristate_IsValid(path.standard_top_dir()), {{"path"}, {"standard_top_dir"}},
             path.standard_top_dir());
  check_enum(AreaRelation_IsValid(path.area()), {{"path"}, {"area"}}, path.area());
  check_enum(NodeType_IsValid(path.node_type()), {{"path"}, {"node_type"}}, path.node_type());
  if (path.area_name_size() == 0) {
    c.area_mask = kAllAreas;
  } else if (path.area() == AREA_RELATION_UNSPECIFIED) {
    problem({{"path"}, {"area_name", 0}}, "area_name is set but area (OWN/OTHER/NONE) is not");
  }
  for (int i = 0; i < path.area_name_size(); ++i) {
    bool found = false;
    for (size_t a = 0; a < layout.area_count(); ++a) {
      if (layout.area_name(a) == path.area_name(i)) {
        c.area_mask |= uint64_t{1} << a;
        found = true;
      }
    }
    if (!found) {
      problem({{"path"}, {"area_name", i}},
              absl::StrCat("unknown area \"", path.area_name(i), "\" (not in layout.area)"));
    }
  }

  const ContentMatch& content = rule.content();
  for (int i = 0; i < content.media_class_size(); ++i) {
    if (!MediaClass_IsValid(content.media_class(i))) {
      problem({{"content"}, {"media_class", i}},
              absl::StrCat("unknown media class number ", content.media_class(i)));
      continue;
    }
    if (content.media_class(i) == MEDIA_CLASS_UNSPECIFIED) {
      problem({{"content"}, {"media_class", i}}, "MEDIA_CLASS_UNSPECIFIED is not a media class");
    }
    c.media_classes |= Bit(content.media_class(i));
  }
  c.has_location = content.has_location();
  check_enum(Tristate_IsValid(content.has_location()), {{"content"}, {"has_location"}},
             content.has_location());

  absl::StatusOr<CompiledAction> action =
      CompileAction(rule.action(), /*outcome_required=*/true,
                    [&](std::vector<FieldStep> steps, std::string message) {
                      steps.insert(steps.begin(), FieldStep{"action"});
                      problem(std::move(steps), std::move(message));
                    });
  if (action.ok()) c.action = *action;

  if (!first_problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("rule \"", rule.name(), "\": ", first_problem));
  }
  return c;
}

}  // namespace scopedfs::policy
