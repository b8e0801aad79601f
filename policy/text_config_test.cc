// Tests for text-format config loading: parsed fields, "file:line:col" error locations, Where()
// lookups of nested repeated fields, Load() size and existence limits, and ProblemList.
#include "policy/text_config.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "google/protobuf/descriptor.pb.h"
#include "gtest/gtest.h"
#include "proto/policy.pb.h"

namespace scopedfs::policy {
namespace {

constexpr size_t kMaxConfigBytes = 16 << 20;  // Mirrors text_config.cc.

// Positions (1-based line:col) are part of the expectations below; edit with care.
constexpr char kPolicyText[] =
    "name: \"android\"\n"                                              // 1
    "permission { name: \"android.permission.READ_MEDIA_IMAGES\" }\n"  // 2
    "permission { name: \"android.permission.READ_MEDIA_VIDEO\" }\n"   // 3
    "rule {\n"                                                         // 4
    "  name: \"first\"\n"                                              // 5
    "  action { outcome: OUTCOME_ALLOW }\n"                            // 6
    "}\n"                                                              // 7
    "rule {\n"                                                         // 8
    "  name: \"second\"\n"                                             // 9
    "  app {\n"                                                        // 10
    "    holds_any: \"android.permission.READ_MEDIA_IMAGES\"\n"        // 11
    "    holds_any: \"android.permission.READ_MEDIA_VIDEO\"\n"         // 12
    "  }\n"                                                            // 13
    "  action { outcome: OUTCOME_DENY error: ERRNO_EPERM }\n"          // 14
    "}\n";                                                             // 15

// Parses kPolicyText, failing the test if it does not parse.
TextConfigSource ParsePolicy(Policy* policy) {
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse(kPolicyText, "policy.textproto", policy);
  EXPECT_TRUE(source.ok()) << source.status();
  if (source.ok()) return *std::move(source);
  // Unreachable in a passing run; gives the caller something to call Where() on.
  return *TextConfigSource::Parse("", "policy.textproto", policy);
}

// Writes `contents` to a fresh file under the test's temporary directory.
std::string WriteTempFile(const std::string& name, const std::string& contents) {
  std::string path = testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  EXPECT_TRUE(out) << "cannot write " << path;
  return path;
}

// --- Parse ---

// Every unknown enum value of a file is reported in one run, each at its own line:col (the
// columns of two on one line included), with the values its field takes.
TEST(TextConfigParseTest, EveryUnknownEnumValueIsReportedWithTheValidOnes) {
  constexpr char kText[] =
      "rule {\n"                                                 // 1
      "  name: \"r\"\n"                                          // 2
      "  op: OP_RAED op: OP_WRIET\n"                             // 3
      "  action { outcome: OUTCOME_ALOW error: ERRNO_EPREM }\n"  // 4
      "}\n";                                                     // 5
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Parse(kText, "p.textproto", &policy);
  ASSERT_FALSE(source.ok());
  std::string m(source.status().message());
  EXPECT_TRUE(absl::StrContains(m, "p.textproto:3:7: Unknown enumeration value of \"OP_RAED\""))
      << m;
  EXPECT_TRUE(absl::StrContains(m, "p.textproto:3:19: Unknown enumeration value of \"OP_WRIET\""))
      << m;
  EXPECT_TRUE(absl::StrContains(m, "p.textproto:4:21:")) << m;
  EXPECT_TRUE(absl::StrContains(m, "p.textproto:4:41:")) << m;
  EXPECT_TRUE(absl::StrContains(m, "valid values: OP_UNSPECIFIED, OP_LOOKUP, OP_READ")) << m;
  EXPECT_TRUE(absl::StrContains(m, "valid values: ERRNO_UNSPECIFIED, ERRNO_EACCES")) << m;
  EXPECT_EQ(policy.rule_size(), 0) << "a failed parse leaves nothing behind";
}

// A syntax error after an unknown enum value is reported too, and the parse stops there.
TEST(TextConfigParseTest, SyntaxErrorAfterAnUnknownEnumValueIsReported) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse("rule { op: OP_NOPE }\nrule { name: }\n", "p.textproto", &policy);
  ASSERT_FALSE(source.ok());
  std::string m(source.status().message());
  EXPECT_TRUE(absl::StrContains(m, "p.textproto:1:12:")) << m;
  EXPECT_TRUE(absl::StrContains(m, "p.textproto:2:")) << m;
}

TEST(TextConfigParseTest, ParsesFields) {
  Policy policy;
  ParsePolicy(&policy);
  EXPECT_EQ(policy.name(), "android");
  ASSERT_EQ(policy.permission_size(), 2);
  EXPECT_EQ(policy.permission(1).name(), "android.permission.READ_MEDIA_VIDEO");
  ASSERT_EQ(policy.rule_size(), 2);
  EXPECT_EQ(policy.rule(0).name(), "first");
  EXPECT_EQ(policy.rule(0).action().outcome(), OUTCOME_ALLOW);
  EXPECT_EQ(policy.rule(1).name(), "second");
  ASSERT_EQ(policy.rule(1).app().holds_any_size(), 2);
  EXPECT_EQ(policy.rule(1).app().holds_any(0), "android.permission.READ_MEDIA_IMAGES");
  EXPECT_EQ(policy.rule(1).action().outcome(), OUTCOME_DENY);
  EXPECT_EQ(policy.rule(1).action().error(), ERRNO_EPERM);
  EXPECT_FALSE(policy.has_layout());
}

TEST(TextConfigParseTest, KeepsFilename) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Parse("", "x.textproto", &policy);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ(source->filename(), "x.textproto");
}

TEST(TextConfigParseTest, ClearsMessageFirst) {
  Policy policy;
  policy.set_name("stale");
  policy.add_rule()->set_name("stale rule");
  ASSERT_TRUE(TextConfigSource::Parse("description: \"fresh\"\n", "p", &policy).ok());
  EXPECT_EQ(policy.name(), "");
  EXPECT_EQ(policy.rule_size(), 0);
  EXPECT_EQ(policy.description(), "fresh");
}

TEST(TextConfigParseTest, SyntaxErrorIsLocated) {
  // The scalar field "name" on line 3 lacks its ':'; the parser stops at the string, column 19.
  constexpr char kText[] =
      "name: \"android\"\n"
      "description: \"x\"\n"
      "permission { name \"p\" }\n";
  Policy policy;
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse(kText, "bad.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "bad.textproto:3:19: "))
      << source.status();
}

TEST(TextConfigParseTest, ErrorAtEndOfInputIsLocated) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse("name: \"a\"\nrule {\n", "eof.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "eof.textproto:3:1: "))
      << source.status();
}

TEST(TextConfigParseTest, UnknownFieldIsLocated) {
  constexpr char kText[] =
      "name: \"android\"\n"
      "  bogus: 1\n";
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Parse(kText, "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:2:3: ")) << source.status();
  EXPECT_TRUE(absl::StrContains(source.status().message(), "\"bogus\"")) << source.status();
}

TEST(TextConfigParseTest, UnknownNestedFieldIsLocated) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse("rule { app { bogus: 1 } }\n", "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:1:14: ")) << source.status();
}

// TextFormat notices a bad name only at the token after it; the report must still point at the
// name, even when that next token is on a later line or separated by spaces.
TEST(TextConfigParseTest, UnknownFieldBeforeSpaceIsLocated) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse("name: \"a\"\n  bogus { x: 1 }\n", "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:2:3: ")) << source.status();
}

TEST(TextConfigParseTest, UnknownFieldBeforeNewlineIsLocated) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Parse(
      "name: \"a\"\nrule { bogus\n  # comment\n  : 1 }\n", "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:2:8: ")) << source.status();
}

TEST(TextConfigParseTest, BadEnumNameAtEndOfLineIsLocated) {
  constexpr char kText[] =
      "name: \"android\"\n"
      "default_action {\n"
      "  outcome: OUTCOME_MAYBE\n"
      "}\n";
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Parse(kText, "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:3:12: ")) << source.status();
  EXPECT_TRUE(absl::StrContains(source.status().message(), "\"OUTCOME_MAYBE\"")) << source.status();
}

TEST(TextConfigParseTest, BadEnumNameBeforeBraceIsLocated) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Parse(
      "default_action { outcome: OUTCOME_MAYBE }\n", "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:1:27: ")) << source.status();
}

TEST(TextConfigParseTest, BadEnumNameInListIsLocated) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse("rule { op: [OP_READ, OP_FLY] }\n", "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:1:22: ")) << source.status();
}

TEST(TextConfigParseTest, WrongValueTypeIsRefused) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse("name: 5\n", "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:1:7: ")) << source.status();
}

TEST(TextConfigParseTest, RepeatedSingularFieldIsRefused) {
  Policy policy;
  absl::StatusOr<TextConfigSource> source =
      TextConfigSource::Parse("name: \"a\"\nname: \"b\"\n", "p.textproto", &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "p.textproto:2:")) << source.status();
}

// Parser warnings are problems too: a config that uses a deprecated field must not load silently.
// No scopedfs field is deprecated yet, so this uses one from descriptor.proto. (TextFormat reports
// the warning at the token after the field, here the end of input, so only the file is checked.)
TEST(TextConfigParseTest, WarningIsAnError) {
  google::protobuf::FileOptions options;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Parse(
      "java_package: \"x\"\njava_generate_equals_and_hash: true\n", "w.textproto", &options);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), "w.textproto:")) << source.status();
  EXPECT_TRUE(absl::StrContains(source.status().message(), "warning treated as error"))
      << source.status();
}

// --- Where ---

TEST(TextConfigWhereTest, TopLevelField) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({{"name"}}), "policy.textproto:1:1");
}

TEST(TextConfigWhereTest, RepeatedTopLevelField) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({{"permission", 0}}), "policy.textproto:2:1");
  EXPECT_EQ(source.Where({{"permission", 1}}), "policy.textproto:3:1");
  EXPECT_EQ(source.Where({{"rule", 1}}), "policy.textproto:8:1");
}

TEST(TextConfigWhereTest, NestedRepeatedField) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({{"rule", 1}, {"app"}, {"holds_any", 1}}), "policy.textproto:12:5");
  EXPECT_EQ(source.Where({{"rule", 1}, {"app"}, {"holds_any", 0}}), "policy.textproto:11:5");
}

TEST(TextConfigWhereTest, NestedSingularField) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({{"rule", 1}, {"app"}}), "policy.textproto:10:3");
  EXPECT_EQ(source.Where({{"rule", 1}, {"action"}, {"error"}}), "policy.textproto:14:34");
  EXPECT_EQ(source.Where({{"rule", 0}, {"action"}, {"outcome"}}), "policy.textproto:6:12");
}

TEST(TextConfigWhereTest, AbsentFieldFallsBackToParent) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({{"rule", 1}, {"app"}, {"holds_all", 0}}), "policy.textproto:10:3");
  EXPECT_EQ(source.Where({{"rule", 0}, {"app"}, {"holds_any", 0}}), "policy.textproto:4:1");
  EXPECT_EQ(source.Where({{"rule", 0}, {"path"}}), "policy.textproto:4:1");
}

TEST(TextConfigWhereTest, IndexPastTheEndFallsBackToParent) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({{"rule", 1}, {"app"}, {"holds_any", 2}}), "policy.textproto:10:3");
}

TEST(TextConfigWhereTest, NothingLocatedGivesFilename) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({}), "policy.textproto");
  EXPECT_EQ(source.Where({{"rule", 7}}), "policy.textproto");
  EXPECT_EQ(source.Where({{"layout"}, {"area", 0}}), "policy.textproto");
}

TEST(TextConfigWhereTest, UnknownFieldNameStopsTheWalk) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({{"no_such_field"}}), "policy.textproto");
  EXPECT_EQ(source.Where({{"rule", 1}, {"no_such_field"}, {"holds_any", 0}}),
            "policy.textproto:8:1");
}

TEST(TextConfigWhereTest, StepsBelowAScalarAreIgnored) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  EXPECT_EQ(source.Where({{"rule", 0}, {"name"}, {"app"}}), "policy.textproto:5:3");
}

TEST(TextConfigWhereTest, CopiesShareLocations) {
  Policy policy;
  TextConfigSource source = ParsePolicy(&policy);
  TextConfigSource copy = source;
  EXPECT_EQ(copy.Where({{"rule", 1}, {"app"}, {"holds_any", 1}}), "policy.textproto:12:5");
}

// --- Load ---

TEST(TextConfigLoadTest, LoadsFileAndNamesItInLocations) {
  std::string path = WriteTempFile("load_ok.textproto", kPolicyText);
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Load(path, &policy);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ(policy.rule_size(), 2);
  EXPECT_EQ(source->filename(), path);
  EXPECT_EQ(source->Where({{"rule", 1}}), path + ":8:1");
}

TEST(TextConfigLoadTest, MissingFileIsNotFound) {
  std::string path = testing::TempDir() + "/does_not_exist.textproto";
  std::remove(path.c_str());
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Load(path, &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(source.status().message(), path)) << source.status();
}

TEST(TextConfigLoadTest, SyntaxErrorNamesThePath) {
  std::string path = WriteTempFile("load_bad.textproto", "name: \"a\"\nbogus: 1\n");
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Load(path, &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(source.status().message(), path + ":2:1: ")) << source.status();
}

TEST(TextConfigLoadTest, OversizedFileIsRefused) {
  std::string path = WriteTempFile("load_huge.textproto", std::string(kMaxConfigBytes + 1, ' '));
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Load(path, &policy);
  ASSERT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(source.status().message(), path)) << source.status();
}

TEST(TextConfigLoadTest, FileOfExactlyTheLimitLoads) {
  std::string contents = "name: \"big\"\n";
  contents.resize(kMaxConfigBytes, ' ');
  std::string path = WriteTempFile("load_limit.textproto", contents);
  Policy policy;
  absl::StatusOr<TextConfigSource> source = TextConfigSource::Load(path, &policy);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ(policy.name(), "big");
}

// --- ProblemList ---

TEST(ProblemListTest, EmptyIsOk) {
  ProblemList problems;
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(problems.size(), 0u);
  EXPECT_TRUE(problems.ToStatus().ok());
}

TEST(ProblemListTest, ListsProblemsInOrderAdded) {
  ProblemList problems;
  problems.Add("b.textproto:9:1", "second file first");
  problems.Add("a.textproto:1:2", "then the first");
  EXPECT_FALSE(problems.empty());
  EXPECT_EQ(problems.size(), 2u);
  absl::Status status = problems.ToStatus();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "b.textproto:9:1: second file first\n"
            "a.textproto:1:2: then the first");
}

}  // namespace
}  // namespace scopedfs::policy
