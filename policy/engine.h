// The decision engine: given who asks (uid, SELinux domain), what for (operation), where (path)
// and what the file holds (content facts), returns the policy's decision. Pure and immutable after
// construction, so any number of threads may call Decide; a reload builds a new Engine.
#ifndef SCOPEDFS_POLICY_ENGINE_H_
#define SCOPEDFS_POLICY_ENGINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "media/content_facts.h"
#include "policy/app_registry.h"
#include "policy/config.h"
#include "policy/rule_set.h"
#include "policy/storage_path.h"
#include "proto/policy.pb.h"

namespace scopedfs::policy {

struct Request {
  uint32_t uid = 0;
  // Caller's SELinux domain as resolved by CallerDomainResolver; empty = the app's configured one.
  absl::string_view selinux_domain;
  Op op = OP_UNSPECIFIED;
  // Relative to the storage root, e.g. "DCIM/Camera/a.jpg"; "" is the root.
  absl::string_view path;
  NodeType node_type = NODE_TYPE_FILE;
  // Null: content unknown, treated as non-media that may not be inspected.
  const media::ContentFacts* content = nullptr;
  // uid recorded as the file's creator; nullopt if none is recorded.
  std::optional<uint32_t> owner_uid;
  // User whose storage is mounted (the daemon's --user_id).
  uint32_t storage_user_id = 0;
};

struct Decision {
  Outcome outcome = OUTCOME_HIDE;
  Errno error = ERRNO_UNSPECIFIED;  // meaningful for DENY
  EnumMask redact = 0;              // Bit(Redaction), for ALLOW_REDACTED
  // ALLOW_REDACTED of content whose location is uncertain under UNCERTAIN_LOCATION_REDACT_ALL:
  // the scan's fallback ranges are filled too.
  bool redact_fallback = false;
  int rule_index = -1;          // -1: default action or invalid request
  absl::string_view rule_name;  // points into the Engine; valid while it lives
  absl::string_view reason;

  bool Permits() const { return outcome == OUTCOME_ALLOW || outcome == OUTCOME_ALLOW_REDACTED; }
};

// What a LOOKUP of a file needs to know, from one preparation of the request.
struct LookupDecisions {
  Decision lookup;  // whether the caller sees the name
  // Only when the lookup permits, for a file: what a read gets, and what it would get if the
  // file carried location (equal to `read` unless `read` is ALLOW and `located` was given).
  Decision read;
  Decision read_if_located;
  // Whether the LOOKUP answers with the name: `lookup` permits, or the policy's visibility is
  // LISTING and the name is found by every caller of the storage's user (FoundByEveryCaller).
  // When it is found although `lookup` does not permit, `read` and `read_if_located` are still
  // given for a file (the view its inode must be).
  bool found = false;
};

class Engine {
 public:
  // The config must come from LoadConfig/ParseConfig (validated).
  static absl::StatusOr<std::unique_ptr<const Engine>> Create(const LoadedConfig& config);

  // Never fails: invalid paths and unknown callers get a fail-closed decision.
  Decision Decide(const Request& request) const;
  // A LOOKUP's decisions (`request.op` is ignored): the path is classified and the caller
  // identified once, then the rules are walked for each question. `located`: the content as it
  // would be with location present (null: not asked). Each equals the matching Decide.
  LookupDecisions DecideLookup(const Request& request, const media::ContentFacts* located) const;

  // Unique to this engine among every engine the process made: two requests judged by engines
  // of one serial are judged by the same rules (a reload makes a new engine).
  uint64_t serial() const { return serial_; }
  const AppRegistry& apps() const { return apps_; }
  const StorageLayout& layout() const { return layout_; }
  const std::vector<CompiledRule>& rules() const { return rules_; }
  // "file:line:col" of rule i.
  const std::string& rule_location(size_t i) const { return rule_locations_[i]; }
  const PermissionIndex& permissions() const { return permissions_; }
  const std::string& policy_name() const { return policy_name_; }
  bool location_guard() const { return location_guard_; }
  // The kinds of location range a redacted read fills (bits 1 << Redaction), whichever rule made
  // it redacted: every kind, less REDACTION_IPTC_PLACE and REDACTION_XMP_PLACE under
  // redact_place_names FALSE. Every Decision.redact of an ALLOW_REDACTED decision is this.
  EnumMask redaction_kinds() const { return redaction_kinds_; }
  // True when no decision can depend on who asks: no rule looks at the caller and there is no
  // location guard. Every caller then sees the same names, views and attributes, so the kernel
  // may cache them for everyone (the permissive policy is such a policy; Android's is not).
  bool caller_independent() const { return caller_independent_; }
  // True when no decision can depend on where an object is or what it is named: no rule looks at
  // the path, the layout or the content, and there is no location guard. A rename or link then
  // cannot change what anyone may read of the object (the permissive policy is such a policy).
  bool place_independent() const { return place_independent_; }
  // True when some rule matches whole paths (PathMatch.glob), so a decision can depend on an
  // object's own name; false when the path counts only through its classification (depth, top
  // directory, area), which every entry of one directory shares below the area roots.
  bool matches_names() const { return matches_names_; }
  // What decisions can look at, so the daemon reads no more of a file than the policy uses: the
  // recorded creator (an `owner` condition, or the location guard, which exempts owners), and the
  // content (a media class or location condition, an ALLOW_REDACTED action, or the guard).
  bool reads_owner() const { return reads_owner_; }
  bool reads_content() const { return reads_content_; }
  // Whether any decision can be ALLOW_REDACTED; if not, every caller reads every file raw.
  bool may_redact() const { return may_redact_; }
  // Proves, from the rules alone, that every caller of the mounted storage's user may look up the
  // directory at `path` (relative to the storage root): each rule that could decide it for some
  // caller allows it. Such a name may be cached by the kernel for everyone. Callers of other users
  // are outside the proof: the daemon refuses them at every request on a node instead. False
  // whenever it cannot tell (a rule on ownership, permissions or whose area the path is in).
  bool VisibleToEveryCaller(absl::string_view path) const;
  // A LOOKUP's refusal proved from the caller and the path alone: the HIDE that every object at
  // `request.path` (any node type, content and creator) gets from the rules, and that no
  // visibility finds anyway. nullopt when the answer could depend on what is there, or on
  // whether anything is. The daemon answers such a name without touching the lower tree, so a
  // name hidden this way costs what a missing one does (docs/security.md, timing). Only the
  // request's caller fields (uid, storage_user_id, selinux_domain) and path are read.
  std::optional<Decision> HiddenWhateverIsThere(const Request& request) const;
  // Whether the decision of `request` about a file can depend on the file's content (its media
  // class or location), its creator and every other input being as the request says: some rule
  // with a content condition could match before the first rule that matches whatever the
  // content, or the decision is ALLOW_REDACTED (uncertain_location looks at the content), or the
  // location guard applies to it. When false, Decide gives the same answer for any content, so
  // the daemon needs neither the file's head nor its location scan to judge it (an owner's
  // write, SETATTR or access check under android.textproto). `request.content` is not read.
  bool DependsOnContent(const Request& request) const;
  // Whether a LOOKUP's decision can depend on location (a LOOKUP rule with a has_location
  // condition): if not, a lookup needs no location scan to know whether the name is found.
  bool lookup_reads_location() const { return lookup_reads_location_; }
  // ANDROID unless the policy asks for POSIX (never UNSPECIFIED).
  Semantics semantics() const { return semantics_; }
  // STRICT unless the policy asks for LISTING (never UNSPECIFIED).
  Visibility visibility() const { return visibility_; }
  // Under LISTING, whether a LOOKUP of `path` finds the name for every caller of the storage's
  // user whatever the rules say: true for a valid path outside separate-mount areas (and not the
  // root of one). Callers of other users are judged by the rules all the same. Always false
  // under STRICT. Under LISTING, Decide turns a HIDE for any other operation on such a path
  // into DENY (EACCES) for such callers: the name is known, so "absent" would be a lie.
  bool FoundByEveryCaller(absl::string_view path) const;
  // Proves, from the rules alone, that every subdirectory the directory `path` may hold is shown
  // (LOOKUP permitted) to every caller of the storage's user, whatever its name: the directory's
  // link count then counts nothing hidden from any of them. False whenever it cannot tell (rules
  // that match names, areas whose roots it holds, a rule on the caller that hides).
  bool SubdirectoriesVisibleToEveryCaller(absl::string_view path) const;

 private:
  Engine(PermissionIndex permissions, AppRegistry apps, StorageLayout layout)
      : permissions_(std::move(permissions)), apps_(std::move(apps)), layout_(std::move(layout)) {}

  struct Prepared;
  void Prepare(const Request& request, Prepared* p) const;
  Decision Evaluate(const MatchInput& in) const;
  // Applies uncertain_location to an ALLOW_REDACTED decision about uncertain content.
  Decision Uncertain(Decision decision, const media::ContentFacts& content) const;
  // Applies Policy.location_guard to a decision about a file (see policy.proto): every redacted
  // read fills every location kind; reads by callers not entitled become redacted, their writes
  // are refused.
  Decision GuardLocation(Decision decision, const MatchInput& in) const;
  bool EntitledToLocation(const MatchInput& in) const;
  // LISTING: whether the prepared request's name is found by its caller whatever the rules say.
  bool FoundRegardless(const Prepared& p) const;
  // LISTING: a HIDE of a known name (FoundRegardless) becomes DENY (EACCES) for every operation
  // but LOOKUP.
  Decision Listed(Decision decision, const Prepared& p) const;

  PermissionIndex permissions_;
  AppRegistry apps_;
  StorageLayout layout_;
  std::vector<CompiledRule> rules_;
  // rules_[i] without its conditions on the object (node type, media classes, location, owner),
  // and whether it had any: what HiddenWhateverIsThere walks.
  std::vector<CompiledRule> object_free_rules_;
  std::vector<bool> object_dependent_;
  // rules_[i] without its content conditions (media classes, location), and whether it had any:
  // what DependsOnContent walks.
  std::vector<CompiledRule> content_free_rules_;
  std::vector<bool> content_dependent_;
  std::vector<std::string> rule_locations_;
  CompiledAction default_action_;
  std::string policy_name_;
  UncertainLocation uncertain_location_ = UNCERTAIN_LOCATION_DENY;
  bool location_guard_ = false;
  EnumMask redaction_kinds_ = 0;
  bool caller_independent_ = false;
  bool place_independent_ = false;
  bool matches_names_ = true;
  bool reads_owner_ = true;
  bool reads_content_ = true;
  bool may_redact_ = true;
  uint64_t serial_ = 0;
  bool lookup_reads_location_ = true;
  Semantics semantics_ = SEMANTICS_ANDROID;
  Visibility visibility_ = VISIBILITY_STRICT;
  std::vector<CompiledRule> location_entitled_;  // app sections of LocationGuard.entitled
};

absl::string_view OutcomeName(Outcome outcome);  // "ALLOW", "ALLOW_REDACTED", "DENY", "HIDE"
// The errno a refused request answers with: ENOENT for HIDE, the decision's error for DENY
// (EACCES when it names none).
int ErrnoOf(const Decision& d);

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_ENGINE_H_
