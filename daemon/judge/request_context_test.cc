// RequestContext without a mount: the SELinux domain comes from the kernel (an injected source)
// when SELinux is enabled, a caller without a readable context is refused, other readers are
// judged in their configured domains, and a context keeps the engine it was built with.
#include "daemon/judge/request_context.h"

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

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
constexpr char kDenyAll[] = R"pb(
  name: "nothing"
  default_action { outcome: OUTCOME_DENY }
)pb";

std::shared_ptr<const policy::Engine> MakeEngine(const char* policy) {
  absl::StatusOr<policy::LoadedConfig> config = policy::ParseConfig(policy, "p", kApps, "a");
  EXPECT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<const policy::Engine>> engine = policy::Engine::Create(*config);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return std::shared_ptr<const policy::Engine>(std::move(*engine));
}

Outcome Read(const RequestContext& ctx) {
  FileInfo info;
  return ctx.Decide(OP_READ, "Download/x.txt", false, &info).outcome;
}

TEST(RequestContextTest, EnabledSelinuxUsesTheKernelDomain) {
  FakeContexts contexts(/*enabled=*/true);
  contexts.contexts_[42] = "u:r:platform_app:s0:c512,c768";
  contexts.contexts_[43] = "u:r:untrusted_app:s0:c512,c768";
  auto engine = MakeEngine(kPolicy);
  // The plain app is configured as untrusted_app, but the kernel says platform_app: kernel wins.
  EXPECT_EQ(Read(RequestContext(10101, 42, engine, 0, &contexts)), OUTCOME_ALLOW);
  // And the other way round.
  EXPECT_EQ(Read(RequestContext(10100, 43, engine, 0, &contexts)), OUTCOME_HIDE);
}

TEST(RequestContextTest, UnreadableContextIsRefused) {
  FakeContexts contexts(/*enabled=*/true);
  EXPECT_EQ(Read(RequestContext(10100, 999, MakeEngine(kPolicy), 0, &contexts)), OUTCOME_DENY);
}

TEST(RequestContextTest, DisabledSelinuxUsesTheConfiguredDomain) {
  FakeContexts contexts(/*enabled=*/false);
  contexts.contexts_[42] = "u:r:untrusted_app:s0";
  auto engine = MakeEngine(kPolicy);
  EXPECT_EQ(Read(RequestContext(10100, 42, engine, 0, &contexts)), OUTCOME_ALLOW);
  EXPECT_EQ(Read(RequestContext(10101, 42, engine, 0, &contexts)), OUTCOME_HIDE);
}

TEST(RequestContextTest, OtherReadersAreJudgedInTheirConfiguredDomains) {
  FakeContexts contexts(/*enabled=*/true);
  contexts.contexts_[42] = "u:r:untrusted_app:s0";
  RequestContext caller(10101, 42, MakeEngine(kPolicy), 0, &contexts);
  // The caller's pid says nothing about another app: the platform app is judged as configured.
  EXPECT_EQ(Read(caller.ForReader(10100)), OUTCOME_ALLOW);
  EXPECT_EQ(Read(caller.ForReader(10101)), OUTCOME_HIDE);
}

TEST(RequestContextTest, OneEngineSnapshotPerRequest) {
  std::shared_ptr<const policy::Engine> engine = MakeEngine(kPolicy);
  RequestContext ctx(10100, 1, engine, 0, nullptr);
  engine = MakeEngine(kDenyAll);  // a reload while the request runs
  EXPECT_EQ(Read(ctx), OUTCOME_ALLOW);
  EXPECT_EQ(Read(RequestContext(10100, 1, engine, 0, nullptr)), OUTCOME_DENY);
}

TEST(RequestContextTest, NoEngineRefusesEverything) {
  RequestContext ctx(10100, 1, nullptr, 0, nullptr);
  EXPECT_EQ(Read(ctx), OUTCOME_DENY);
  EXPECT_TRUE(ctx.IsApp());
}

class AuditedContextTest : public ::testing::Test {
 protected:
  AuditedContextTest() : log_(Options()) {}
  AuditLog::Options Options() {
    AuditLog::Options o;
    o.write_for_test = [this](absl::string_view line) { lines_.emplace_back(line); };
    return o;
  }
  std::vector<std::string> lines_;
  AuditLog log_;
};

TEST_F(AuditedContextTest, ARefusalTheRequestFailsWithIsOneLine) {
  RequestContext ctx(10101, 7, MakeEngine(kPolicy), 0, nullptr, &log_);
  EXPECT_EQ(Read(ctx), OUTCOME_HIDE);
  EXPECT_EQ(ctx.Audited(ENOENT), ENOENT);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0],
            "scopedfs: denied { read } uid=10101 pid=7 pkg=com.example.plain "
            "path=\"Download/x.txt\" tclass=file media=none location=absent owner=none "
            "rule=\"<default>\" errno=ENOENT");
}

TEST_F(AuditedContextTest, SuccessAMissingNameAndASupersededRefusalAreNotLogged) {
  RequestContext ctx(10100, 7, MakeEngine(kPolicy), 0, nullptr, &log_);
  EXPECT_EQ(ctx.Audited(ENOENT), ENOENT);  // failed before any decision: the name is missing
  EXPECT_EQ(Read(ctx), OUTCOME_ALLOW);
  EXPECT_EQ(ctx.Audited(0), 0);
  EXPECT_EQ(ctx.Audited(EIO), EIO);  // a lower error after a permit
  RequestContext plain(10101, 7, MakeEngine(kPolicy), 0, nullptr, &log_);
  EXPECT_EQ(Read(plain), OUTCOME_HIDE);
  EXPECT_EQ(plain.Audited(0), 0);  // refused, yet the request succeeded (a readdir skipping it)
  EXPECT_TRUE(lines_.empty());
}

TEST_F(AuditedContextTest, OtherReadersAreNeverLogged) {
  RequestContext ctx(10100, 7, MakeEngine(kPolicy), 0, nullptr, &log_);
  RequestContext reader = ctx.ForReader(10101);
  EXPECT_EQ(Read(reader), OUTCOME_HIDE);
  EXPECT_EQ(reader.Audited(EXDEV), EXDEV);
  EXPECT_TRUE(lines_.empty());
}

TEST(RequestContextTest, AppsAreTheAppAndUnknownUids) {
  auto engine = MakeEngine(kPolicy);
  EXPECT_TRUE(RequestContext(10100, 1, engine, 0, nullptr).IsApp());
  EXPECT_TRUE(RequestContext(10999, 1, engine, 0, nullptr).IsApp());
  EXPECT_FALSE(RequestContext(0, 1, engine, 0, nullptr).IsApp());
  EXPECT_FALSE(RequestContext(1000, 1, engine, 0, nullptr).IsApp());
}

// Listing viewer keys: equal for requests shown alike, and told apart by snapshot.
TEST(RequestContextTest, ListingViewersAreKeyedByCallerAndSnapshot) {
  FakeContexts contexts(/*enabled=*/false);
  auto engine = MakeEngine(kPolicy);
  auto next = MakeEngine(kPolicy);  // a reload: another snapshot of the same rules
  RequestContext platform(10100, 42, engine, 0, &contexts);
  RequestContext plain(10101, 43, engine, 0, &contexts);
  RequestContext reloaded(10100, 42, next, 0, &contexts);
  EXPECT_EQ(platform.ListingViewer(),
            RequestContext(10100, 44, engine, 0, &contexts).ListingViewer());
  EXPECT_NE(platform.ListingViewer(), plain.ListingViewer());
  EXPECT_NE(platform.ListingViewer(), reloaded.ListingViewer());
  EXPECT_EQ(platform.EveryCallerViewer(), plain.EveryCallerViewer());
  EXPECT_NE(platform.EveryCallerViewer(), reloaded.EveryCallerViewer());
  EXPECT_NE(platform.EveryCallerViewer(), platform.ListingViewer());
  for (const std::string& key : {plain.ListingViewer(), plain.EveryCallerViewer()}) {
    EXPECT_TRUE(platform.OfThisSnapshot(key)) << key;
    EXPECT_FALSE(reloaded.OfThisSnapshot(key)) << key;
  }
  EXPECT_FALSE(platform.OfThisSnapshot(""));
}

// --- The device layout ------------------------------------------------------------------------

TEST(PlaceNodePathTest, UserDirectoriesAreStoragesAndOtherNamesAreOutside) {
  using Kind = Placement::Kind;
  Placement p = PlaceNodePath(true, 0, "10/DCIM/a.jpg");
  EXPECT_EQ(p.kind, Kind::kStorage);
  EXPECT_EQ(p.user, 10u);
  EXPECT_EQ(p.path, "DCIM/a.jpg");
  EXPECT_FALSE(p.storage_root_in_mount_root);
  p = PlaceNodePath(true, 0, "0");
  EXPECT_EQ(p.kind, Kind::kStorage);
  EXPECT_EQ(p.user, 0u);
  EXPECT_EQ(p.path, "");
  EXPECT_TRUE(p.storage_root_in_mount_root);
  EXPECT_EQ(PlaceNodePath(true, 0, "").kind, Kind::kMountRoot);
  // Only canonical user ids, whose uids fit: no leading zero, sign, space or overflow.
  for (const char* outside : {"obb", "obb/x", "00", "01/DCIM", "+1", "-1", " 1", "1a", "42949",
                              "99999999999", "lost+found"}) {
    EXPECT_EQ(PlaceNodePath(true, 0, outside).kind, Kind::kOutside) << outside;
  }
  EXPECT_EQ(PlaceNodePath(true, 0, "42948/x").user, kMaxStorageUser);
  // Without the device layout every path is --user_id's storage, as it is.
  p = PlaceNodePath(false, 10, "0/DCIM");
  EXPECT_EQ(p.kind, Kind::kStorage);
  EXPECT_EQ(p.user, 10u);
  EXPECT_EQ(p.path, "0/DCIM");
}

constexpr char kUsers[] = R"pb(
  name: "users"
  semantics: SEMANTICS_ANDROID
  layout { top_level_dir: "Download" }
  rule {
    name: "privileged"
    app { app_id { first: 0 } }
    action { outcome: OUTCOME_ALLOW }
  }
  rule {
    name: "other-users-hidden"
    app { cross_user: TRISTATE_TRUE }
    action { outcome: OUTCOME_HIDE }
  }
  rule {
    name: "everything-else"
    action { outcome: OUTCOME_ALLOW }
  }
)pb";

Outcome Decide(const RequestContext& ctx, Op op, absl::string_view path) {
  return ctx.Decide(op, path, false, nullptr).outcome;
}

TEST(RequestContextTest, DeviceLayoutJudgesEachUsersPathsForThatUser) {
  auto engine = MakeEngine(kUsers);
  RequestContext user0(10101, 1, engine, 0, nullptr, nullptr, /*device_layout=*/true);
  RequestContext user10(1010101, 1, engine, 0, nullptr, nullptr, /*device_layout=*/true);
  RequestContext root(0, 1, engine, 0, nullptr, nullptr, /*device_layout=*/true);
  EXPECT_EQ(Decide(user0, OP_CREATE, "0/Download/z.txt"), OUTCOME_ALLOW);
  EXPECT_EQ(Decide(user0, OP_READ, "10/Download/z.txt"), OUTCOME_HIDE);  // cross-user
  EXPECT_EQ(Decide(user0, OP_LOOKUP, "10"), OUTCOME_HIDE);
  EXPECT_EQ(Decide(user10, OP_READ, "10/Download/z.txt"), OUTCOME_ALLOW);
  EXPECT_EQ(Decide(user10, OP_LOOKUP, "0"), OUTCOME_HIDE);
  // The mount root: listed by all, changed by no app; names beside the storages hidden.
  EXPECT_EQ(Decide(user0, OP_LOOKUP, ""), OUTCOME_ALLOW);
  EXPECT_EQ(Decide(user0, OP_READ, ""), OUTCOME_ALLOW);
  EXPECT_EQ(Decide(user0, OP_SETATTR, ""), OUTCOME_DENY);
  for (const char* name : {"0", "10", "11", "obb", "x.txt"}) {
    EXPECT_EQ(Decide(user0, OP_MKDIR, name), OUTCOME_DENY) << name;
    EXPECT_EQ(Decide(user0, OP_CREATE, name), OUTCOME_DENY) << name;
  }
  EXPECT_EQ(Decide(user0, OP_LOOKUP, "obb"), OUTCOME_HIDE);
  // Answered before the lower tree is looked at: another user's storage, names outside any.
  EXPECT_TRUE(user0.HiddenWhateverIsThere("10/Download/z.txt"));
  EXPECT_TRUE(user0.HiddenWhateverIsThere("obb"));
  EXPECT_FALSE(user0.HiddenWhateverIsThere("0/Download/z.txt"));
  EXPECT_FALSE(root.HiddenWhateverIsThere("obb"));
  EXPECT_EQ(Decide(user0, OP_READ, "obb/main.obb"), OUTCOME_HIDE);
  EXPECT_EQ(Decide(root, OP_READ, "obb/main.obb"), OUTCOME_ALLOW);
  EXPECT_EQ(Decide(root, OP_MKDIR, "11"), OUTCOME_ALLOW);
  // Without the layout "0" is a top-level folder of --user_id's storage.
  RequestContext plain(10101, 1, engine, 0, nullptr);
  EXPECT_EQ(Decide(plain, OP_READ, "10/Download/z.txt"), OUTCOME_ALLOW);
  // Moves stay in one storage.
  EXPECT_TRUE(user0.SameStorage("0/Download/a", "0/Download/b"));
  EXPECT_FALSE(user0.SameStorage("0/Download/a", "10/Download/a"));
  EXPECT_FALSE(user0.SameStorage("0", "11"));
  EXPECT_FALSE(user0.SameStorage("obb/a", "0/Download/a"));
  EXPECT_TRUE(plain.SameStorage("0/Download/a", "10/Download/a"));
  EXPECT_EQ(user0.StorageUserOf("10/Download"), 10u);
  EXPECT_EQ(user10.StorageUserOf("obb"), 10u);
  EXPECT_TRUE(user0.OfAnotherUser("10/Download"));
  EXPECT_FALSE(user0.OfAnotherUser("0/Download"));
  EXPECT_FALSE(user0.OfAnotherUser(""));
  EXPECT_FALSE(user0.CallerIndependent());
}

}  // namespace
}  // namespace scopedfs::daemon
