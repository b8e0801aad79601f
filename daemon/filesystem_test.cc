// Filesystem without a mount: what its threads share. The daemon attaches its FUSE session after
// the control socket's and the configuration watch's threads have started, and those threads
// replace the policy (SetEngine), which reads the session; this test does both at once, so
// ThreadSanitizer (--config=tsan) reports the attachment if it is not synchronised.
#include "daemon/filesystem.h"

#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "policy/config.h"
#include "policy/engine.h"

namespace scopedfs::daemon {
namespace {

constexpr char kPolicy[] = R"pb(
  name: "everyone"
  default_action { outcome: OUTCOME_ALLOW }
)pb";
constexpr char kApps[] = R"pb(
  app { package: "com.example.a" uid: 10100 }
)pb";

std::shared_ptr<const policy::Engine> MakeEngine() {
  absl::StatusOr<policy::LoadedConfig> config = policy::ParseConfig(kPolicy, "p", kApps, "a");
  EXPECT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<const policy::Engine>> engine = policy::Engine::Create(*config);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return std::shared_ptr<const policy::Engine>(std::move(*engine));
}

TEST(FilesystemTest, AttachWhileAnotherThreadReloads) {
  std::string source = ::testing::TempDir() + "/filesystem_test.XXXXXX";
  ASSERT_NE(mkdtemp(source.data()), nullptr);
  FilesystemOptions options;
  options.source = source;
  absl::StatusOr<std::unique_ptr<Filesystem>> fs = Filesystem::Create(options, MakeEngine());
  ASSERT_TRUE(fs.ok()) << fs.status();

  std::shared_ptr<const policy::Engine> next = MakeEngine();
  std::thread reloads([&] {
    for (int i = 0; i < 100; ++i) EXPECT_TRUE((*fs)->SetEngine(next).ok());
  });
  (*fs)->Attach(nullptr);  // what main does once the session is mounted; none here
  reloads.join();
  EXPECT_EQ((*fs)->session(), nullptr);
  EXPECT_EQ((*fs)->engine(), next);
  fs->reset();
  rmdir(source.c_str());
}

}  // namespace
}  // namespace scopedfs::daemon
