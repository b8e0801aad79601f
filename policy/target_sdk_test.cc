// Target SDKs as Android models them, under the shipped Android policy: which permission counts
// depends on the app's target SDK (Policy.target_sdk_permission: READ_MEDIA_* from 33 on,
// READ_EXTERNAL_STORAGE below), and Android 14's partial access lets
// READ_MEDIA_VISUAL_USER_SELECTED read only the media the user picked (App.user_selected). Also the
// loader's checks of both.
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "media/content_facts.h"
#include "policy/config.h"
#include "policy/engine.h"

namespace scopedfs::policy {
namespace {

constexpr uint32_t kCamera = 10065;  // apps.textproto: the owner of the photos below

// Test apps, one per case; each targets the SDK its name says.
constexpr char kApps[] = R"pb(
  app { package: "com.example.camera" uid: 10065 target_sdk: 34 }
  app {
    package: "com.test.sdk33.res"
    uid: 10101
    target_sdk: 33
    permission: "android.permission.READ_EXTERNAL_STORAGE"
  }
  app {
    package: "com.test.sdk33.images"
    uid: 10102
    target_sdk: 33
    permission: "android.permission.READ_MEDIA_IMAGES"
  }
  app {
    package: "com.test.sdk29.res"
    uid: 10103
    target_sdk: 29
    permission: "android.permission.READ_EXTERNAL_STORAGE"
  }
  app {
    package: "com.test.sdk29.images"
    uid: 10104
    target_sdk: 29
    permission: "android.permission.READ_MEDIA_IMAGES"
  }
  app {
    package: "com.test.unknown.res"
    uid: 10105
    permission: "android.permission.READ_EXTERNAL_STORAGE"
  }
  app {
    package: "com.test.sdk34.picked"
    uid: 10106
    target_sdk: 34
    permission: "android.permission.READ_MEDIA_VISUAL_USER_SELECTED"
    user_selected: "DCIM/Camera/picked.jpg"
    user_selected: "Movies/picked.mp4"
    user_selected: "Download/picked.pdf"
  }
  app {
    package: "com.test.sdk34.picked.location"
    uid: 10107
    target_sdk: 34
    permission: "android.permission.READ_MEDIA_VISUAL_USER_SELECTED"
    permission: "android.permission.ACCESS_MEDIA_LOCATION"
    user_selected: "DCIM/Camera/picked.jpg"
  }
  app {
    package: "com.test.sdk32.picked"
    uid: 10108
    target_sdk: 32
    permission: "android.permission.READ_MEDIA_VISUAL_USER_SELECTED"
    user_selected: "DCIM/Camera/picked.jpg"
  }
  app {
    package: "com.test.sdk34.pickedandimages"
    uid: 10109
    target_sdk: 34
    permission: "android.permission.READ_MEDIA_VISUAL_USER_SELECTED"
    permission: "android.permission.READ_MEDIA_IMAGES"
    user_selected: "DCIM/Camera/picked.jpg"
  }
)pb";
constexpr uint32_t kSdk33Res = 10101;
constexpr uint32_t kSdk33Images = 10102;
constexpr uint32_t kSdk29Res = 10103;
constexpr uint32_t kSdk29Images = 10104;
constexpr uint32_t kUnknownSdkRes = 10105;
constexpr uint32_t kPicked = 10106;
constexpr uint32_t kPickedWithLocation = 10107;
constexpr uint32_t kSdk32Picked = 10108;
constexpr uint32_t kPickedAndImages = 10109;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

absl::StatusOr<LoadedConfig> Load(const std::string& policy, absl::string_view apps,
                                  absl::string_view packages_list = "") {
  return ParseConfig(ReadFile(policy), policy, apps, "apps.textproto", packages_list,
                     packages_list.empty() ? "" : "packages.list");
}

class TargetSdkTest : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    absl::StatusOr<LoadedConfig> config = Load(GetParam(), kApps);
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<std::unique_ptr<const Engine>> engine = Engine::Create(*config);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // `op` by `uid` on another app's (the camera's) file at `path`, its content sniffed from the
  // name, with or without location.
  Decision Decide(uint32_t uid, Op op, const char* path, bool located = false) const {
    absl::string_view p(path);
    media::ContentFacts facts = media::FactsFromName(p.substr(p.rfind('/') + 1));
    facts.content_known = true;
    facts.location = located ? media::LocationPresence::kPresent : media::LocationPresence::kAbsent;
    Request r;
    r.uid = uid;
    r.op = op;
    r.path = path;
    r.content = &facts;
    r.owner_uid = kCamera;
    return engine_->Decide(r);
  }

  std::unique_ptr<const Engine> engine_;
};

INSTANTIATE_TEST_SUITE_P(ShippedAndroidPolicies, TargetSdkTest,
                         testing::Values("policy/configs/android.textproto",
                                         "policy/configs/android-strict.textproto"));

TEST_P(TargetSdkTest, Sdk33AppWithOnlyReadExternalStorageSeesNoOtherAppsPhotos) {
  for (Op op : {OP_LOOKUP, OP_READ}) {
    Decision d = Decide(kSdk33Res, op, "DCIM/Camera/IMG_1.jpg");
    EXPECT_NE(d.outcome, OUTCOME_ALLOW) << Op_Name(op) << " by rule " << d.rule_name;
    EXPECT_NE(d.outcome, OUTCOME_ALLOW_REDACTED) << Op_Name(op) << " by rule " << d.rule_name;
  }
  EXPECT_EQ(Decide(kSdk33Res, OP_LOOKUP, "DCIM/Camera/IMG_1.jpg").outcome, OUTCOME_HIDE);
  // Nor, with location, a redacted copy; nor video or audio.
  EXPECT_EQ(Decide(kSdk33Res, OP_LOOKUP, "DCIM/Camera/IMG_1.jpg", true).outcome, OUTCOME_HIDE);
  EXPECT_EQ(Decide(kSdk33Res, OP_LOOKUP, "Movies/clip.mp4").outcome, OUTCOME_HIDE);
  EXPECT_EQ(Decide(kSdk33Res, OP_LOOKUP, "Music/song.mp3").outcome, OUTCOME_HIDE);
}

TEST_P(TargetSdkTest, Sdk33AppWithReadMediaImagesSeesThem) {
  Decision d = Decide(kSdk33Images, OP_READ, "DCIM/Camera/IMG_1.jpg");
  EXPECT_EQ(d.outcome, OUTCOME_ALLOW);
  EXPECT_EQ(std::string(d.rule_name), "read-images");
  EXPECT_EQ(Decide(kSdk33Images, OP_READ, "DCIM/Camera/IMG_1.jpg", true).outcome,
            OUTCOME_ALLOW_REDACTED);
  EXPECT_EQ(Decide(kSdk33Images, OP_LOOKUP, "Movies/clip.mp4").outcome, OUTCOME_HIDE);
}

TEST_P(TargetSdkTest, Sdk29AppWithReadExternalStorageSeesAllMedia) {
  Decision d = Decide(kSdk29Res, OP_READ, "DCIM/Camera/IMG_1.jpg");
  EXPECT_EQ(d.outcome, OUTCOME_ALLOW);
  EXPECT_EQ(std::string(d.rule_name), "read-images");
  EXPECT_EQ(Decide(kSdk29Res, OP_READ, "DCIM/Camera/IMG_1.jpg", true).outcome,
            OUTCOME_ALLOW_REDACTED);
  EXPECT_EQ(Decide(kSdk29Res, OP_READ, "Movies/clip.mp4").outcome, OUTCOME_ALLOW);
  EXPECT_EQ(Decide(kSdk29Res, OP_READ, "Music/song.mp3").outcome, OUTCOME_ALLOW);
  // Not the non-media files: READ_EXTERNAL_STORAGE is a media grant under scoped storage.
  EXPECT_EQ(Decide(kSdk29Res, OP_LOOKUP, "Download/notes.pdf").outcome, OUTCOME_HIDE);
}

// MediaProvider asks an app targeting below 33 for READ_EXTERNAL_STORAGE, whatever else it holds.
TEST_P(TargetSdkTest, Sdk29AppWithOnlyReadMediaImagesSeesNone) {
  EXPECT_EQ(Decide(kSdk29Images, OP_LOOKUP, "DCIM/Camera/IMG_1.jpg").outcome, OUTCOME_HIDE);
}

// An app whose target SDK nobody told us counts as targeting the newest: no legacy grant.
TEST_P(TargetSdkTest, UnknownTargetSdkGetsNoLegacyGrant) {
  EXPECT_EQ(Decide(kUnknownSdkRes, OP_LOOKUP, "DCIM/Camera/IMG_1.jpg").outcome, OUTCOME_HIDE);
}

TEST_P(TargetSdkTest, PartialAccessReadsOnlyWhatTheUserPicked) {
  Decision picked = Decide(kPicked, OP_READ, "DCIM/Camera/picked.jpg");
  EXPECT_EQ(picked.outcome, OUTCOME_ALLOW);
  EXPECT_EQ(std::string(picked.rule_name), "read-user-selected");
  EXPECT_EQ(Decide(kPicked, OP_READ, "Movies/picked.mp4").outcome, OUTCOME_ALLOW);
  // Matched as names are on Android's casefolded storage.
  EXPECT_EQ(Decide(kPicked, OP_READ, "dcim/camera/PICKED.JPG").outcome, OUTCOME_ALLOW);
  // Every other photo stays hidden, and the grant covers images and video only.
  EXPECT_EQ(Decide(kPicked, OP_LOOKUP, "DCIM/Camera/IMG_1.jpg").outcome, OUTCOME_HIDE);
  EXPECT_EQ(Decide(kPicked, OP_LOOKUP, "Download/picked.pdf").outcome, OUTCOME_HIDE);
  // Read-only, and location filled without ACCESS_MEDIA_LOCATION.
  Decision write = Decide(kPicked, OP_WRITE, "DCIM/Camera/picked.jpg");
  EXPECT_EQ(write.outcome, OUTCOME_DENY);
  EXPECT_EQ(write.error, ERRNO_EACCES);
  EXPECT_EQ(std::string(write.rule_name), "user-selected-read-only");
  Decision located = Decide(kPicked, OP_READ, "DCIM/Camera/picked.jpg", true);
  EXPECT_EQ(located.outcome, OUTCOME_ALLOW_REDACTED);
  EXPECT_EQ(std::string(located.rule_name), "redact-user-selected-location");
  EXPECT_EQ(Decide(kPickedWithLocation, OP_READ, "DCIM/Camera/picked.jpg", true).outcome,
            OUTCOME_ALLOW);
}

// READ_MEDIA_VISUAL_USER_SELECTED counts from SDK 33 on (checkPermissionReadVisualUserSelected).
TEST_P(TargetSdkTest, PartialAccessNeedsTargetSdk33) {
  EXPECT_EQ(Decide(kSdk32Picked, OP_LOOKUP, "DCIM/Camera/picked.jpg").outcome, OUTCOME_HIDE);
}

// Full access wins over partial access: every photo, not only the picked one.
TEST_P(TargetSdkTest, ReadMediaImagesBesidePartialAccessReadsEveryPhoto) {
  EXPECT_EQ(Decide(kPickedAndImages, OP_READ, "DCIM/Camera/IMG_1.jpg").outcome, OUTCOME_ALLOW);
  EXPECT_EQ(Decide(kPickedAndImages, OP_READ, "DCIM/Camera/picked.jpg").outcome, OUTCOME_ALLOW);
}

TEST(TargetSdkRegistryTest, CountedPermissionsFollowTheTargetSdk) {
  absl::StatusOr<LoadedConfig> config = Load("policy/configs/android.textproto", kApps);
  ASSERT_TRUE(config.ok()) << config.status();
  PermissionIndex index(config->policy);
  AppRegistry apps = AppRegistry::Build(config->apps, config->packages_list, index);
  int res = index.Find("android.permission.READ_EXTERNAL_STORAGE");
  int images = index.Find("android.permission.READ_MEDIA_IMAGES");
  int audio = index.Find("android.permission.READ_MEDIA_AUDIO");
  ASSERT_GE(res, 0);
  ASSERT_GE(images, 0);
  ASSERT_GE(audio, 0);
  Caller old_app = apps.Identify(kSdk29Res);
  ASSERT_NE(old_app.app, nullptr);
  EXPECT_EQ(old_app.app->target_sdk, 29u);
  EXPECT_TRUE(old_app.app->permissions.test(images));
  EXPECT_TRUE(old_app.app->permissions.test(audio));
  EXPECT_FALSE(old_app.app->granted.test(images));
  Caller new_app = apps.Identify(kSdk33Res);
  ASSERT_NE(new_app.app, nullptr);
  EXPECT_TRUE(new_app.app->granted.test(res));
  EXPECT_FALSE(new_app.app->permissions.test(images));
  Caller old_images = apps.Identify(kSdk29Images);
  ASSERT_NE(old_images.app, nullptr);
  EXPECT_TRUE(old_images.app->granted.test(images));
  EXPECT_FALSE(old_images.app->permissions.test(images));
}

// packages.list's seinfo gives the target SDK of a package the registry lists without one.
TEST(TargetSdkRegistryTest, PackagesListSuppliesTheTargetSdk) {
  absl::StatusOr<LoadedConfig> config =
      Load("policy/configs/android.textproto",
           R"pb(app {
                  package: "com.test.old"
                  uid: 10110
                  permission: "android.permission.READ_EXTERNAL_STORAGE"
                })pb",
           "com.test.old 10110 0 /data/user/0/com.test.old default:targetSdkVersion=28 none\n");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<const Engine>> engine = Engine::Create(*config);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const AppRecord* app = (*engine)->apps().FindPackage("com.test.old");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->target_sdk, 28u);
  media::ContentFacts facts = media::FactsFromName("IMG_1.jpg");
  facts.content_known = true;
  facts.location = media::LocationPresence::kAbsent;
  Request r;
  r.uid = 10110;
  r.op = OP_READ;
  r.path = "DCIM/IMG_1.jpg";
  r.content = &facts;
  r.owner_uid = kCamera;
  EXPECT_EQ((*engine)->Decide(r).outcome, OUTCOME_ALLOW);
}

TEST(TargetSdkConfigTest, LoaderReportsBadTargetSdkPermissionsAndPickedPaths) {
  std::string policy = ReadFile("policy/configs/android.textproto");
  policy += R"pb(
    target_sdk_permission { permission: "android.permission.NOT_DECLARED" below_target_sdk: 33 }
    target_sdk_permission {
      permission: "android.permission.READ_MEDIA_AUDIO"
      from: "android.permission.READ_MEDIA_AUDIO"
    }
  )pb";
  absl::StatusOr<LoadedConfig> config = ParseConfig(
      policy, "p.textproto",
      R"pb(app { package: "com.test.a" uid: 10111 user_selected: "../x.jpg" })pb", "a.textproto");
  ASSERT_FALSE(config.ok());
  std::string message(config.status().message());
  EXPECT_TRUE(absl::StrContains(message, "unknown permission \"android.permission.NOT_DECLARED\""))
      << message;
  EXPECT_TRUE(absl::StrContains(message, "is derived from itself")) << message;
  EXPECT_TRUE(absl::StrContains(message, "needs below_target_sdk")) << message;
  EXPECT_TRUE(absl::StrContains(message, "already depends on the target SDK")) << message;
  EXPECT_TRUE(absl::StrContains(message, "a.textproto:1:")) << message;
  EXPECT_TRUE(absl::StrContains(message, "is not a path below the storage root")) << message;
}

}  // namespace
}  // namespace scopedfs::policy
