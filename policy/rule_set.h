// Policy rules compiled for matching: names become permission bits, globs become matchers, repeated
// enums become masks. Shared by the decision engine (Matches) and the config validator (Covers,
// which finds rules an earlier rule makes unreachable).
#ifndef SCOPEDFS_POLICY_RULE_SET_H_
#define SCOPEDFS_POLICY_RULE_SET_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "media/content_facts.h"
#include "policy/app_registry.h"
#include "policy/glob.h"
#include "policy/storage_path.h"
#include "policy/text_config.h"
#include "proto/policy.pb.h"

namespace scopedfs::policy {

// Everything a rule can look at, resolved by the engine before matching.
struct MatchInput {
  const Caller* caller = nullptr;
  absl::string_view selinux_domain;
  Op op = OP_UNSPECIFIED;
  const PathInfo* path = nullptr;
  NodeType node_type = NODE_TYPE_FILE;
  const media::ContentFacts* content = nullptr;  // never null
  bool caller_owns = false;
  bool cross_user = false;
  bool user_selected = false;  // the user picked the path for the caller (App.user_selected)
};

// Bit set over proto enum values (all of ours are < 32).
using EnumMask = uint32_t;
inline constexpr EnumMask Bit(int value) { return EnumMask{1} << value; }

struct IdSpan {
  uint32_t first;
  uint32_t last;
  bool Contains(uint32_t id) const { return first <= id && id <= last; }
};

struct CompiledAction {
  Outcome outcome = OUTCOME_HIDE;
  Errno error = ERRNO_UNSPECIFIED;
  EnumMask redact = 0;  // Bit(Redaction)
};

// Whether a rule's conditions on the caller hold for every caller of the mounted storage's user
// (users other than it are outside the question: see Engine::VisibleToEveryCaller).
enum class CallerMatch { kNever, kAlways, kDepends };

struct CompiledRule {
  std::string name;
  std::string description;
  EnumMask ops = 0;  // 0: all

  // App.
  std::vector<std::string> packages;
  std::vector<IdSpan> uids;
  std::vector<IdSpan> app_ids;
  std::vector<uint32_t> user_ids;
  PermissionSet holds_all;
  PermissionSet holds_any;  // none set: unchecked
  PermissionSet holds_none;
  std::vector<std::string> selinux_domains;
  Ownership owner = OWNERSHIP_UNSPECIFIED;
  Tristate cross_user = TRISTATE_UNSPECIFIED;
  Tristate registered = TRISTATE_UNSPECIFIED;
  Tristate user_selected = TRISTATE_UNSPECIFIED;

  // Path.
  std::vector<std::string> top_dirs;
  std::vector<Glob> globs;
  Depth depth = DEPTH_UNSPECIFIED;
  Tristate standard_top_dir = TRISTATE_UNSPECIFIED;
  AreaRelation area = AREA_RELATION_UNSPECIFIED;
  uint64_t area_mask = 0;  // areas `area` refers to; all ones when area_name is empty
  NodeType node_type = NODE_TYPE_UNSPECIFIED;

  // Content.
  EnumMask media_classes = 0;  // 0: any
  Tristate has_location = TRISTATE_UNSPECIFIED;

  CompiledAction action;

  bool Matches(const MatchInput& in) const;
  // The two halves of Matches: the operation, path, node type and content (`in.caller` is not
  // read); and the caller (app conditions, ownership, and whose area the path is in).
  bool MatchesPlace(const MatchInput& in) const;
  bool MatchesCaller(const MatchInput& in) const;
  // Judged on the rule alone, for callers of the storage's own user (cross_user false).
  CallerMatch MatchesEveryCallerOfTheUser() const;
  // Whether whom the caller is can change whether the rule matches: any app condition, or an
  // area relation (OWN/OTHER depend on the caller's packages).
  bool DependsOnCaller() const;
  // Whether where the object is can change whether the rule matches: a path condition (top
  // directory, glob, depth, standard top directory, area) or a content condition (a media class
  // is partly judged by the name).
  bool DependsOnPlace() const;
};

// Receives each problem found while compiling, with the path to the offending field from the
// message being compiled (the Rule or Action), so the loader can add the file location.
using ProblemFn = std::function<void(std::vector<FieldStep> steps, std::string message)>;

// Compiles one rule, reporting every problem (undeclared permission, unknown area, bad glob,
// reversed id range, unspecified enum, inconsistent action) through `report` if given. Fails with
// InvalidArgument (naming the first problem) if there was any.
absl::StatusOr<CompiledRule> CompileRule(const Rule& rule, const PermissionIndex& permissions,
                                         const StorageLayout& layout,
                                         const ProblemFn& report = nullptr);

// Compiles an action (also used for Policy.default_action, whose unset outcome means HIDE).
absl::StatusOr<CompiledAction> CompileAction(const Action& action, bool outcome_required,
                                             const ProblemFn& report = nullptr);

// True if every request `later` matches is also matched by `earlier`, judged field by field
// (sound, not complete: a false answer does not prove `later` reachable).
bool Covers(const CompiledRule& earlier, const CompiledRule& later);

// Describes why `rule` can never match anything, or returns an empty string. Judged on the rule
// alone (contradictory conditions), not on the rules before it.
std::string WhyNeverMatches(const CompiledRule& rule, const StorageLayout& layout);

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_RULE_SET_H_
