// Reloads without a daemon: a good configuration is installed and counted; a bad one (syntax
// error, unknown permission, missing file) is rejected with file:line:col and the installed
// engine stays; empty paths mean the files given at start.
#include "daemon/service/config_reloader.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Put(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

class ConfigReloaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir();
    paths_.policy = dir_ + "/policy.textproto";
    paths_.apps = dir_ + "/apps.textproto";
    Put(paths_.policy, Slurp("policy/configs/android.textproto"));
    Put(paths_.apps, Slurp("policy/configs/apps.textproto"));
  }
  ConfigReloader MakeReloader() {
    return ConfigReloader(
        paths_,
        [this](std::shared_ptr<const policy::Engine> e) {
          if (refuse_install_) return absl::FailedPreconditionError("other semantics");
          installed_.push_back(e);
          return absl::OkStatus();
        },
        [this](absl::string_view line) { log_.emplace_back(line); });
  }
  std::string dir_;
  policy::ConfigPaths paths_;
  bool refuse_install_ = false;
  std::vector<std::shared_ptr<const policy::Engine>> installed_;
  std::vector<std::string> log_;
};

TEST_F(ConfigReloaderTest, AGoodConfigurationIsInstalled) {
  ConfigReloader reloader = MakeReloader();
  absl::StatusOr<std::string> r = reloader.Reload({}, "SIGHUP");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(absl::StartsWith(*r, "reloaded policy \"android\" (")) << *r;
  ASSERT_EQ(installed_.size(), 1u);
  EXPECT_EQ(installed_[0]->policy_name(), "android");
  EXPECT_EQ(reloader.reloads(), 1u);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_TRUE(absl::EndsWith(log_[0], "(SIGHUP)")) << log_[0];
}

TEST_F(ConfigReloaderTest, ABrokenEditIsRejectedWithLineAndColumn) {
  ConfigReloader reloader = MakeReloader();
  Put(paths_.apps, "app { package: \"com.x\" uid: 10100 }\napp { package: \"com.y\" uid: }\n");
  absl::StatusOr<std::string> r = reloader.Reload({}, "change of apps.textproto");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "previous policy stays in force"));
  EXPECT_TRUE(absl::StrContains(r.status().message(), paths_.apps + ":2:")) << r.status();
  EXPECT_TRUE(installed_.empty());
  EXPECT_EQ(reloader.rejected(), 1u);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_TRUE(absl::StrContains(log_[0], "reload (change of apps.textproto) rejected")) << log_[0];
}

TEST_F(ConfigReloaderTest, AnUndeclaredPermissionIsRejected) {
  ConfigReloader reloader = MakeReloader();
  Put(paths_.apps,
      "app { package: \"com.x\" uid: 10100 permission: \"android.permission.NOPE\" }\n");
  absl::StatusOr<std::string> r = reloader.Reload({}, "test");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), paths_.apps + ":1:")) << r.status();
  EXPECT_TRUE(installed_.empty());
}

TEST_F(ConfigReloaderTest, AMissingFileIsRejected) {
  ConfigReloader reloader = MakeReloader();
  policy::ConfigPaths other;
  other.apps = dir_ + "/does-not-exist.textproto";
  EXPECT_FALSE(reloader.Reload(other, "test").ok());
  EXPECT_TRUE(installed_.empty());
}

TEST_F(ConfigReloaderTest, AnEngineTheInstallRefusesIsARejectedReload) {
  ConfigReloader reloader = MakeReloader();
  refuse_install_ = true;
  absl::StatusOr<std::string> r = reloader.Reload({}, "SIGHUP");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "other semantics")) << r.status();
  EXPECT_EQ(reloader.reloads(), 0u);
  EXPECT_EQ(reloader.rejected(), 1u);
}

TEST_F(ConfigReloaderTest, GivenPathsOverrideOnlyTheirOwnFile) {
  ConfigReloader reloader = MakeReloader();
  std::string apps2 = dir_ + "/apps2.textproto";
  Put(apps2, "app { package: \"com.only\" uid: 10100 }\n");
  policy::ConfigPaths other;
  other.apps = apps2;
  absl::StatusOr<std::string> r = reloader.Reload(other, "control socket");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(absl::StrContains(*r, "1 apps")) << *r;
  ASSERT_EQ(installed_.size(), 1u);
  EXPECT_NE(installed_[0]->apps().FindPackage("com.only"), nullptr);
}

}  // namespace
}  // namespace scopedfs::daemon
