// Tests for policy rules: CompileRule's problem reports (field paths, all problems of a rule),
// CompiledRule::Matches condition by condition, Covers (unreachable rules) and WhyNeverMatches.
#include "policy/rule_set.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopedfs::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Permission bits follow declaration order: perm.A = 0, perm.B = 1, perm.C = 2.
constexpr char kPolicyText[] = R"pb(
  name: "test"
  permission { name: "perm.A" }
  permission { name: "perm.B" }
  permission { name: "perm.C" }
  layout {
    top_level_dir: "DCIM"
    top_level_dir: "Download"
    top_level_dir: "Android"
    area { name: "app-data" pattern: "Android/data/{package}" }
    area { name: "app-obb" pattern: "Android/obb/{package}" }
  }
)pb";

constexpr uint32_t kGalleryUid = 10061;  // perm.A, perm.B
constexpr uint32_t kSharedUid = 10070;   // two packages, perm.C
constexpr uint32_t kPlainUid = 10080;    // no permissions
constexpr uint32_t kUnregisteredUid = 10099;

constexpr char kAppsText[] = R"pb(
  app { package: "com.example.gallery" uid: 10061 permission: "perm.A" permission: "perm.B" }
  app { package: "com.example.shared.one" uid: 10070 shared_user: "shared.x" permission: "perm.C" }
  app { package: "com.example.shared.two" uid: 10070 shared_user: "shared.x" }
  app { package: "com.example.plain" uid: 10080 }
)pb";

template <typename M>
M ParseText(absl::string_view text) {
  M message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(std::string(text.data(), text.size()),
                                                            &message))
      << text;
  return message;
}

StorageLayout CompileLayout(const Layout& layout) {
  absl::StatusOr<StorageLayout> compiled = StorageLayout::Compile(layout);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? *std::move(compiled) : StorageLayout();
}

// "app.holds_any[1]" for {{"app"}, {"holds_any", 1}}.
std::string StepsToString(const std::vector<FieldStep>& steps) {
  std::string out;
  for (const FieldStep& step : steps) {
    if (!out.empty()) out += '.';
    absl::StrAppend(&out, step.field);
    if (step.index >= 0) absl::StrAppend(&out, "[", step.index, "]");
  }
  return out;
}

// A valid rule (name and action set) with the conditions in `body`.
std::string R(absl::string_view body) {
  return absl::StrCat("name: \"r\" action { outcome: OUTCOME_ALLOW } ", body);
}

media::ContentFacts Facts(MediaClass media_class, media::LocationPresence location) {
  media::ContentFacts facts;
  facts.content_known = true;
  facts.media_class = media_class;
  facts.location = location;
  return facts;
}

media::ContentFacts Image(media::LocationPresence location) {
  return Facts(MEDIA_CLASS_IMAGE, location);
}
media::ContentFacts Video(media::LocationPresence location) {
  return Facts(MEDIA_CLASS_VIDEO, location);
}

// One request as the engine would present it; defaults to the gallery reading a plain file.
struct Request {
  uint32_t uid = kGalleryUid;
  Op op = OP_READ;
  std::string path = "DCIM/a.txt";
  NodeType node_type = NODE_TYPE_FILE;
  media::ContentFacts content;
  std::string selinux_domain = "untrusted_app";
  bool caller_owns = false;
  bool cross_user = false;

  Request& Uid(uint32_t v) {
    uid = v;
    return *this;
  }
  Request& WithOp(Op v) {
    op = v;
    return *this;
  }
  Request& Path(std::string v) {
    path = std::move(v);
    return *this;
  }
  Request& Dir() {
    node_type = NODE_TYPE_DIRECTORY;
    return *this;
  }
  Request& Content(media::ContentFacts v) {
    content = v;
    return *this;
  }
  Request& Domain(std::string v) {
    selinux_domain = std::move(v);
    return *this;
  }
  Request& Owns() {
    caller_owns = true;
    return *this;
  }
  Request& CrossUser() {
    cross_user = true;
    return *this;
  }
};

struct Problems {
  absl::Status status;
  std::vector<std::string> where;  // StepsToString of each report, in order
  std::vector<std::string> messages;
};

class RuleSetTest : public testing::Test {
 protected:
  RuleSetTest()
      : policy_(ParseText<Policy>(kPolicyText)),
        permissions_(policy_),
        layout_(CompileLayout(policy_.layout())),
        registry_(
            AppRegistry::Build(ParseText<scopedfs::AppRegistry>(kAppsText), {}, permissions_)) {}

  // Compiles `text` as a Rule, failing the test if it has any problem.
  CompiledRule Compile(absl::string_view text) {
    absl::StatusOr<CompiledRule> compiled =
        CompileRule(ParseText<Rule>(text), permissions_, layout_);
    EXPECT_TRUE(compiled.ok()) << compiled.status() << "\n" << text;
    return compiled.ok() ? *std::move(compiled) : CompiledRule();
  }

  Problems CompileProblems(absl::string_view text) {
    Problems p;
    ProblemFn report = [&p](std::vector<FieldStep> steps, std::string message) {
      p.where.push_back(StepsToString(steps));
      p.messages.push_back(std::move(message));
    };
    p.status = CompileRule(ParseText<Rule>(text), permissions_, layout_, report).status();
    return p;
  }

  // Expects exactly one problem, at `where`, whose message contains `message`.
  void ExpectOneProblem(absl::string_view text, const std::string& where,
                        const std::string& message) {
    Problems p = CompileProblems(text);
    EXPECT_EQ(p.status.code(), absl::StatusCode::kInvalidArgument) << p.status;
    EXPECT_THAT(p.where, ElementsAre(where)) << text;
    EXPECT_THAT(p.messages, ElementsAre(HasSubstr(message))) << text;
  }

  bool Matches(const CompiledRule& rule, const Request& r) {
    Caller caller = registry_.Identify(r.uid);
    absl::StatusOr<PathInfo> path = layout_.Classify(r.path);
    EXPECT_TRUE(path.ok()) << path.status();
    if (!path.ok()) return false;
    MatchInput in;
    in.caller = &caller;
    in.selinux_domain = r.selinux_domain;
    in.op = r.op;
    in.path = &*path;
    in.node_type = r.node_type;
    in.content = &r.content;
    in.caller_owns = r.caller_owns;
    in.cross_user = r.cross_user;
    return rule.Matches(in);
  }

  bool RuleMatches(absl::string_view body, const Request& r) {
    return Matches(Compile(R(body)), r);
  }

  bool CoversText(absl::string_view earlier, absl::string_view later) {
    return Covers(Compile(R(earlier)), Compile(R(later)));
  }

  std::string Why(absl::string_view body) { return WhyNeverMatches(Compile(R(body)), layout_); }

  Policy policy_;
  PermissionIndex permissions_;
  StorageLayout layout_;
  AppRegistry registry_;
};

// ---- CompileRule ----

using CompileRuleTest = RuleSetTest;

TEST_F(CompileRuleTest, CompilesAValidRule) {
  Problems p = CompileProblems(R(R"pb(
    op: OP_READ
    app {
      holds_all: "perm.B"
      uid { first: 10061 }
    }
    path { area: AREA_RELATION_OWN area_name: "app-obb" glob: "Android/**" }
    content { media_class: MEDIA_CLASS_IMAGE }
  )pb"));
  EXPECT_TRUE(p.status.ok()) << p.status;
  EXPECT_THAT(p.where, IsEmpty());
}

TEST_F(CompileRuleTest, TranslatesFieldsIntoMasksAndBits) {
  CompiledRule c = Compile(R(R"pb(
    op: OP_READ
    op: OP_WRITE
    app {
      holds_all: "perm.B"
      holds_none: "perm.C"
      uid { first: 10061 }
    }
    path { area: AREA_RELATION_OWN area_name: "app-obb" }
    content { media_class: MEDIA_CLASS_IMAGE }
  )pb"));
  EXPECT_EQ(c.ops, Bit(OP_READ) | Bit(OP_WRITE));
  EXPECT_EQ(c.holds_all, PermissionSet().set(1));
  EXPECT_EQ(c.holds_none, PermissionSet().set(2));
  ASSERT_EQ(c.uids.size(), 1u);
  EXPECT_EQ(c.uids[0].first, 10061u);
  EXPECT_EQ(c.uids[0].last, 10061u);  // last 0 means "same as first"
  EXPECT_EQ(c.area_mask, uint64_t{1} << 1);
  EXPECT_EQ(c.media_classes, Bit(MEDIA_CLASS_IMAGE));
  EXPECT_EQ(c.action.outcome, OUTCOME_ALLOW);
}

TEST_F(CompileRuleTest, AreaMaskIsAllAreasWithoutAreaName) {
  CompiledRule c = Compile(R("path { area: AREA_RELATION_OWN }"));
  EXPECT_EQ(c.area_mask, ~uint64_t{0});
}

TEST_F(CompileRuleTest, UndeclaredHoldsAnyPermission) {
  ExpectOneProblem(R(R"pb(app { holds_any: "perm.A" holds_any: "perm.Typo" })pb"),
                   "app.holds_any[1]", "perm.Typo");
}

TEST_F(CompileRuleTest, UndeclaredHoldsAllPermission) {
  ExpectOneProblem(R(R"pb(app { holds_all: "perm.typo" })pb"), "app.holds_all[0]", "perm.typo");
}

TEST_F(CompileRuleTest, UndeclaredHoldsNonePermission) {
  ExpectOneProblem(R(R"pb(app { holds_none: "perm.B" holds_none: "PERM.A" })pb"),
                   "app.holds_none[1]", "PERM.A");
}

TEST_F(CompileRuleTest, ReversedUidRange) {
  ExpectOneProblem(R(R"pb(app {
                            uid { first: 10000 last: 19999 }
                            uid { first: 20000 last: 10 }
                          })pb"),
                   "app.uid[1]", "reversed");
}

TEST_F(CompileRuleTest, ReversedAppIdRange) {
  ExpectOneProblem(R(R"pb(app { app_id { first: 10061 last: 10000 } })pb"), "app.app_id[0]",
                   "reversed");
}

TEST_F(CompileRuleTest, AppIdOfOneHundredThousandIsRejected) {
  ExpectOneProblem(R(R"pb(app {
                            app_id { first: 1000 }
                            app_id { first: 100000 }
                          })pb"),
                   "app.app_id[1]", "100000");
}

TEST_F(CompileRuleTest, AppIdRangeEndingPastTheUserRangeIsRejected) {
  ExpectOneProblem(R(R"pb(app { app_id { first: 99999 last: 100000 } })pb"), "app.app_id[0]",
                   "100000");
}

TEST_F(CompileRuleTest, AppIdRangeUpToTheLastAppIdIsAccepted) {
  Problems p = CompileProblems(R(R"pb(app { app_id { first: 0 last: 99999 } })pb"));
  EXPECT_TRUE(p.status.ok()) << p.status;
}

TEST_F(CompileRuleTest, OpUnspecified) {
  ExpectOneProblem(R("op: OP_READ op: OP_UNSPECIFIED"), "op[1]", "OP_UNSPECIFIED");
}

TEST_F(CompileRuleTest, MediaClassUnspecified) {
  ExpectOneProblem(R("content { media_class: MEDIA_CLASS_UNSPECIFIED }"), "content.media_class[0]",
                   "MEDIA_CLASS_UNSPECIFIED");
}

TEST_F(CompileRuleTest, BadGlob) {
  ExpectOneProblem(R(R"pb(path { glob: "DCIM/*" glob: "a//b" })pb"), "path.glob[1]", "a//b");
}

TEST_F(CompileRuleTest, UnknownAreaName) {
  ExpectOneProblem(
      R(R"pb(path { area: AREA_RELATION_OWN area_name: "app-data" area_name: "app-cache" })pb"),
      "path.area_name[1]", "app-cache");
}

TEST_F(CompileRuleTest, AreaNameWithoutArea) {
  ExpectOneProblem(R(R"pb(path { area_name: "app-data" })pb"), "path.area_name[0]",
                   "area (OWN/OTHER/NONE) is not");
}

TEST_F(CompileRuleTest, ActionWithoutOutcome) {
  ExpectOneProblem(R"pb(name: "r"
                        action { error: ERRNO_UNSPECIFIED })pb",
                   "action.outcome", "needs an outcome");
}

TEST_F(CompileRuleTest, MissingActionNeedsAnOutcome) {
  ExpectOneProblem(R"pb(name: "r" op: OP_READ)pb", "action.outcome", "needs an outcome");
}

TEST_F(CompileRuleTest, AllowRedactedWithoutRedact) {
  ExpectOneProblem(R"pb(name: "r"
                        action { outcome: OUTCOME_ALLOW_REDACTED })pb",
                   "action.outcome", "at least one redact");
}

TEST_F(CompileRuleTest, AllowRedactedWithRedactIsAccepted) {
  CompiledRule c = Compile(R"pb(
    name: "r"
    action { outcome: OUTCOME_ALLOW_REDACTED redact: REDACTION_EXIF_GPS redact: REDACTION_XMP_GPS }
  )pb");
  EXPECT_EQ(c.action.redact, Bit(REDACTION_EXIF_GPS) | Bit(REDACTION_XMP_GPS));
}

TEST_F(CompileRuleTest, RedactWithAllow) {
  ExpectOneProblem(R"pb(name: "r"
                        action { outcome: OUTCOME_ALLOW redact: REDACTION_EXIF_GPS })pb",
                   "action.redact[0]", "only applies to OUTCOME_ALLOW_REDACTED");
}

TEST_F(CompileRuleTest, RedactionUnspecified) {
  ExpectOneProblem(
      R"pb(name: "r"
           action { outcome: OUTCOME_ALLOW_REDACTED redact: REDACTION_UNSPECIFIED })pb",
      "action.redact[0]", "REDACTION_UNSPECIFIED");
}

TEST_F(CompileRuleTest, ErrorWithAllow) {
  ExpectOneProblem(R"pb(name: "r"
                        action { outcome: OUTCOME_ALLOW error: ERRNO_EPERM })pb",
                   "action.error", "ERRNO_EPERM");
}

TEST_F(CompileRuleTest, ErrorWithDenyIsAccepted) {
  CompiledRule c = Compile(R"pb(name: "r"
                                action { outcome: OUTCOME_DENY error: ERRNO_EROFS })pb");
  EXPECT_EQ(c.action.outcome, OUTCOME_DENY);
  EXPECT_EQ(c.action.error, ERRNO_EROFS);
}

TEST_F(CompileRuleTest, EmptyNameIsReportedAtTheRule) {
  ExpectOneProblem(R"pb(action { outcome: OUTCOME_ALLOW })pb", "", "needs a name");
}

TEST_F(CompileRuleTest, TopDirWithSlash) {
  ExpectOneProblem(R(R"pb(path { top_dir: "DCIM" top_dir: "DCIM/Camera" })pb"), "path.top_dir[1]",
                   "single path segment");
}

TEST_F(CompileRuleTest, TopDirDotSegmentsAndEmpty) {
  Problems p = CompileProblems(R(R"pb(path { top_dir: "." top_dir: ".." top_dir: "" })pb"));
  EXPECT_EQ(p.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.where, ElementsAre("path.top_dir[0]", "path.top_dir[1]", "path.top_dir[2]"));
}

TEST_F(CompileRuleTest, EmptyPackage) {
  ExpectOneProblem(R(R"pb(app { package: "" })pb"), "app.package[0]", "empty package");
}

TEST_F(CompileRuleTest, EmptySelinuxDomain) {
  ExpectOneProblem(R(R"pb(app { selinux_domain: "untrusted_app" selinux_domain: "" })pb"),
                   "app.selinux_domain[1]", "SELinux");
}

// Proto3 enums are open: text format accepts a number the schema does not name.
TEST_F(CompileRuleTest, UnknownOpNumber) { ExpectOneProblem(R("op: 42"), "op[0]", "42"); }

TEST_F(CompileRuleTest, UnknownMediaClassNumber) {
  ExpectOneProblem(R("content { media_class: 40 }"), "content.media_class[0]", "40");
}

TEST_F(CompileRuleTest, UnknownRedactionNumber) {
  ExpectOneProblem(R"pb(name: "r"
                        action { outcome: OUTCOME_ALLOW_REDACTED redact: 33 })pb",
                   "action.redact[0]", "33");
}

TEST_F(CompileRuleTest, UnknownOutcomeNumber) {
  ExpectOneProblem(R"pb(name: "r"
                        action { outcome: 9 })pb",
                   "action.outcome", "9");
}

TEST_F(CompileRuleTest, UnknownScalarEnumNumber) {
  ExpectOneProblem(R("app { cross_user: 5 }"), "app.cross_user", "5");
}

TEST_F(CompileRuleTest, ReportsEveryProblemOfOneRule) {
  Problems p = CompileProblems(R"pb(
    op: OP_UNSPECIFIED
    app {
      uid { first: 5 last: 1 }
      holds_all: "perm.nope"
      holds_any: "perm.A"
      holds_any: "perm.gone"
    }
    path { top_dir: "a/b" glob: "**x" area_name: "app-cache" }
    content { media_class: MEDIA_CLASS_UNSPECIFIED }
    action { outcome: OUTCOME_ALLOW error: ERRNO_EPERM }
  )pb");
  EXPECT_EQ(p.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.where,
              ElementsAre("", "op[0]", "app.uid[0]", "app.holds_all[0]", "app.holds_any[1]",
                          "path.top_dir[0]", "path.glob[0]", "path.area_name[0]",
                          "path.area_name[0]", "content.media_class[0]", "action.error"));
}

TEST_F(CompileRuleTest, StatusNamesTheRuleAndItsFirstProblem) {
  Problems p = CompileProblems(R"pb(
    name: "photos"
    app { holds_all: "perm.first" holds_none: "perm.second" }
    action { outcome: OUTCOME_ALLOW }
  )pb");
  EXPECT_EQ(p.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(p.status.message()), HasSubstr("photos"));
  EXPECT_THAT(std::string(p.status.message()), HasSubstr("perm.first"));
  EXPECT_THAT(std::string(p.status.message()), Not(HasSubstr("perm.second")));
}

TEST_F(CompileRuleTest, FailsWithoutAReporter) {
  absl::StatusOr<CompiledRule> c =
      CompileRule(ParseText<Rule>(R("op: OP_UNSPECIFIED")), permissions_, layout_);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CompileActionTest, UnsetDefaultActionIsHide) {
  absl::StatusOr<CompiledAction> a = CompileAction(Action(), /*outcome_required=*/false);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->outcome, OUTCOME_HIDE);
}

// ---- Matches ----

using MatchesTest = RuleSetTest;

TEST_F(MatchesTest, EmptyRuleMatchesEverything) {
  CompiledRule any = Compile(R(""));
  EXPECT_TRUE(Matches(any, Request()));
  EXPECT_TRUE(Matches(any, Request().Uid(kUnregisteredUid).Path("").Dir().WithOp(OP_RMDIR)));
}

TEST_F(MatchesTest, Ops) {
  CompiledRule rule = Compile(R("op: OP_READ op: OP_WRITE"));
  EXPECT_TRUE(Matches(rule, Request().WithOp(OP_WRITE)));
  EXPECT_FALSE(Matches(rule, Request().WithOp(OP_LOOKUP)));
}

TEST_F(MatchesTest, Package) {
  CompiledRule rule = Compile(R(R"pb(app { package: "com.example.gallery" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kGalleryUid)));
  EXPECT_FALSE(Matches(rule, Request().Uid(kPlainUid)));
}

TEST_F(MatchesTest, PackageIsCaseInsensitive) {
  EXPECT_TRUE(
      RuleMatches(R"pb(app { package: "COM.Example.Gallery" })pb", Request().Uid(kGalleryUid)));
}

TEST_F(MatchesTest, PackageOfASharedUid) {
  CompiledRule rule = Compile(R(R"pb(app { package: "com.example.shared.two" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kSharedUid)));
  EXPECT_FALSE(Matches(rule, Request().Uid(kGalleryUid)));
}

TEST_F(MatchesTest, PackageNeverMatchesAnUnregisteredUid) {
  EXPECT_FALSE(RuleMatches(R"pb(app { package: "com.example.gallery" })pb",
                           Request().Uid(kUnregisteredUid)));
}

TEST_F(MatchesTest, UidRange) {
  CompiledRule rule = Compile(R("app { uid { first: 10000 last: 10065 } }"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kGalleryUid)));
  EXPECT_FALSE(Matches(rule, Request().Uid(kPlainUid)));
}

TEST_F(MatchesTest, UidRangeWithoutLastIsOneUid) {
  CompiledRule rule = Compile(R("app { uid { first: 10061 } }"));
  EXPECT_TRUE(Matches(rule, Request().Uid(10061)));
  EXPECT_FALSE(Matches(rule, Request().Uid(10062)));
}

TEST_F(MatchesTest, UidRangeIsTheFullUidNotTheAppId) {
  EXPECT_FALSE(RuleMatches("app { uid { first: 10061 } }", Request().Uid(1010061)));
}

TEST_F(MatchesTest, AppIdRange) {
  CompiledRule rule = Compile(R("app { app_id { first: 10000 last: 10065 } }"));
  EXPECT_TRUE(Matches(rule, Request().Uid(1010061)));
  EXPECT_FALSE(Matches(rule, Request().Uid(1010080)));
}

TEST_F(MatchesTest, UserId) {
  CompiledRule rule = Compile(R("app { user_id: 10 user_id: 11 }"));
  EXPECT_TRUE(Matches(rule, Request().Uid(1010061)));
  EXPECT_FALSE(Matches(rule, Request().Uid(10061)));
}

TEST_F(MatchesTest, HoldsAll) {
  CompiledRule rule = Compile(R(R"pb(app { holds_all: "perm.A" holds_all: "perm.B" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kGalleryUid)));
  EXPECT_FALSE(Matches(rule, Request().Uid(kSharedUid)));
}

TEST_F(MatchesTest, HoldsAllNeedsEveryPermission) {
  EXPECT_FALSE(RuleMatches(R"pb(app { holds_all: "perm.A" holds_all: "perm.C" })pb",
                           Request().Uid(kGalleryUid)));
}

TEST_F(MatchesTest, HoldsAny) {
  CompiledRule rule = Compile(R(R"pb(app { holds_any: "perm.B" holds_any: "perm.C" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kSharedUid)));
  EXPECT_FALSE(Matches(rule, Request().Uid(kPlainUid)));
}

TEST_F(MatchesTest, HoldsAnyNeverMatchesAnUnregisteredUid) {
  EXPECT_FALSE(RuleMatches(R"pb(app { holds_any: "perm.A" })pb", Request().Uid(kUnregisteredUid)));
}

TEST_F(MatchesTest, HoldsNone) {
  CompiledRule rule = Compile(R(R"pb(app { holds_none: "perm.A" holds_none: "perm.C" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kPlainUid)));
  EXPECT_FALSE(Matches(rule, Request().Uid(kGalleryUid)));
}

TEST_F(MatchesTest, HoldsNoneMatchesAnUnregisteredUid) {
  EXPECT_TRUE(RuleMatches(R"pb(app { holds_none: "perm.A" })pb", Request().Uid(kUnregisteredUid)));
}

TEST_F(MatchesTest, SelinuxDomain) {
  CompiledRule rule = Compile(R(R"pb(app { selinux_domain: "platform_app" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Domain("platform_app")));
  EXPECT_FALSE(Matches(rule, Request().Domain("untrusted_app")));
}

TEST_F(MatchesTest, OwnerCallerOwns) {
  CompiledRule rule = Compile(R("app { owner: OWNERSHIP_CALLER_OWNS }"));
  EXPECT_TRUE(Matches(rule, Request().Owns()));
  EXPECT_FALSE(Matches(rule, Request()));
}

TEST_F(MatchesTest, OwnerCallerDoesNotOwn) {
  CompiledRule rule = Compile(R("app { owner: OWNERSHIP_CALLER_DOES_NOT_OWN }"));
  EXPECT_TRUE(Matches(rule, Request()));
  EXPECT_FALSE(Matches(rule, Request().Owns()));
}

TEST_F(MatchesTest, CrossUserTrue) {
  CompiledRule rule = Compile(R("app { cross_user: TRISTATE_TRUE }"));
  EXPECT_TRUE(Matches(rule, Request().CrossUser()));
  EXPECT_FALSE(Matches(rule, Request()));
}

TEST_F(MatchesTest, CrossUserFalse) {
  CompiledRule rule = Compile(R("app { cross_user: TRISTATE_FALSE }"));
  EXPECT_TRUE(Matches(rule, Request()));
  EXPECT_FALSE(Matches(rule, Request().CrossUser()));
}

TEST_F(MatchesTest, RegisteredTrue) {
  CompiledRule rule = Compile(R("app { registered: TRISTATE_TRUE }"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kPlainUid)));
  EXPECT_FALSE(Matches(rule, Request().Uid(kUnregisteredUid)));
}

TEST_F(MatchesTest, RegisteredCountsTheAppIdInOtherUsers) {
  EXPECT_TRUE(RuleMatches("app { registered: TRISTATE_TRUE }", Request().Uid(1010080)));
}

TEST_F(MatchesTest, RegisteredFalse) {
  CompiledRule rule = Compile(R("app { registered: TRISTATE_FALSE }"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kUnregisteredUid)));
  EXPECT_FALSE(Matches(rule, Request().Uid(kPlainUid)));
}

TEST_F(MatchesTest, TopDirIsCaseInsensitive) {
  CompiledRule rule = Compile(R(R"pb(path { top_dir: "dcim" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Path("DCIM/Camera/a.jpg")));
  EXPECT_FALSE(Matches(rule, Request().Path("Download/a.jpg")));
}

TEST_F(MatchesTest, TopDirMatchesTheTopLevelDirectoryItself) {
  EXPECT_TRUE(RuleMatches(R"pb(path { top_dir: "DCIM" })pb", Request().Path("DCIM").Dir()));
}

TEST_F(MatchesTest, TopDirNeverMatchesTheRoot) {
  EXPECT_FALSE(RuleMatches(R"pb(path { top_dir: "DCIM" })pb", Request().Path("").Dir()));
}

TEST_F(MatchesTest, GlobIsCaseInsensitive) {
  CompiledRule rule = Compile(R(R"pb(path { glob: "DCIM/**/*.JPG" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Path("dcim/Camera/a.jpg")));
  EXPECT_FALSE(Matches(rule, Request().Path("DCIM/a.png")));
}

TEST_F(MatchesTest, GlobStarStarMatchesAnyPathButTheRoot) {
  CompiledRule rule = Compile(R(R"pb(path { glob: "**" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Path("x")));
  EXPECT_FALSE(Matches(rule, Request().Path("").Dir()));
}

TEST_F(MatchesTest, DepthRoot) {
  CompiledRule rule = Compile(R("path { depth: DEPTH_ROOT }"));
  EXPECT_TRUE(Matches(rule, Request().Path("").Dir()));
  EXPECT_FALSE(Matches(rule, Request().Path("DCIM").Dir()));
}

TEST_F(MatchesTest, DepthTop) {
  CompiledRule rule = Compile(R("path { depth: DEPTH_TOP }"));
  EXPECT_TRUE(Matches(rule, Request().Path("notes.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("DCIM/notes.txt")));
}

TEST_F(MatchesTest, DepthNested) {
  CompiledRule rule = Compile(R("path { depth: DEPTH_NESTED }"));
  EXPECT_TRUE(Matches(rule, Request().Path("DCIM/a/b.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("DCIM").Dir()));
}

TEST_F(MatchesTest, StandardTopDirTrue) {
  CompiledRule rule = Compile(R("path { standard_top_dir: TRISTATE_TRUE }"));
  EXPECT_TRUE(Matches(rule, Request().Path("download/x.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("Books2/x.txt")));
}

TEST_F(MatchesTest, StandardTopDirFalse) {
  CompiledRule rule = Compile(R("path { standard_top_dir: TRISTATE_FALSE }"));
  EXPECT_TRUE(Matches(rule, Request().Path("Books2/x.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("DCIM/x.txt")));
}

TEST_F(MatchesTest, StandardTopDirIsUnmatchedAtTheRoot) {
  EXPECT_FALSE(RuleMatches("path { standard_top_dir: TRISTATE_TRUE }", Request().Path("").Dir()));
  EXPECT_FALSE(RuleMatches("path { standard_top_dir: TRISTATE_FALSE }", Request().Path("").Dir()));
}

TEST_F(MatchesTest, AreaOwn) {
  CompiledRule rule = Compile(R("path { area: AREA_RELATION_OWN }"));
  EXPECT_TRUE(Matches(rule, Request().Path("Android/data/com.example.gallery/files/a.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("Android/data/com.example.plain/files/a.txt")));
}

TEST_F(MatchesTest, AreaOwnIncludesTheAreaRoot) {
  CompiledRule rule = Compile(R("path { area: AREA_RELATION_OWN }"));
  EXPECT_TRUE(Matches(rule, Request().Path("Android/obb/com.example.gallery").Dir()));
  EXPECT_FALSE(Matches(rule, Request().Path("Android/obb").Dir()));
}

TEST_F(MatchesTest, AreaOwnIsCaseInsensitive) {
  EXPECT_TRUE(RuleMatches("path { area: AREA_RELATION_OWN }",
                          Request().Path("android/DATA/Com.Example.Gallery/a.txt")));
}

TEST_F(MatchesTest, AreaOwnCountsEveryPackageOfASharedUid) {
  EXPECT_TRUE(RuleMatches("path { area: AREA_RELATION_OWN }",
                          Request().Uid(kSharedUid).Path("Android/data/com.example.shared.one/a")));
}

TEST_F(MatchesTest, AreaOwnWithAreaName) {
  CompiledRule rule = Compile(R(R"pb(path { area: AREA_RELATION_OWN area_name: "app-obb" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Path("Android/obb/com.example.gallery/main.obb")));
  EXPECT_FALSE(Matches(rule, Request().Path("Android/data/com.example.gallery/a.txt")));
}

TEST_F(MatchesTest, AreaOther) {
  CompiledRule rule = Compile(R("path { area: AREA_RELATION_OTHER }"));
  EXPECT_TRUE(Matches(rule, Request().Path("Android/data/com.example.plain/a.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("Android/data/com.example.gallery/a.txt")));
}

TEST_F(MatchesTest, AreaOtherIsNotOutsideAreas) {
  EXPECT_FALSE(RuleMatches("path { area: AREA_RELATION_OTHER }", Request().Path("DCIM/a.txt")));
}

TEST_F(MatchesTest, AreaOtherForAnUnregisteredCallerIsEveryArea) {
  EXPECT_TRUE(RuleMatches("path { area: AREA_RELATION_OTHER }",
                          Request().Uid(kUnregisteredUid).Path("Android/data/com.x/a.txt")));
}

TEST_F(MatchesTest, AreaOtherWithAreaName) {
  CompiledRule rule = Compile(R(R"pb(path { area: AREA_RELATION_OTHER area_name: "app-data" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Path("Android/data/com.example.plain/a.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("Android/obb/com.example.plain/a.obb")));
}

TEST_F(MatchesTest, AreaNone) {
  CompiledRule rule = Compile(R("path { area: AREA_RELATION_NONE }"));
  EXPECT_TRUE(Matches(rule, Request().Path("Android/media/a.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("Android/obb/com.example.plain/a.obb")));
}

TEST_F(MatchesTest, AreaNoneWithAreaName) {
  CompiledRule rule = Compile(R(R"pb(path { area: AREA_RELATION_NONE area_name: "app-obb" })pb"));
  EXPECT_TRUE(Matches(rule, Request().Path("Android/data/com.example.plain/a.txt")));
  EXPECT_FALSE(Matches(rule, Request().Path("Android/obb/com.example.plain/a.obb")));
}

TEST_F(MatchesTest, NodeType) {
  CompiledRule rule = Compile(R("path { node_type: NODE_TYPE_DIRECTORY }"));
  EXPECT_TRUE(Matches(rule, Request().Path("DCIM").Dir()));
  EXPECT_FALSE(Matches(rule, Request().Path("DCIM")));
}

TEST_F(MatchesTest, MediaClass) {
  CompiledRule rule = Compile(R("content { media_class: MEDIA_CLASS_IMAGE }"));
  EXPECT_TRUE(Matches(rule, Request().Content(Image(media::LocationPresence::kUnknown))));
  EXPECT_FALSE(Matches(rule, Request().Content(Video(media::LocationPresence::kUnknown))));
}

TEST_F(MatchesTest, DirectoriesAreMediaClassNone) {
  media::ContentFacts image = Image(media::LocationPresence::kUnknown);
  EXPECT_TRUE(RuleMatches("content { media_class: MEDIA_CLASS_NONE }",
                          Request().Path("DCIM/x.jpg").Dir().Content(image)));
  EXPECT_FALSE(RuleMatches("content { media_class: MEDIA_CLASS_IMAGE }",
                           Request().Path("DCIM/x.jpg").Dir().Content(image)));
}

TEST_F(MatchesTest, HasLocationTrueCountsUnknownAsPresent) {
  CompiledRule rule = Compile(R("content { has_location: TRISTATE_TRUE }"));
  EXPECT_TRUE(Matches(rule, Request().Content(Image(media::LocationPresence::kUnknown))));
  EXPECT_TRUE(Matches(rule, Request().Content(Image(media::LocationPresence::kPresent))));
  EXPECT_FALSE(Matches(rule, Request().Content(Image(media::LocationPresence::kAbsent))));
}

TEST_F(MatchesTest, HasLocationFalse) {
  CompiledRule rule = Compile(R("content { has_location: TRISTATE_FALSE }"));
  EXPECT_TRUE(Matches(rule, Request().Content(Image(media::LocationPresence::kAbsent))));
  EXPECT_FALSE(Matches(rule, Request().Content(Image(media::LocationPresence::kUnknown))));
}

TEST_F(MatchesTest, DirectoriesNeverHaveLocation) {
  media::ContentFacts unknown = Image(media::LocationPresence::kUnknown);
  EXPECT_FALSE(RuleMatches("content { has_location: TRISTATE_TRUE }",
                           Request().Path("DCIM/x.jpg").Dir().Content(unknown)));
  EXPECT_TRUE(RuleMatches("content { has_location: TRISTATE_FALSE }",
                          Request().Path("DCIM/x.jpg").Dir().Content(unknown)));
}

TEST_F(MatchesTest, EveryConditionMustHold) {
  CompiledRule rule = Compile(R(R"pb(
    op: OP_READ
    app { holds_any: "perm.A" }
    path { top_dir: "DCIM" }
  )pb"));
  EXPECT_TRUE(Matches(rule, Request().Uid(kGalleryUid).Path("DCIM/a.txt")));
  EXPECT_FALSE(Matches(rule, Request().Uid(kGalleryUid).Path("Download/a.txt")));
  EXPECT_FALSE(Matches(rule, Request().Uid(kPlainUid).Path("DCIM/a.txt")));
}

// ---- Covers ----

using CoversTest = RuleSetTest;

TEST_F(CoversTest, CatchAllCoversEverything) {
  EXPECT_TRUE(CoversText("", R"pb(
    op: OP_WRITE
    app {
      package: "com.example.gallery"
      uid { first: 10000 last: 10100 }
      holds_all: "perm.A"
      owner: OWNERSHIP_CALLER_OWNS
    }
    path { glob: "DCIM/**" area: AREA_RELATION_NONE node_type: NODE_TYPE_FILE }
    content { media_class: MEDIA_CLASS_IMAGE has_location: TRISTATE_FALSE }
  )pb"));
}

TEST_F(CoversTest, NothingButACatchAllCoversACatchAll) {
  EXPECT_TRUE(CoversText("", ""));
  EXPECT_FALSE(CoversText("op: OP_READ", ""));
}

TEST_F(CoversTest, BroaderOpsCoverNarrower) {
  EXPECT_TRUE(CoversText("op: OP_READ op: OP_WRITE", "op: OP_WRITE"));
  EXPECT_FALSE(CoversText("op: OP_WRITE", "op: OP_READ op: OP_WRITE"));
}

TEST_F(CoversTest, BroaderPackagesCoverNarrower) {
  EXPECT_TRUE(
      CoversText(R"pb(app { package: "a.b" package: "c.d" })pb", R"pb(app { package: "C.D" })pb"));
  EXPECT_FALSE(
      CoversText(R"pb(app { package: "c.d" })pb", R"pb(app { package: "a.b" package: "c.d" })pb"));
}

TEST_F(CoversTest, BroaderUidRangesCoverNarrower) {
  EXPECT_TRUE(CoversText("app { uid { first: 10000 last: 19999 } }",
                         "app { uid { first: 10061 last: 10070 } uid { first: 19999 } }"));
  EXPECT_FALSE(CoversText("app { uid { first: 10000 last: 19999 } }",
                          "app { uid { first: 9999 last: 10070 } }"));
}

TEST_F(CoversTest, BroaderAppIdRangesCoverNarrower) {
  EXPECT_TRUE(
      CoversText("app { app_id { first: 10000 last: 19999 } }", "app { app_id { first: 10061 } }"));
  EXPECT_FALSE(
      CoversText("app { app_id { first: 10061 } }", "app { app_id { first: 10000 last: 19999 } }"));
}

TEST_F(CoversTest, MoreUserIdsCoverFewer) {
  EXPECT_TRUE(CoversText("app { user_id: 0 user_id: 10 }", "app { user_id: 10 }"));
  EXPECT_FALSE(CoversText("app { user_id: 10 }", "app { user_id: 0 user_id: 10 }"));
}

TEST_F(CoversTest, MoreTopDirsCoverFewer) {
  EXPECT_TRUE(CoversText(R"pb(path { top_dir: "DCIM" top_dir: "Pictures" })pb",
                         R"pb(path { top_dir: "dcim" })pb"));
  EXPECT_FALSE(CoversText(R"pb(path { top_dir: "DCIM" })pb",
                          R"pb(path { top_dir: "DCIM" top_dir: "Pictures" })pb"));
}

TEST_F(CoversTest, MoreSelinuxDomainsCoverFewer) {
  EXPECT_TRUE(CoversText(R"pb(app { selinux_domain: "a" selinux_domain: "b" })pb",
                         R"pb(app { selinux_domain: "b" })pb"));
  EXPECT_FALSE(CoversText(R"pb(app { selinux_domain: "b" })pb",
                          R"pb(app { selinux_domain: "a" selinux_domain: "b" })pb"));
}

TEST_F(CoversTest, MoreMediaClassesCoverFewer) {
  constexpr char kImageOrVideo[] =
      "content { media_class: MEDIA_CLASS_IMAGE media_class: MEDIA_CLASS_VIDEO }";
  EXPECT_TRUE(CoversText(kImageOrVideo, "content { media_class: MEDIA_CLASS_VIDEO }"));
  EXPECT_FALSE(CoversText("content { media_class: MEDIA_CLASS_VIDEO }", kImageOrVideo));
}

TEST_F(CoversTest, LaterRuleWithAnExtraConditionIsCovered) {
  EXPECT_TRUE(CoversText(R"pb(op: OP_READ
                              path { top_dir: "DCIM" })pb",
                         R"pb(
                           op: OP_READ
                           app { holds_all: "perm.A" cross_user: TRISTATE_FALSE }
                           path { top_dir: "DCIM" depth: DEPTH_NESTED }
                           content { media_class: MEDIA_CLASS_IMAGE }
                         )pb"));
}

TEST_F(CoversTest, ActionsDoNotMatter) {
  CompiledRule allow = Compile(R(R"pb(path { top_dir: "DCIM" })pb"));
  CompiledRule deny = Compile(R"pb(name: "d"
                                   action { outcome: OUTCOME_DENY }
                                   path { top_dir: "DCIM" })pb");
  EXPECT_TRUE(Covers(allow, deny));
  EXPECT_TRUE(Covers(deny, allow));
}

TEST_F(CoversTest, IdenticalRulesCoverEachOther) {
  constexpr char kBody[] = R"pb(
    op: OP_READ
    op: OP_LOOKUP
    app {
      package: "com.example.gallery"
      uid { first: 10000 last: 19999 }
      app_id { first: 10000 last: 19999 }
      user_id: 0
      holds_all: "perm.A"
      holds_any: "perm.B"
      holds_none: "perm.C"
      selinux_domain: "untrusted_app"
      owner: OWNERSHIP_CALLER_DOES_NOT_OWN
      cross_user: TRISTATE_FALSE
      registered: TRISTATE_TRUE
    }
    path {
      top_dir: "Android"
      glob: "Android/*/*/**"
      depth: DEPTH_NESTED
      standard_top_dir: TRISTATE_TRUE
      area: AREA_RELATION_OTHER
      area_name: "app-data"
      node_type: NODE_TYPE_FILE
    }
    content { media_class: MEDIA_CLASS_AUDIO has_location: TRISTATE_FALSE }
  )pb";
  CompiledRule a = Compile(R(kBody));
  CompiledRule b = Compile(R(kBody));
  EXPECT_TRUE(Covers(a, b));
  EXPECT_TRUE(Covers(b, a));
}

TEST_F(CoversTest, HoldsAnySubsetIsCovered) {
  EXPECT_TRUE(CoversText(R"pb(app { holds_any: "perm.A" holds_any: "perm.B" })pb",
                         R"pb(app { holds_any: "perm.B" })pb"));
  EXPECT_FALSE(CoversText(R"pb(app { holds_any: "perm.B" })pb",
                          R"pb(app { holds_any: "perm.A" holds_any: "perm.B" })pb"));
}

TEST_F(CoversTest, HoldsAllImpliesHoldsAny) {
  EXPECT_TRUE(CoversText(R"pb(app { holds_any: "perm.A" holds_any: "perm.C" })pb",
                         R"pb(app { holds_all: "perm.C" })pb"));
  EXPECT_FALSE(CoversText(R"pb(app { holds_any: "perm.A" holds_any: "perm.C" })pb",
                          R"pb(app { holds_all: "perm.B" })pb"));
}

TEST_F(CoversTest, FewerHoldsAllCoverMore) {
  EXPECT_TRUE(CoversText(R"pb(app { holds_all: "perm.A" })pb",
                         R"pb(app { holds_all: "perm.A" holds_all: "perm.B" })pb"));
  EXPECT_FALSE(CoversText(R"pb(app { holds_all: "perm.A" holds_all: "perm.B" })pb",
                          R"pb(app { holds_all: "perm.A" })pb"));
}

TEST_F(CoversTest, FewerHoldsNoneCoverMore) {
  EXPECT_TRUE(CoversText(R"pb(app { holds_none: "perm.A" })pb",
                         R"pb(app { holds_none: "perm.A" holds_none: "perm.B" })pb"));
  EXPECT_FALSE(CoversText(R"pb(app { holds_none: "perm.A" holds_none: "perm.B" })pb",
                          R"pb(app { holds_none: "perm.A" })pb"));
}

TEST_F(CoversTest, AreaOwnOverAllAreasCoversOwnOverOne) {
  EXPECT_TRUE(CoversText("path { area: AREA_RELATION_OWN }",
                         R"pb(path { area: AREA_RELATION_OWN area_name: "app-data" })pb"));
  EXPECT_FALSE(CoversText(R"pb(path { area: AREA_RELATION_OWN area_name: "app-data" })pb",
                          "path { area: AREA_RELATION_OWN }"));
}

TEST_F(CoversTest, AreaOwnOverOneAreaDoesNotCoverAnother) {
  EXPECT_FALSE(CoversText(R"pb(path { area: AREA_RELATION_OWN area_name: "app-data" })pb",
                          R"pb(path { area: AREA_RELATION_OWN area_name: "app-obb" })pb"));
}

TEST_F(CoversTest, AreaNoneOverOneAreaCoversNoneOverAll) {
  EXPECT_TRUE(CoversText(R"pb(path { area: AREA_RELATION_NONE area_name: "app-data" })pb",
                         "path { area: AREA_RELATION_NONE }"));
  EXPECT_FALSE(CoversText("path { area: AREA_RELATION_NONE }",
                          R"pb(path { area: AREA_RELATION_NONE area_name: "app-data" })pb"));
}

TEST_F(CoversTest, DifferentAreaRelationsDoNotCover) {
  EXPECT_FALSE(
      CoversText("path { area: AREA_RELATION_OWN }", "path { area: AREA_RELATION_OTHER }"));
  EXPECT_FALSE(CoversText("path { area: AREA_RELATION_OWN }", "path { area: AREA_RELATION_NONE }"));
}

TEST_F(CoversTest, GlobStarStarCoversARuleThatNeverReachesTheRoot) {
  EXPECT_TRUE(CoversText(R"pb(path { glob: "**" })pb", R"pb(path { top_dir: "DCIM" })pb"));
  EXPECT_TRUE(CoversText(R"pb(path { glob: "**" })pb", R"pb(path { glob: "DCIM/*.jpg" })pb"));
  EXPECT_TRUE(CoversText(R"pb(path { glob: "**" })pb", "path { depth: DEPTH_TOP }"));
}

TEST_F(CoversTest, GlobStarStarDoesNotCoverTheRoot) {
  EXPECT_FALSE(CoversText(R"pb(path { glob: "**" })pb", ""));
  EXPECT_FALSE(CoversText(R"pb(path { glob: "**" })pb", "path { depth: DEPTH_ROOT }"));
}

TEST_F(CoversTest, SameGlobInAnotherCaseCovers) {
  EXPECT_TRUE(CoversText(R"pb(path { glob: "DCIM/*.jpg" glob: "Pictures/**" })pb",
                         R"pb(path { glob: "dcim/*.JPG" })pb"));
  EXPECT_FALSE(CoversText(R"pb(path { glob: "DCIM/*.jpg" })pb",
                          R"pb(path { glob: "DCIM/*.jpg" glob: "Pictures/**" })pb"));
}

// Case folding applies to the matched bytes, not to the range bounds: "[A-z]" spans "[\]^_`"
// (between 'Z' and 'a'); "[A-Z]" does not. The two patterns are equal ignoring case.
TEST_F(CoversTest, GlobClassRangesDifferingInCaseAreDifferentGlobs) {
  CompiledRule letters = Compile(R(R"pb(path { glob: "[A-Z]*" })pb"));
  CompiledRule wide = Compile(R(R"pb(path { glob: "[A-z]*" })pb"));
  ASSERT_TRUE(Matches(wide, Request().Path("_x")));
  ASSERT_FALSE(Matches(letters, Request().Path("_x")));
  EXPECT_FALSE(Covers(letters, wide));
}

TEST_F(CoversTest, TristateMustBeUnsetOrEqual) {
  EXPECT_TRUE(CoversText("app { registered: TRISTATE_TRUE }", "app { registered: TRISTATE_TRUE }"));
  EXPECT_FALSE(
      CoversText("app { registered: TRISTATE_TRUE }", "app { registered: TRISTATE_FALSE }"));
}

// An earlier rule constrained on one dimension never covers the catch-all, while the catch-all
// covers it: every dimension takes part in the comparison.
class CoversDimensionTest : public RuleSetTest, public testing::WithParamInterface<const char*> {};

TEST_P(CoversDimensionTest, ConstrainedRuleDoesNotCoverBroaderLaterRule) {
  EXPECT_FALSE(CoversText(GetParam(), ""));
}

TEST_P(CoversDimensionTest, BroaderEarlierRuleCoversConstrainedRule) {
  EXPECT_TRUE(CoversText("", GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Dimensions, CoversDimensionTest,
                         testing::Values("op: OP_READ",  //
                                         R"pb(app { package: "com.example.gallery" })pb",
                                         "app { uid { first: 10000 last: 19999 } }",
                                         "app { app_id { first: 10000 last: 19999 } }",  //
                                         "app { user_id: 0 }",                           //
                                         R"pb(app { holds_all: "perm.A" })pb",           //
                                         R"pb(app { holds_any: "perm.A" })pb",           //
                                         R"pb(app { holds_none: "perm.A" })pb",          //
                                         R"pb(app { selinux_domain: "untrusted_app" })pb",
                                         "app { owner: OWNERSHIP_CALLER_OWNS }",      //
                                         "app { cross_user: TRISTATE_FALSE }",        //
                                         "app { registered: TRISTATE_TRUE }",         //
                                         R"pb(path { top_dir: "DCIM" })pb",           //
                                         R"pb(path { glob: "**" })pb",                //
                                         "path { depth: DEPTH_NESTED }",              //
                                         "path { standard_top_dir: TRISTATE_TRUE }",  //
                                         "path { area: AREA_RELATION_OWN }",          //
                                         "path { area: AREA_RELATION_NONE }",         //
                                         "path { node_type: NODE_TYPE_FILE }",        //
                                         "content { media_class: MEDIA_CLASS_IMAGE }",
                                         "content { has_location: TRISTATE_FALSE }"));

// ---- WhyNeverMatches ----

using WhyNeverMatchesTest = RuleSetTest;

TEST_F(WhyNeverMatchesTest, SensibleRuleCanMatch) {
  EXPECT_EQ(Why(R"pb(
              op: OP_READ
              op: OP_LOOKUP
              app {
                holds_all: "perm.A"
                holds_any: "perm.B"
                holds_any: "perm.C"
                holds_none: "perm.C"
                uid { first: 1010000 last: 1019999 }
                user_id: 10
                app_id { first: 10061 }
                owner: OWNERSHIP_CALLER_OWNS
              }
              path { top_dir: "DCIM" standard_top_dir: TRISTATE_TRUE depth: DEPTH_NESTED }
              content { media_class: MEDIA_CLASS_IMAGE has_location: TRISTATE_TRUE }
            )pb"),
            "");
}

TEST_F(WhyNeverMatchesTest, CatchAllCanMatch) { EXPECT_EQ(Why(""), ""); }

TEST_F(WhyNeverMatchesTest, UidRangeWrappingIntoTheNextUserSharesAppIds) {
  // 99990..100005 includes uid 100003, whose app id is 3.
  EXPECT_EQ(Why("app { uid { first: 99990 last: 100005 } app_id { first: 3 } }"), "");
  EXPECT_NE(Why("app { uid { first: 99990 last: 100005 } app_id { first: 6 last: 99989 } }"), "");
}

TEST_F(WhyNeverMatchesTest, UidRangeSpanningAUserHasEveryAppId) {
  EXPECT_EQ(Why("app { uid { first: 150000 last: 249999 } app_id { first: 10061 } }"), "");
}

TEST_F(WhyNeverMatchesTest, UidRangeSpanningTwoUsersMatchesTheSecond) {
  EXPECT_EQ(Why("app { uid { first: 99000 last: 100500 } user_id: 1 }"), "");
}

TEST_F(WhyNeverMatchesTest, OwnerWithAnOpOnExistingFilesCanMatch) {
  EXPECT_EQ(Why("op: OP_CREATE op: OP_WRITE app { owner: OWNERSHIP_CALLER_OWNS }"), "");
}

TEST_F(WhyNeverMatchesTest, StandardTopDirFalseWithOneNonStandardTopDirCanMatch) {
  EXPECT_EQ(
      Why(R"pb(path { top_dir: "dcim" top_dir: "Books2" standard_top_dir: TRISTATE_FALSE })pb"),
      "");
}

TEST_F(WhyNeverMatchesTest, DirectoryWithMediaClassNoneCanMatch) {
  EXPECT_EQ(Why("path { node_type: NODE_TYPE_DIRECTORY } content { media_class: MEDIA_CLASS_NONE "
                "media_class: MEDIA_CLASS_IMAGE has_location: TRISTATE_FALSE }"),
            "");
}

TEST_F(WhyNeverMatchesTest, RootDirectoryWithAreaNoneCanMatch) {
  EXPECT_EQ(
      Why("path { depth: DEPTH_ROOT area: AREA_RELATION_NONE node_type: NODE_TYPE_DIRECTORY }"),
      "");
}

TEST_F(WhyNeverMatchesTest, DepthTopWithAreaNoneCanMatch) {
  EXPECT_EQ(Why("path { depth: DEPTH_TOP area: AREA_RELATION_NONE }"), "");
}

struct Contradiction {
  const char* name;
  const char* body;
};

class WhyNeverMatchesContradictionTest : public RuleSetTest,
                                         public testing::WithParamInterface<Contradiction> {};

TEST_P(WhyNeverMatchesContradictionTest, IsExplained) {
  EXPECT_NE(Why(GetParam().body), "") << GetParam().body;
}

constexpr EnumMask kFileOnlyOps = Bit(OP_CREATE) | Bit(OP_DELETE) | Bit(OP_WRITE);
constexpr EnumMask kDirectoryOnlyOps = Bit(OP_MKDIR) | Bit(OP_RMDIR);

TEST_P(WhyNeverMatchesContradictionTest, TrulyNeverMatchesAnExample) {
  // Spot check against Matches over a spread of requests, so a claim cannot be plainly false.
  CompiledRule rule = Compile(R(GetParam().body));
  for (uint32_t uid : {kGalleryUid, kSharedUid, kPlainUid, kUnregisteredUid, 1010061u, 100003u}) {
    for (Op op : {OP_LOOKUP, OP_READ, OP_WRITE, OP_CREATE, OP_DELETE, OP_MKDIR, OP_RMDIR}) {
      for (const char* path :
           {"", "DCIM", "Other", "DCIM/a.jpg", "Android/data/com.example.gallery",
            "Android/data/com.example.plain/a.mp3"}) {
        for (bool dir : {false, true}) {
          // Only what the daemon asks: file ops on files, directory ops on directories, the root
          // as a directory.
          if (dir ? (Bit(op) & kFileOnlyOps) != 0
                  : (Bit(op) & kDirectoryOnlyOps) != 0 || absl::string_view(path).empty()) {
            continue;
          }
          for (bool owns : {false, true}) {
            Request r = Request().Uid(uid).WithOp(op).Path(path).Content(
                Image(media::LocationPresence::kUnknown));
            if (dir) r.Dir();
            if (owns && op != OP_CREATE && op != OP_MKDIR) r.Owns();
            EXPECT_FALSE(Matches(rule, r)) << uid << " " << op << " " << path << " " << dir;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Contradictions, WhyNeverMatchesContradictionTest,
    testing::Values(
        Contradiction{"HoldsAllAndNone", R"pb(app {
                                                holds_all: "perm.A"
                                                holds_none: "perm.B"
                                                holds_none: "perm.A"
                                              })pb"},
        Contradiction{"HoldsAnyInsideHoldsNone",
                      R"pb(app {
                             holds_any: "perm.A"
                             holds_any: "perm.B"
                             holds_none: "perm.A"
                             holds_none: "perm.B"
                           })pb"},
        Contradiction{"UidsOutsideUserIds", "app { uid { first: 10000 last: 19999 } user_id: 10 }"},
        Contradiction{"UidsOutsideAppIds",
                      "app { uid { first: 10000 last: 10100 } app_id { first: 20000 } }"},
        Contradiction{"OwnerOnlyCreating",
                      "op: OP_CREATE op: OP_MKDIR app { owner: OWNERSHIP_CALLER_OWNS }"},
        Contradiction{"RootWithTopDir", R"pb(path { depth: DEPTH_ROOT top_dir: "DCIM" })pb"},
        Contradiction{"RootWithGlob", R"pb(path { depth: DEPTH_ROOT glob: "**" })pb"},
        Contradiction{"RootWithStandardTopDir",
                      "path { depth: DEPTH_ROOT standard_top_dir: TRISTATE_FALSE }"},
        Contradiction{"RootWithAreaOwn", "path { depth: DEPTH_ROOT area: AREA_RELATION_OWN }"},
        Contradiction{"RootWithAreaOther", "path { depth: DEPTH_ROOT area: AREA_RELATION_OTHER }"},
        Contradiction{"RootFile", "path { depth: DEPTH_ROOT node_type: NODE_TYPE_FILE }"},
        Contradiction{"TopWithAreaOwn", "path { depth: DEPTH_TOP area: AREA_RELATION_OWN }"},
        Contradiction{"TopWithAreaOther", "path { depth: DEPTH_TOP area: AREA_RELATION_OTHER }"},
        Contradiction{"StandardTrueWithoutStandardTopDir", R"pb(path {
                                                                  top_dir: "Books2"
                                                                  top_dir: "Other"
                                                                  standard_top_dir: TRISTATE_TRUE
                                                                })pb"},
        Contradiction{
            "StandardFalseWithOnlyStandardTopDirs",
            R"pb(path { top_dir: "dcim" top_dir: "Download" standard_top_dir: TRISTATE_FALSE })pb"},
        Contradiction{"DirectoryWithMediaClass",
                      "path { node_type: NODE_TYPE_DIRECTORY } "
                      "content { media_class: MEDIA_CLASS_IMAGE }"},
        Contradiction{"DirectoryWithLocation",
                      "path { node_type: NODE_TYPE_DIRECTORY } "
                      "content { has_location: TRISTATE_TRUE }"},
        Contradiction{"DirectoryWithFileOps",
                      "op: OP_CREATE op: OP_DELETE op: OP_WRITE "
                      "path { node_type: NODE_TYPE_DIRECTORY }"},
        Contradiction{"FileWithDirectoryOps",
                      "op: OP_MKDIR op: OP_RMDIR path { node_type: NODE_TYPE_FILE }"},
        Contradiction{"LocationWithoutImageOrVideo",
                      "content { has_location: TRISTATE_TRUE media_class: MEDIA_CLASS_AUDIO "
                      "media_class: MEDIA_CLASS_NONE }"}),
    [](const testing::TestParamInfo<Contradiction>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace scopedfs::policy
