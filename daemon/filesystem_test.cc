// Filesystem::Ask with SELinux: the caller's domain comes from the injected context source when
// SELinux is enabled (and a caller without a readable context is refused), and from the app's
// configured domain when it is not. No mount needed.
#include "daemon/filesystem.h"

#include <unistd.h>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "policy/config.h"

namespace scopedfs::daemon {
namespace {

class FakeContexts : public policy::ProcessContextSource {
 public:
  explicit FakeContexts(bool enabled) : enabled_(enabled) {}
  bool Enabled() const override { return enabled_; }
  absl::StatusOr<std::string> PidContext(pid_t pid) const override {
    auto it = contexts_.find(pid);
    if (it == contexts_.end()) return absl::NotFoundError("no such process");
    return it->second;
  }
  absl::flat_hash_map<pid_t, std::string> contexts_;

 private:
  bool enabled_;
};

constexpr char kPolicy[] = R"pb(
  name: "domains"
  rule {
    name: "platform-apps-read"
    description: "Only the platform_app domain may read."
    app { selinux_domain: "platform_app" }
    action { outcome: OUTCOME_ALLOW }
  }
)pb";
constexpr char kApps[] = R"pb(
  app { package: "com.example.platform" uid: 10100 selinux_domain: "platform_app" }
  app { package: "com.example.plain" uid: 10101 }
)pb";

std::unique_ptr<Filesystem> MakeFilesystem(const policy::ProcessContextSource* contexts) {
  absl::StatusOr<policy::LoadedConfig> config = policy::ParseConfig(kPolicy, "p", kApps, "a");
  EXPECT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<const policy::Engine>> engine = policy::Engine::Create(*config);
  EXPECT_TRUE(engine.ok()) << engine.status();
  FilesystemOptions options;
  options.source = testing::TempDir();
  options.contexts = contexts;
  absl::StatusOr<std::unique_ptr<Filesystem>> fs =
      Filesystem::Create(options, std::shared_ptr<const policy::Engine>(std::move(*engine)));
  EXPECT_TRUE(fs.ok()) << fs.status();
  return std::move(*fs);
}

Outcome Ask(const Filesystem& fs, uid_t uid, pid_t pid) {
  Filesystem::FileInfo info;
  return fs.Ask({uid, pid}, OP_READ, "Download/x.txt", false, &info).outcome;
}

TEST(FilesystemAskTest, EnabledSelinuxUsesTheKernelDomain) {
  FakeContexts contexts(/*enabled=*/true);
  contexts.contexts_[42] = "u:r:platform_app:s0:c512,c768";
  contexts.contexts_[43] = "u:r:untrusted_app:s0:c512,c768";
  std::unique_ptr<Filesystem> fs = MakeFilesystem(&contexts);
  // The plain app is configured as untrusted_app, but the kernel says platform_app: kernel wins.
  EXPECT_EQ(Ask(*fs, 10101, 42), OUTCOME_ALLOW);
  // And the other way round.
  EXPECT_EQ(Ask(*fs, 10100, 43), OUTCOME_HIDE);
}

TEST(FilesystemAskTest, UnreadableContextIsRefused) {
  FakeContexts contexts(/*enabled=*/true);
  std::unique_ptr<Filesystem> fs = MakeFilesystem(&contexts);
  EXPECT_EQ(Ask(*fs, 10100, 999), OUTCOME_DENY);
}

TEST(FilesystemAskTest, DisabledSelinuxUsesTheConfiguredDomain) {
  FakeContexts contexts(/*enabled=*/false);
  contexts.contexts_[42] = "u:r:untrusted_app:s0";
  std::unique_ptr<Filesystem> fs = MakeFilesystem(&contexts);
  EXPECT_EQ(Ask(*fs, 10100, 42), OUTCOME_ALLOW);
  EXPECT_EQ(Ask(*fs, 10101, 42), OUTCOME_HIDE);
}

}  // namespace
}  // namespace scopedfs::daemon
