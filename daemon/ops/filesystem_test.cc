// Filesystem without a mount: what its threads share. The daemon attaches its FUSE session after
// the control socket's and the configuration watch's threads have started, and those threads
// replace the policy (SetEngine), which reads the session; this test does both at once, so
// ThreadSanitizer (--config=tsan) reports the attachment if it is not synchronised.
#include "daemon/ops/filesystem.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
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

// A policy whose decisions depend on the caller (not Engine::caller_independent).
constexpr char kPerCallerPolicy[] = R"pb(
  name: "per-caller"
  default_action { outcome: OUTCOME_HIDE }
  rule {
    name: "a-only"
    app { package: "com.example.a" }
    action { outcome: OUTCOME_ALLOW }
  }
)pb";

// A policy that may give a caller a redacted view of a file (a second kernel inode).
constexpr char kRedactingPolicy[] = R"pb(
  name: "redacting"
  default_action { outcome: OUTCOME_ALLOW_REDACTED redact: REDACTION_EXIF_GPS }
)pb";

std::shared_ptr<const policy::Engine> MakeEngine(const char* policy = kPolicy) {
  absl::StatusOr<policy::LoadedConfig> config = policy::ParseConfig(policy, "p", kApps, "a");
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

// The pin of caller-independent listings (OPENDIR answered ENOSYS, ops_dir.cc) is taken only under
// such a policy, and from then on a reload to a per-caller policy is refused and the old policy
// stays; before it, such a reload is accepted. A reload racing the pins never slips past one.
TEST(FilesystemTest, PinnedListingsRefuseAPerCallerPolicy) {
  std::string source = ::testing::TempDir() + "/filesystem_test.XXXXXX";
  ASSERT_NE(mkdtemp(source.data()), nullptr);
  FilesystemOptions options;
  options.source = source;
  std::shared_ptr<const policy::Engine> everyone = MakeEngine();
  std::shared_ptr<const policy::Engine> per_caller = MakeEngine(kPerCallerPolicy);
  ASSERT_TRUE(everyone->caller_independent());
  ASSERT_FALSE(per_caller->caller_independent());
  absl::StatusOr<std::unique_ptr<Filesystem>> fs = Filesystem::Create(options, per_caller);
  ASSERT_TRUE(fs.ok()) << fs.status();
  Filesystem& f = **fs;

  EXPECT_FALSE(f.PinListings());  // per-caller listings: OPENDIR answered as always
  EXPECT_FALSE(f.listings_pinned());
  ASSERT_TRUE(f.SetEngine(everyone).ok());
  ASSERT_TRUE(f.SetEngine(per_caller).ok());  // nothing pinned yet
  ASSERT_TRUE(f.SetEngine(everyone).ok());

  // Reloads back and forth race the pins: once a pin is granted, the per-caller policy is never
  // in force again.
  std::atomic<bool> pinned{false};
  std::atomic<bool> slipped{false};
  std::thread reloads([&] {
    for (int i = 0; i < 200; ++i) {
      bool was_pinned = pinned.load();
      absl::Status set = f.SetEngine(i % 2 == 0 ? per_caller : everyone);
      if (i % 2 == 0 && was_pinned && set.ok()) slipped = true;
    }
  });
  for (int i = 0; i < 200 && !pinned.load(); ++i) {
    if (f.PinListings()) {
      pinned = true;
      if (!f.engine()->caller_independent()) slipped = true;
    }
  }
  reloads.join();
  EXPECT_FALSE(slipped.load());
  if (!pinned.load()) {
    ASSERT_TRUE(f.SetEngine(everyone).ok());
    ASSERT_TRUE(f.PinListings());
  }
  EXPECT_TRUE(f.listings_pinned());

  absl::Status refused = f.SetEngine(per_caller);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("pinned to caller-independent listings"), std::string::npos)
      << refused;
  EXPECT_TRUE(f.engine()->caller_independent());
  EXPECT_TRUE(f.SetEngine(MakeEngine()).ok());  // another caller-independent policy is fine
  fs->reset();
  rmdir(source.c_str());
}

// --posix_locks=kernel leaves locks to the kernel, per kernel inode: a reload to a policy that may
// give a caller a redacted view (a second inode of the same file) is refused, and the policy in
// force stays; without the option it is accepted.
TEST(FilesystemTest, KernelLocksRefuseAPolicyWithTwoViews) {
  std::string source = ::testing::TempDir() + "/filesystem_test.XXXXXX";
  ASSERT_NE(mkdtemp(source.data()), nullptr);
  std::shared_ptr<const policy::Engine> everyone = MakeEngine();
  std::shared_ptr<const policy::Engine> redacting = MakeEngine(kRedactingPolicy);
  ASSERT_FALSE(MayShowTwoViews(*everyone));
  ASSERT_TRUE(MayShowTwoViews(*redacting));
  for (bool kernel_locks : {true, false}) {
    FilesystemOptions options;
    options.source = source;
    options.kernel_posix_locks = kernel_locks;
    absl::StatusOr<std::unique_ptr<Filesystem>> fs = Filesystem::Create(options, everyone);
    ASSERT_TRUE(fs.ok()) << fs.status();
    absl::Status set = (*fs)->SetEngine(redacting);
    EXPECT_EQ(set.ok(), !kernel_locks) << set;
    EXPECT_EQ((*fs)->engine(), kernel_locks ? everyone : redacting);
  }
  rmdir(source.c_str());
}

}  // namespace
}  // namespace scopedfs::daemon
