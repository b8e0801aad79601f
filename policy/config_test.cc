// Golden tests for configuration errors: each directory under policy/testdata/config holds a broken
// configuration and the exact problems (file:line:col: message) it must produce, all at once.
#include "policy/config.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace scopedfs::policy {
namespace {

constexpr char kCases[] = "policy/testdata/config/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

absl::StatusOr<LoadedConfig> LoadCase(const std::string& name) {
  std::string dir = std::string(kCases) + name + "/";
  ConfigPaths paths{dir + "policy.textproto", dir + "apps.textproto", ""};
  if (Exists(dir + "packages.list")) paths.packages_list = dir + "packages.list";
  return LoadConfig(paths);
}

class GoldenErrorTest : public testing::TestWithParam<std::string> {};

TEST_P(GoldenErrorTest, ReportsEveryProblemWithItsLocation) {
  const std::string golden_path = std::string(kCases) + GetParam() + "/expected.golden";
  std::string expected = ReadFile(golden_path);
  ASSERT_FALSE(expected.empty()) << "missing golden " << golden_path;
  while (!expected.empty() && expected.back() == '\n') expected.pop_back();

  absl::StatusOr<LoadedConfig> config = LoadCase(GetParam());
  ASSERT_FALSE(config.ok()) << GetParam() << " loaded but should not have";
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(config.status().message()), expected);
}

INSTANTIATE_TEST_SUITE_P(Configs, GoldenErrorTest,
                         testing::Values("syntax_error", "unknown_field", "unknown_permission",
                                         "duplicate_uid", "conflicting_package", "bad_glob",
                                         "never_match", "unreachable", "packages_list_conflict",
                                         "numeric_enums", "many_problems", "bad_location_guard"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(ConfigTest, ValidCaseLoads) {
  absl::StatusOr<LoadedConfig> config = LoadCase("ok");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->policy.rule_size(), 1);
  EXPECT_EQ(config->apps.app_size(), 2);
  ASSERT_EQ(config->rule_locations.size(), 1u);
  EXPECT_EQ(config->rule_locations[0], "policy/testdata/config/ok/policy.textproto:8:1");
}

TEST(ConfigTest, SharedUidWithSameSharedUserIsNotADuplicate) {
  absl::StatusOr<LoadedConfig> config = LoadCase("duplicate_uid");
  ASSERT_FALSE(config.ok());
  // Only the unshared pair (lines 1-2) is reported; the suite pair on 10070 is fine.
  EXPECT_EQ(std::string(config.status().message()).find("10070"), std::string::npos);
}

TEST(ConfigTest, PackagesListAddsUnknownPackages) {
  std::string dir = std::string(kCases) + "packages_list_conflict/";
  absl::StatusOr<LoadedConfig> config = ParseConfig(
      ReadFile(dir + "policy.textproto"), "policy", ReadFile(dir + "apps.textproto"), "apps",
      "com.example.new 10080 0 /data/user/0/com.example.new default:targetSdkVersion=34 none\n",
      "packages.list");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->packages_list.size(), 1u);
  EXPECT_EQ(config->packages_list[0].uid, 10080u);
}

TEST(ConfigTest, MissingFileIsNotFoundNotInvalid) {
  absl::StatusOr<LoadedConfig> config =
      LoadConfig({"policy/testdata/config/nope/policy.textproto",
                  "policy/testdata/config/ok/apps.textproto", ""});
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
}

TEST(ConfigTest, MissingPackagesListIsNotFound) {
  absl::StatusOr<LoadedConfig> config =
      LoadConfig({"policy/testdata/config/ok/policy.textproto",
                  "policy/testdata/config/ok/apps.textproto", "policy/testdata/config/nope.list"});
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
}

TEST(ConfigTest, ErrorsInBothFilesAreReportedTogether) {
  absl::StatusOr<LoadedConfig> config = ParseConfig("name: \"x\"\nbogus: 1\n", "p.textproto",
                                                    "app { uid: \"ten\" }\n", "a.textproto");
  ASSERT_FALSE(config.ok());
  std::string message(config.status().message());
  EXPECT_NE(message.find("p.textproto:2:1: Message type"), std::string::npos) << message;
  EXPECT_NE(message.find("a.textproto:1:12: "), std::string::npos) << message;
}

TEST(ConfigTest, DefaultActionIsValidated) {
  absl::StatusOr<LoadedConfig> config = ParseConfig(
      "default_action { outcome: OUTCOME_ALLOW error: ERRNO_EPERM }\n", "p.textproto", "", "a");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(std::string(config.status().message()).find("p.textproto:1:41: "), std::string::npos)
      << config.status();
}

// Shipped example policies are documentation; they must always load.
struct Shipped {
  const char* policy;
  const char* apps;
};

class ShippedConfigTest : public testing::TestWithParam<Shipped> {};

TEST_P(ShippedConfigTest, Loads) {
  absl::StatusOr<LoadedConfig> config =
      LoadConfig({std::string("policy/configs/") + GetParam().policy,
                  std::string("policy/configs/") + GetParam().apps, ""});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->policy.name().empty());
  EXPECT_FALSE(config->policy.description().empty());
  for (const Rule& rule : config->policy.rule()) {
    EXPECT_FALSE(rule.description().empty()) << rule.name() << " has no description";
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ShippedConfigTest,
                         testing::Values(Shipped{"android.textproto", "apps.textproto"},
                                         Shipped{"android-strict.textproto", "apps.textproto"},
                                         Shipped{"permissive.textproto", "apps.textproto"},
                                         Shipped{"enterprise.textproto",
                                                 "enterprise_apps.textproto"}));

// The strict Android policy is the Android policy with another visibility, nothing else.
TEST(ShippedConfigTest, AndroidStrictDiffersFromAndroidOnlyInVisibility) {
  absl::StatusOr<LoadedConfig> listing =
      LoadConfig({"policy/configs/android.textproto", "policy/configs/apps.textproto", ""});
  absl::StatusOr<LoadedConfig> strict =
      LoadConfig({"policy/configs/android-strict.textproto", "policy/configs/apps.textproto", ""});
  ASSERT_TRUE(listing.ok()) << listing.status();
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_EQ(listing->policy.visibility(), VISIBILITY_LISTING);
  EXPECT_EQ(strict->policy.visibility(), VISIBILITY_STRICT);
  Policy a = listing->policy;
  Policy b = strict->policy;
  for (Policy* p : {&a, &b}) {
    p->clear_name();
    p->clear_description();
    p->clear_visibility();
  }
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString())
      << "android-strict.textproto must keep android.textproto's rules, layout and settings";
}

}  // namespace
}  // namespace scopedfs::policy
