// audit2why: lines written by the daemon's formatter parse back (hostile names too), and the
// explanation names the rule and the permissions that would flip the decision, under the shipped
// Android policy.
#include "tools/audit2why.h"

#include <cerrno>
#include <string>

#include "absl/strings/match.h"
#include "daemon/observe/audit_log.h"
#include "gtest/gtest.h"
#include "policy/config.h"

namespace scopedfs::tools {
namespace {

policy::LoadedConfig Android() {
  absl::StatusOr<policy::LoadedConfig> config = policy::LoadConfig(
      {"policy/configs/android-strict.textproto", "policy/configs/apps.textproto", ""});
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

std::string Line(bool redacted, uint32_t uid, absl::string_view pkg, absl::string_view path,
                 MediaClass media, media::LocationPresence location, uint32_t owner,
                 absl::string_view rule) {
  media::ContentFacts facts;
  facts.media_class = media;
  facts.location = location;
  daemon::AuditEvent e;
  e.redacted = redacted;
  e.op = OP_READ;
  e.uid = uid;
  e.pid = 7;
  e.package = pkg;
  e.path = path;
  e.content = &facts;
  e.owner = owner;
  e.rule = rule;
  e.err = ENOENT;
  e.redact = 1u << REDACTION_EXIF_GPS;
  return "Nov 23 07:00:00 host scopedfsd[12]: " + daemon::FormatAuditLine(e);
}

TEST(ParseAuditLine, RoundTripsTheDaemonsLineWithAHostileName) {
  std::string hostile = "DCIM/a\"b\nscopedfs: denied { read } \\x41\x01.jpg";
  absl::StatusOr<AuditRecord> r =
      ParseAuditLine(Line(false, 10062, "com.example.social", hostile, MEDIA_CLASS_IMAGE,
                          media::LocationPresence::kPresent, 10065, "some-rule"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->redacted);
  EXPECT_EQ(r->op, OP_READ);
  EXPECT_EQ(r->uid, 10062u);
  EXPECT_EQ(r->package, "com.example.social");
  EXPECT_EQ(r->path, hostile);
  ASSERT_TRUE(r->content.has_value());
  EXPECT_EQ(r->content->media_class, MEDIA_CLASS_IMAGE);
  EXPECT_EQ(r->content->location, media::LocationPresence::kPresent);
  EXPECT_EQ(r->owner, 10065u);
  EXPECT_EQ(r->rule, "some-rule");
  EXPECT_EQ(r->errno_name, "ENOENT");
}

TEST(ParseAuditLine, RejectsWhatIsNoAuditLine) {
  EXPECT_FALSE(ParseAuditLine("scopedfsd: serving /a at /b").ok());
  EXPECT_FALSE(ParseAuditLine("scopedfs: denied { fly } uid=1 path=\"a\"").ok());
  EXPECT_FALSE(ParseAuditLine("scopedfs: denied { read } path=\"a\"").ok());
  EXPECT_FALSE(ParseAuditLine("scopedfs: denied { read } uid=1 path=\"a\\x4\"").ok());
}

TEST(Audit2Why, AHiddenSongNamesTheAudioPermission) {
  policy::LoadedConfig config = Android();
  absl::StatusOr<AuditRecord> r =
      ParseAuditLine(Line(false, 10062, "com.example.social", "Music/song.mp3", MEDIA_CLASS_AUDIO,
                          media::LocationPresence::kAbsent, 10063, ""));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> why = Audit2Why(config, *r, 0);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(absl::StrContains(*why, "decision: HIDE (ENOENT)")) << *why;
  EXPECT_TRUE(absl::StrContains(*why, "policy/configs/android-strict.textproto:")) << *why;
  EXPECT_TRUE(absl::StrContains(*why, "change:   with android.permission.READ_MEDIA_AUDIO: ALLOW"))
      << *why;
  EXPECT_FALSE(absl::StrContains(*why, "READ_MEDIA_IMAGES")) << *why;
}

TEST(Audit2Why, ARedactedPhotoNamesTheLocationPermission) {
  policy::LoadedConfig config = Android();
  absl::StatusOr<AuditRecord> r =
      ParseAuditLine(Line(true, 10062, "com.example.social", "DCIM/a.jpg", MEDIA_CLASS_IMAGE,
                          media::LocationPresence::kPresent, 10065, ""));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> why = Audit2Why(config, *r, 0);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(absl::StrContains(*why, "decision: ALLOW_REDACTED")) << *why;
  EXPECT_TRUE(
      absl::StrContains(*why, "change:   with android.permission.ACCESS_MEDIA_LOCATION: ALLOW"))
      << *why;
  EXPECT_TRUE(
      absl::StrContains(*why, "change:   without android.permission.READ_MEDIA_IMAGES: HIDE"))
      << *why;
}

// An app targeting SDK 33 or later is asked for READ_MEDIA_IMAGES (PermissionUtils): granting it
// READ_EXTERNAL_STORAGE would change nothing, so that is not suggested.
TEST(Audit2Why, AModernAppIsToldReadMediaImagesNotReadExternalStorage) {
  policy::LoadedConfig config = Android();
  absl::StatusOr<AuditRecord> r =
      ParseAuditLine(Line(false, 10065, "com.example.camera", "DCIM/b.jpg", MEDIA_CLASS_IMAGE,
                          media::LocationPresence::kAbsent, 10062, "(default action)"));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> why = Audit2Why(config, *r, 0);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(absl::StrContains(*why, "decision: HIDE (ENOENT)")) << *why;
  EXPECT_TRUE(absl::StrContains(*why, "(target SDK 34)")) << *why;
  EXPECT_TRUE(absl::StrContains(*why, "change:   with android.permission.READ_MEDIA_IMAGES: ALLOW"))
      << *why;
  EXPECT_FALSE(absl::StrContains(*why, "with android.permission.READ_EXTERNAL_STORAGE")) << *why;
}

// Holding READ_EXTERNAL_STORAGE alone at SDK 33: the line says why it does not count.
TEST(Audit2Why, SaysWhyReadExternalStorageDoesNotCountAtSdk33) {
  policy::LoadedConfig config = Android();
  scopedfs::App* app = config.apps.add_app();
  app->set_package("com.test.sdk33");
  app->set_uid(10101);
  app->set_target_sdk(33);
  app->add_permission("android.permission.READ_EXTERNAL_STORAGE");
  absl::StatusOr<AuditRecord> r =
      ParseAuditLine(Line(false, 10101, "com.test.sdk33", "DCIM/b.jpg", MEDIA_CLASS_IMAGE,
                          media::LocationPresence::kAbsent, 10062, "(default action)"));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> why = Audit2Why(config, *r, 0);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(absl::StrContains(*why, "decision: HIDE (ENOENT)")) << *why;
  EXPECT_TRUE(absl::StrContains(
      *why,
      "sdk:      android.permission.READ_EXTERNAL_STORAGE does not count as "
      "android.permission.READ_MEDIA_IMAGES for an app targeting SDK 33 or later"))
      << *why;
  EXPECT_TRUE(absl::StrContains(*why, "change:   with android.permission.READ_MEDIA_IMAGES: ALLOW"))
      << *why;
}

// An app targeting SDK 29 is asked for READ_EXTERNAL_STORAGE, and READ_MEDIA_IMAGES would not do.
TEST(Audit2Why, AnOldAppIsToldReadExternalStorage) {
  policy::LoadedConfig config = Android();
  scopedfs::App* app = config.apps.add_app();
  app->set_package("com.test.sdk29");
  app->set_uid(10102);
  app->set_target_sdk(29);
  absl::StatusOr<AuditRecord> r =
      ParseAuditLine(Line(false, 10102, "com.test.sdk29", "DCIM/b.jpg", MEDIA_CLASS_IMAGE,
                          media::LocationPresence::kAbsent, 10062, "(default action)"));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> why = Audit2Why(config, *r, 0);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(
      absl::StrContains(*why, "change:   with android.permission.READ_EXTERNAL_STORAGE: ALLOW"))
      << *why;
  EXPECT_FALSE(absl::StrContains(*why, "with android.permission.READ_MEDIA_IMAGES")) << *why;
}

TEST(Audit2Why, NotesARuleThatNoLongerDecides) {
  policy::LoadedConfig config = Android();
  absl::StatusOr<AuditRecord> r =
      ParseAuditLine(Line(false, 10062, "com.example.social", "Music/song.mp3", MEDIA_CLASS_AUDIO,
                          media::LocationPresence::kAbsent, 10063, "a-rule-long-gone"));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> why = Audit2Why(config, *r, 0);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(absl::StrContains(*why, "note:     the line names rule \"a-rule-long-gone\""))
      << *why;
}

TEST(Audit2Why, AnUnregisteredUidCanBeGrantedToo) {
  policy::LoadedConfig config = Android();
  absl::StatusOr<AuditRecord> r =
      ParseAuditLine(Line(false, 10999, "", "Music/song.mp3", MEDIA_CLASS_AUDIO,
                          media::LocationPresence::kAbsent, 10063, ""));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> why = Audit2Why(config, *r, 0);
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(absl::StrContains(*why, "not in the app registry")) << *why;
}

}  // namespace
}  // namespace scopedfs::tools
