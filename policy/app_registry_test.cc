// Tests for the app registry: permission bit assignment, registry construction from apps.proto and
// packages.list, and uid identification (multi-user, shared uids, special system uids).
#include "policy/app_registry.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "policy/packages_list.h"
#include "proto/apps.pb.h"
#include "proto/policy.pb.h"

namespace scopedfs::policy {
namespace {

constexpr char kImages[] = "android.permission.READ_MEDIA_IMAGES";
constexpr char kVideo[] = "android.permission.READ_MEDIA_VIDEO";
constexpr char kManage[] = "android.permission.MANAGE_EXTERNAL_STORAGE";

Policy PolicyWithPermissions(const std::vector<std::string>& names) {
  Policy policy;
  for (const std::string& name : names) policy.add_permission()->set_name(name);
  return policy;
}

// Declares kImages (bit 0), kVideo (bit 1), kManage (bit 2).
PermissionIndex StandardPermissions() {
  return PermissionIndex(PolicyWithPermissions({kImages, kVideo, kManage}));
}

scopedfs::AppRegistry ParseApps(const std::string& text) {
  scopedfs::AppRegistry apps;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &apps)) << text;
  return apps;
}

PackagesListEntry ListEntry(const std::string& package, uint32_t uid, uint32_t target_sdk = 0) {
  PackagesListEntry entry;
  entry.package = package;
  entry.uid = uid;
  entry.target_sdk = target_sdk;
  return entry;
}

PermissionSet Bits(std::initializer_list<size_t> bits) {
  PermissionSet set;
  for (size_t bit : bits) set.set(bit);
  return set;
}

// A gallery (10061), a shared uid of two packages (10070), and a platform app with a domain.
constexpr char kApps[] = R"pb(
  app {
    package: "com.example.gallery"
    uid: 10061
    permission: "android.permission.READ_MEDIA_IMAGES"
    target_sdk: 33
  }
  app {
    package: "com.example.shared.b"
    uid: 10070
    permission: "android.permission.READ_MEDIA_VIDEO"
    shared_user: "com.example.shared"
    target_sdk: 30
  }
  app {
    package: "com.example.shared.a"
    uid: 10070
    permission: "android.permission.READ_MEDIA_IMAGES"
    shared_user: "com.example.shared"
    target_sdk: 33
  }
  app {
    package: "com.example.files"
    uid: 10080
    permission: "android.permission.MANAGE_EXTERNAL_STORAGE"
    selinux_domain: "platform_app"
  }
)pb";

AppRegistry StandardRegistry() {
  return AppRegistry::Build(ParseApps(kApps), {}, StandardPermissions());
}

// --- PermissionIndex ---

TEST(PermissionIndexTest, BitsFollowDeclarationOrder) {
  PermissionIndex index = StandardPermissions();
  ASSERT_EQ(index.size(), 3u);
  EXPECT_EQ(index.Find(kImages), 0);
  EXPECT_EQ(index.Find(kVideo), 1);
  EXPECT_EQ(index.Find(kManage), 2);
  EXPECT_EQ(index.Name(0), kImages);
  EXPECT_EQ(index.Name(2), kManage);
}

TEST(PermissionIndexTest, FindUnknownIsMinusOne) {
  PermissionIndex index = StandardPermissions();
  EXPECT_EQ(index.Find("android.permission.CAMERA"), -1);
  EXPECT_EQ(index.Find(""), -1);
}

TEST(PermissionIndexTest, FindIsCaseSensitive) {
  EXPECT_EQ(StandardPermissions().Find("ANDROID.PERMISSION.READ_MEDIA_IMAGES"), -1);
}

TEST(PermissionIndexTest, SetOfIgnoresUnknownNames) {
  PermissionIndex index = StandardPermissions();
  google::protobuf::RepeatedPtrField<std::string> names;
  *names.Add() = kManage;
  *names.Add() = "android.permission.CAMERA";
  *names.Add() = kImages;
  EXPECT_EQ(index.SetOf(names), Bits({0, 2}));
}

TEST(PermissionIndexTest, SetOfEmptyIsEmpty) {
  google::protobuf::RepeatedPtrField<std::string> names;
  EXPECT_TRUE(StandardPermissions().SetOf(names).none());
}

TEST(PermissionIndexTest, DuplicateKeepsFirstBit) {
  PermissionIndex index(PolicyWithPermissions({kImages, kVideo, kImages}));
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.Find(kImages), 0);
}

TEST(PermissionIndexTest, DeclarationsPastTheLimitAreDropped) {
  std::vector<std::string> names;
  for (size_t i = 0; i <= kMaxPermissions; ++i) names.push_back("p" + std::to_string(i));
  PermissionIndex index(PolicyWithPermissions(names));
  EXPECT_EQ(index.size(), kMaxPermissions);
  EXPECT_EQ(index.Find("p127"), 127);
  EXPECT_EQ(index.Find("p128"), -1);
}

// --- Identify: registered apps ---

TEST(IdentifyTest, AppUidGivesPackageAndPermissions) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(10061);
  EXPECT_EQ(caller.uid, 10061u);
  EXPECT_EQ(caller.user_id, 0u);
  EXPECT_EQ(caller.app_id, 10061u);
  EXPECT_EQ(caller.kind, UidKind::kApp);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app->app_id, 10061u);
  EXPECT_EQ(caller.app->packages, std::vector<std::string>{"com.example.gallery"});
  EXPECT_EQ(caller.app->permissions, Bits({0}));
  EXPECT_EQ(caller.app->target_sdk, 33u);
  EXPECT_TRUE(caller.HoldsPackage("com.example.gallery"));
  EXPECT_FALSE(caller.HoldsPackage("com.example.files"));
}

TEST(IdentifyTest, SecondaryUserResolvesToSameApp) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(1010061);
  EXPECT_EQ(caller.uid, 1010061u);
  EXPECT_EQ(caller.user_id, 10u);
  EXPECT_EQ(caller.app_id, 10061u);
  EXPECT_EQ(caller.kind, UidKind::kApp);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app, registry.Identify(10061).app);
}

TEST(IdentifyTest, AppRegisteredUnderSecondaryUserUidCoversUserZero) {
  AppRegistry registry =
      AppRegistry::Build(ParseApps(R"pb(app { package: "com.example.work" uid: 1010090 })pb"), {},
                         StandardPermissions());
  Caller caller = registry.Identify(10090);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app->app_id, 10090u);
  EXPECT_TRUE(caller.HoldsPackage("com.example.work"));
}

TEST(IdentifyTest, SharedUidIsOneRecordWithBothPackages) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(10070);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app->packages,
            (std::vector<std::string>{"com.example.shared.a", "com.example.shared.b"}));
  EXPECT_EQ(caller.app->shared_user, "com.example.shared");
  EXPECT_TRUE(caller.HoldsPackage("com.example.shared.a"));
  EXPECT_TRUE(caller.HoldsPackage("com.example.shared.b"));
  EXPECT_EQ(registry.FindPackage("com.example.shared.a"),
            registry.FindPackage("com.example.shared.b"));
}

TEST(IdentifyTest, SharedUidGetsUnionOfPermissions) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(10070);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app->permissions, Bits({0, 1}));
}

TEST(IdentifyTest, SharedUidTakesHighestTargetSdk) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(10070);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app->target_sdk, 33u);
}

TEST(IdentifyTest, AppCountCountsAppIdsNotPackages) {
  EXPECT_EQ(StandardRegistry().app_count(), 3u);
}

TEST(IdentifyTest, UnregisteredAppUidHasNoApp) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(10099);
  EXPECT_EQ(caller.kind, UidKind::kApp);
  EXPECT_EQ(caller.app, nullptr);
  EXPECT_FALSE(caller.HoldsPackage("com.example.gallery"));
}

// --- Identify: uid kinds ---

struct KindCase {
  uint32_t uid;
  UidKind kind;
};

class UidKindTest : public testing::TestWithParam<KindCase> {};

TEST_P(UidKindTest, ClassifiesUid) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(GetParam().uid);
  EXPECT_EQ(UidKindName(caller.kind), UidKindName(GetParam().kind)) << "uid " << GetParam().uid;
}

INSTANTIATE_TEST_SUITE_P(
    SpecialUids, UidKindTest,
    testing::Values(KindCase{0, UidKind::kRoot}, KindCase{1000, UidKind::kSystem},
                    KindCase{2000, UidKind::kShell}, KindCase{1013, UidKind::kMedia},
                    KindCase{1023, UidKind::kMedia},
                    // User 10's uids start at 10 * 100000 = 1000000.
                    KindCase{1000000, UidKind::kRoot}, KindCase{1000000 + 1000, UidKind::kSystem},
                    KindCase{1000000 + 2000, UidKind::kShell},
                    KindCase{1000000 + 1013, UidKind::kMedia},
                    // 1011000 is user 10's app id 11000, an app, not a system uid.
                    KindCase{1011000, UidKind::kApp}, KindCase{5000, UidKind::kOtherSystem},
                    KindCase{1, UidKind::kOtherSystem}, KindCase{9999, UidKind::kOtherSystem},
                    KindCase{10000, UidKind::kApp}, KindCase{19999, UidKind::kApp},
                    KindCase{1019999, UidKind::kApp}, KindCase{20000, UidKind::kOther},
                    KindCase{99000, UidKind::kOther}, KindCase{99999, UidKind::kOther}));

TEST(UidKindNameTest, NamesEveryKind) {
  EXPECT_EQ(UidKindName(UidKind::kRoot), "root");
  EXPECT_EQ(UidKindName(UidKind::kSystem), "system");
  EXPECT_EQ(UidKindName(UidKind::kShell), "shell");
  EXPECT_EQ(UidKindName(UidKind::kMedia), "media");
  EXPECT_EQ(UidKindName(UidKind::kOtherSystem), "system service");
  EXPECT_EQ(UidKindName(UidKind::kApp), "app");
  EXPECT_EQ(UidKindName(UidKind::kOther), "other");
}

TEST(IdentifyTest, UserAndAppIdSplit) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(1234567);
  EXPECT_EQ(caller.user_id, 12u);
  EXPECT_EQ(caller.app_id, 34567u);
  EXPECT_EQ(UserIdOf(1234567), 12u);
  EXPECT_EQ(AppIdOf(1234567), 34567u);
}

// --- packages.list ---

TEST(PackagesListTest, EntryAddsPackageWithoutPermissions) {
  AppRegistry registry = AppRegistry::Build(
      ParseApps(kApps), {ListEntry("com.example.music", 10090, 31)}, StandardPermissions());
  Caller caller = registry.Identify(10090);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app->packages, std::vector<std::string>{"com.example.music"});
  EXPECT_TRUE(caller.app->permissions.none());
  EXPECT_EQ(caller.app->target_sdk, 31u);
  EXPECT_EQ(caller.app->selinux_domain, "untrusted_app");
}

TEST(PackagesListTest, AppsEntryWinsForSamePackage) {
  // packages.list names the gallery with a different uid; the apps entry (10061) stands.
  AppRegistry registry = AppRegistry::Build(
      ParseApps(kApps), {ListEntry("com.example.gallery", 10095, 21)}, StandardPermissions());
  EXPECT_EQ(registry.Identify(10095).app, nullptr);
  const AppRecord* record = registry.FindPackage("com.example.gallery");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->app_id, 10061u);
  EXPECT_EQ(record->permissions, Bits({0}));
  EXPECT_EQ(record->packages, std::vector<std::string>{"com.example.gallery"});
}

TEST(PackagesListTest, EntryJoinsSharedUidOfRegisteredApp) {
  AppRegistry registry = AppRegistry::Build(
      ParseApps(kApps), {ListEntry("com.example.gallery.helper", 10061)}, StandardPermissions());
  Caller caller = registry.Identify(10061);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app->packages,
            (std::vector<std::string>{"com.example.gallery", "com.example.gallery.helper"}));
  EXPECT_EQ(caller.app->permissions, Bits({0}));
}

TEST(PackagesListTest, FirstListEntryForPackageWins) {
  AppRegistry registry = AppRegistry::Build(
      {}, {ListEntry("com.example.music", 10090), ListEntry("com.example.music", 10091)},
      StandardPermissions());
  EXPECT_NE(registry.Identify(10090).app, nullptr);
  EXPECT_EQ(registry.Identify(10091).app, nullptr);
  EXPECT_EQ(registry.app_count(), 1u);
}

// --- Build details ---

TEST(BuildTest, SelinuxDomainDefaultsToUntrustedApp) {
  AppRegistry registry = StandardRegistry();
  const AppRecord* record = registry.FindPackage("com.example.gallery");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->selinux_domain, "untrusted_app");
}

TEST(BuildTest, ConfiguredSelinuxDomainIsKept) {
  AppRegistry registry = StandardRegistry();
  const AppRecord* record = registry.FindPackage("com.example.files");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->selinux_domain, "platform_app");
}

TEST(BuildTest, UndeclaredPermissionsAreIgnored) {
  AppRegistry registry =
      AppRegistry::Build(ParseApps(R"pb(app {
                                          package: "com.example.cam"
                                          uid: 10050
                                          permission: "android.permission.CAMERA"
                                          permission: "android.permission.READ_MEDIA_VIDEO"
                                        })pb"),
                         {}, StandardPermissions());
  const AppRecord* record = registry.FindPackage("com.example.cam");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->permissions, Bits({1}));
}

TEST(BuildTest, EmptyRegistryKnowsNobody) {
  AppRegistry registry = AppRegistry::Build({}, {}, StandardPermissions());
  EXPECT_EQ(registry.app_count(), 0u);
  EXPECT_EQ(registry.Identify(10061).app, nullptr);
  EXPECT_EQ(registry.FindPackage("com.example.gallery"), nullptr);
}

TEST(BuildTest, RecordsSurviveMovingTheRegistry) {
  AppRegistry registry = StandardRegistry();
  const AppRecord* before = registry.FindPackage("com.example.gallery");
  AppRegistry moved = std::move(registry);
  Caller caller = moved.Identify(10061);
  ASSERT_NE(caller.app, nullptr);
  EXPECT_EQ(caller.app, before);
  EXPECT_EQ(caller.app->packages, std::vector<std::string>{"com.example.gallery"});
}

// --- FindPackage / HoldsPackage ---

TEST(FindPackageTest, FindsRegisteredPackage) {
  AppRegistry registry = StandardRegistry();
  const AppRecord* record = registry.FindPackage("com.example.files");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->app_id, 10080u);
  EXPECT_EQ(record->permissions, Bits({2}));
}

TEST(FindPackageTest, UnknownPackageIsNull) {
  EXPECT_EQ(StandardRegistry().FindPackage("com.example.nothere"), nullptr);
}

TEST(HoldsPackageTest, IsCaseInsensitive) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(10061);
  EXPECT_TRUE(caller.HoldsPackage("COM.EXAMPLE.GALLERY"));
  EXPECT_TRUE(caller.HoldsPackage("Com.Example.Gallery"));
}

TEST(HoldsPackageTest, NeedsWholeName) {
  AppRegistry registry = StandardRegistry();
  Caller caller = registry.Identify(10061);
  EXPECT_FALSE(caller.HoldsPackage("com.example"));
  EXPECT_FALSE(caller.HoldsPackage("com.example.gallery2"));
  EXPECT_FALSE(caller.HoldsPackage(""));
}

TEST(HoldsPackageTest, CallerWithoutAppHoldsNothing) {
  Caller caller;
  EXPECT_FALSE(caller.HoldsPackage(""));
  EXPECT_FALSE(caller.HoldsPackage("android"));
}

}  // namespace
}  // namespace scopedfs::policy
