// Decision matrix for the shipped Android policy's rules (policy/configs/android-strict.textproto,
// the same rules as android.textproto with strict visibility, with the sample apps): every Android
// scoped-storage rule of DESIGN.md, checked as outcome + errno + deciding rule. What LISTING
// visibility changes is checked at the end (VisibilityTest).
#include "policy/engine.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "media/content_facts.h"
#include "policy/config.h"

namespace scopedfs::policy {
namespace {

// Sample apps (policy/configs/apps.textproto).
constexpr uint32_t kGallery = 10061;  // images + video + ACCESS_MEDIA_LOCATION
constexpr uint32_t kSocial = 10062;   // images + video, no location
constexpr uint32_t kMusic = 10063;    // audio
constexpr uint32_t kFiles = 10064;    // MANAGE_EXTERNAL_STORAGE
constexpr uint32_t kCamera = 10065;   // nothing
constexpr uint32_t kLegacy = 10066;   // READ_EXTERNAL_STORAGE
constexpr uint32_t kNotes = 10067;    // nothing
constexpr uint32_t kSuite = 10070;    // shared uid: mail (images) + calendar
constexpr uint32_t kUnknownApp = 10999;
constexpr uint32_t kRoot = 0;
constexpr uint32_t kSystem = 1000;
constexpr uint32_t kMedia = 1013;
constexpr uint32_t kMediaRw = 1023;
constexpr uint32_t kShell = 2000;
constexpr uint32_t kUser10 = 10 * 100000;

// Magic bytes standing for a file's content.
enum class Bytes { kNone, kJpeg, kPng, kMp4, kMp3, kPdf };

std::vector<uint8_t> Sample(Bytes bytes) {
  switch (bytes) {
    case Bytes::kJpeg:
      return {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0};
    case Bytes::kPng:
      return {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    case Bytes::kMp4:
      return {0, 0, 0, 0x18, 'f', 't', 'y', 'p', 'i', 's', 'o', 'm',
              0, 0, 2, 0,    'i', 's', 'o', 'm', 'm', 'p', '4', '1'};
    case Bytes::kMp3:
      return {'I', 'D', '3', 4, 0, 0, 0, 0, 0, 0};
    case Bytes::kPdf:
      return {'%', 'P', 'D', 'F', '-', '1', '.', '7', '\n'};
    case Bytes::kNone:
      break;
  }
  return {};
}

// Location as the (future) parser would report it.
enum class Loc { kUnparsed, kNone, kPresent, kMalformed };

struct Case {
  const char* label;
  uint32_t uid;
  Op op;
  const char* path;
  Bytes bytes = Bytes::kNone;  // kNone: judged by name (creates) or a directory
  std::optional<uint32_t> owner = std::nullopt;
  Outcome outcome = OUTCOME_ALLOW;
  Errno error = ERRNO_UNSPECIFIED;
  const char* rule = "";
  NodeType node = NODE_TYPE_FILE;
  Loc location = Loc::kUnparsed;
  uint32_t storage_user = 0;
};

class EngineTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<LoadedConfig> config = LoadConfig(
        {"policy/configs/android-strict.textproto", "policy/configs/apps.textproto", ""});
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<std::unique_ptr<const Engine>> engine = Engine::Create(*config);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = engine->release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  static Decision Decide(const Case& c) {
    Request r;
    r.uid = c.uid;
    r.op = c.op;
    r.path = c.path;
    r.node_type = c.node;
    r.owner_uid = c.owner;
    r.storage_user_id = c.storage_user;
    media::ContentFacts facts;
    absl::string_view path(c.path);
    absl::string_view name =
        path.substr(path.rfind('/') == absl::string_view::npos ? 0 : path.rfind('/') + 1);
    if (c.node == NODE_TYPE_FILE) {
      if (c.bytes == Bytes::kNone) {
        facts = media::FactsFromName(name);
      } else {
        std::vector<uint8_t> head = Sample(c.bytes);
        facts = media::FactsFromContent(name, head);
      }
      if (c.location == Loc::kNone) facts.location = media::LocationPresence::kAbsent;
      if (c.location == Loc::kPresent) facts.location = media::LocationPresence::kPresent;
      if (c.location == Loc::kMalformed) facts.location = media::LocationPresence::kMalformed;
      r.content = &facts;
    }
    return engine_->Decide(r);
  }

  static void Check(const std::vector<Case>& cases) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.label);
      Decision d = Decide(c);
      EXPECT_EQ(OutcomeName(d.outcome), OutcomeName(c.outcome)) << "rule " << d.rule_name;
      if (c.outcome == OUTCOME_DENY) {
        EXPECT_EQ(Errno_Name(d.error), Errno_Name(c.error));
      }
      EXPECT_EQ(std::string(d.rule_name), c.rule);
    }
  }

  static const Engine* engine_;
};

const Engine* EngineTest::engine_ = nullptr;

// The decision tables keep one case per line: clang-format would spread each over a dozen.
// clang-format off
TEST_F(EngineTest, OwnerHasFullUnredactedAccess) {
  Check({
      {"camera reads its photo", kCamera, OP_READ, "DCIM/Camera/IMG_1.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_ALLOW, {}, "owner-full-access"},
      {"camera writes its photo", kCamera, OP_WRITE, "DCIM/Camera/IMG_1.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_ALLOW, {}, "owner-full-access"},
      {"camera deletes its photo", kCamera, OP_DELETE, "DCIM/Camera/IMG_1.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_ALLOW, {}, "owner-full-access"},
      {"camera renames its photo", kCamera, OP_RENAME, "DCIM/Camera/IMG_1.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_ALLOW, {}, "owner-full-access"},
      {"notes reads its document", kNotes, OP_READ, "Documents/todo.txt", Bytes::kNone, kNotes,
       OUTCOME_ALLOW, {}, "owner-full-access"},
      {"notes chmods its document", kNotes, OP_SETATTR, "Documents/todo.txt", Bytes::kNone,
       kNotes, OUTCOME_ALLOW, {}, "owner-full-access"},
      {"notes removes its directory", kNotes, OP_RMDIR, "Documents/Notes", Bytes::kNone, kNotes,
       OUTCOME_ALLOW, {}, "owner-full-access", NODE_TYPE_DIRECTORY},
  });
}

TEST_F(EngineTest, MediaReadableByTypePermission) {
  Check({
      {"social sees an image without location", kSocial, OP_READ, "DCIM/a.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_ALLOW, {}, "read-images", NODE_TYPE_FILE, Loc::kNone},
      {"social looks up an image", kSocial, OP_LOOKUP, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_ALLOW, {}, "read-images"},
      {"social sees a video", kSocial, OP_READ, "Movies/v.mp4", Bytes::kMp4, kCamera,
       OUTCOME_ALLOW, {}, "read-video", NODE_TYPE_FILE, Loc::kNone},
      // Recordings are location carriers: read raw once their scan finds none.
      {"music reads audio", kMusic, OP_READ, "Music/song.mp3", Bytes::kMp3, kCamera,
       OUTCOME_ALLOW, {}, "read-audio", NODE_TYPE_FILE, Loc::kNone},
      {"music cannot see images", kMusic, OP_LOOKUP, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_HIDE, {}, "<default>"},
      {"social cannot see audio", kSocial, OP_LOOKUP, "Music/song.mp3", Bytes::kMp3, kCamera,
       OUTCOME_HIDE, {}, "<default>"},
      {"camera without permissions sees no one else's photos", kCamera, OP_LOOKUP,
       "DCIM/b.jpg", Bytes::kJpeg, kSocial, OUTCOME_HIDE, {}, "<default>"},
      {"legacy READ_EXTERNAL_STORAGE reads audio", kLegacy, OP_READ, "Music/song.mp3",
       Bytes::kMp3, kCamera, OUTCOME_ALLOW, {}, "read-audio", NODE_TYPE_FILE, Loc::kNone},
      {"legacy READ_EXTERNAL_STORAGE reads images", kLegacy, OP_READ, "Pictures/p.png",
       Bytes::kPng, kCamera, OUTCOME_ALLOW, {}, "read-images", NODE_TYPE_FILE, Loc::kNone},
      {"others' images are read-only", kSocial, OP_WRITE, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_DENY, ERRNO_EACCES, "images-read-only"},
      {"others' images cannot be deleted", kSocial, OP_DELETE, "DCIM/a.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_DENY, ERRNO_EACCES, "images-read-only"},
      {"others' audio cannot be renamed", kMusic, OP_RENAME, "Music/song.mp3", Bytes::kMp3,
       kCamera, OUTCOME_DENY, ERRNO_EACCES, "audio-read-only"},
      {"invisible media stays invisible to writes", kMusic, OP_WRITE, "DCIM/a.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_HIDE, {}, "<default>"},
  });
}

TEST_F(EngineTest, LocationRedactedWithoutAccessMediaLocation) {
  Check({
      {"social gets a redacted photo", kSocial, OP_READ, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_ALLOW_REDACTED, {}, "redact-image-location", NODE_TYPE_FILE, Loc::kPresent},
      {"content read but never scanned is uncertain: denied by default", kSocial, OP_READ,
       "DCIM/a.jpg", Bytes::kJpeg, kCamera, OUTCOME_DENY, ERRNO_EACCES, "redact-image-location"},
      {"malformed location metadata: denied by default", kSocial, OP_READ, "DCIM/a.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_DENY, ERRNO_EACCES, "redact-image-location", NODE_TYPE_FILE,
       Loc::kMalformed},
      {"malformed does not matter to an entitled reader", kGallery, OP_READ, "DCIM/a.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_ALLOW, {}, "read-images", NODE_TYPE_FILE, Loc::kMalformed},
      {"malformed does not matter to the owner", kCamera, OP_READ, "DCIM/a.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_ALLOW, {}, "owner-full-access", NODE_TYPE_FILE, Loc::kMalformed},
      {"social gets a redacted video", kSocial, OP_READ, "DCIM/v.mp4", Bytes::kMp4, kCamera,
       OUTCOME_ALLOW_REDACTED, {}, "redact-video-location", NODE_TYPE_FILE, Loc::kPresent},
      {"gallery with ACCESS_MEDIA_LOCATION gets raw bytes", kGallery, OP_READ, "DCIM/a.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_ALLOW, {}, "read-images", NODE_TYPE_FILE, Loc::kPresent},
      {"legacy app is redacted too", kLegacy, OP_READ, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_ALLOW_REDACTED, {}, "redact-image-location", NODE_TYPE_FILE, Loc::kPresent},
      {"the owner is never redacted", kCamera, OP_READ, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_ALLOW, {}, "owner-full-access", NODE_TYPE_FILE, Loc::kPresent},
  });
  Decision d = Decide({"redaction set", kSocial, OP_READ, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
                       OUTCOME_ALLOW_REDACTED, {}, "", NODE_TYPE_FILE, Loc::kPresent});
  EXPECT_FALSE(d.redact_fallback);
  // Every kind is filled, whichever class the rule was written for (a HEIF may hold an MP4
  // location box, an MP4 an Exif item).
  constexpr EnumMask kAll = Bit(REDACTION_EXIF_GPS) | Bit(REDACTION_XMP_GPS) |
                            Bit(REDACTION_ISOBMFF_LOCATION) | Bit(REDACTION_IPTC_PLACE) |
                            Bit(REDACTION_XMP_PLACE);
  EXPECT_EQ(d.redact, kAll);
  d = Decide({"video redaction set", kSocial, OP_READ, "DCIM/v.mp4", Bytes::kMp4, kCamera,
              OUTCOME_ALLOW_REDACTED, {}, "", NODE_TYPE_FILE, Loc::kPresent});
  EXPECT_EQ(d.redact, kAll);
}

// UNCERTAIN_LOCATION_REDACT_ALL turns the uncertain denial into a redacted copy that also fills
// the scan's fallback ranges.
TEST(EngineUncertainLocationTest, RedactAllGrantsFallbackRedaction) {
  absl::StatusOr<LoadedConfig> config =
      LoadConfig({"policy/configs/android.textproto", "policy/configs/apps.textproto", ""});
  ASSERT_TRUE(config.ok()) << config.status();
  config->policy.set_uncertain_location(UNCERTAIN_LOCATION_REDACT_ALL);
  absl::StatusOr<std::unique_ptr<const Engine>> engine = Engine::Create(*config);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<uint8_t> head = Sample(Bytes::kJpeg);
  media::ContentFacts facts = media::FactsFromContent("a.jpg", head);
  facts.location = media::LocationPresence::kMalformed;
  Request r;
  r.uid = kSocial;
  r.op = OP_READ;
  r.path = "DCIM/a.jpg";
  r.owner_uid = kCamera;
  r.content = &facts;
  Decision d = (*engine)->Decide(r);
  EXPECT_EQ(OutcomeName(d.outcome), "ALLOW_REDACTED");
  EXPECT_TRUE(d.redact_fallback);
  facts.location = media::LocationPresence::kPresent;
  d = (*engine)->Decide(r);
  EXPECT_EQ(OutcomeName(d.outcome), "ALLOW_REDACTED");
  EXPECT_FALSE(d.redact_fallback);
}

TEST_F(EngineTest, OtherAppsDocumentsHidden) {
  Check({
      {"social cannot see notes' document", kSocial, OP_LOOKUP, "Documents/todo.txt",
       Bytes::kNone, kNotes, OUTCOME_HIDE, {}, "<default>"},
      {"gallery cannot see a downloaded pdf", kGallery, OP_READ, "Download/report.pdf",
       Bytes::kPdf, kNotes, OUTCOME_HIDE, {}, "<default>"},
      {"unowned files are hidden too", kSocial, OP_LOOKUP, "Download/orphan.zip", Bytes::kNone,
       std::nullopt, OUTCOME_HIDE, {}, "<default>"},
      {"hidden files cannot be written", kSocial, OP_WRITE, "Documents/todo.txt", Bytes::kNone,
       kNotes, OUTCOME_HIDE, {}, "<default>"},
  });
}

TEST_F(EngineTest, AndroidDataIsolation) {
  Check({
      {"own Android/data", kNotes, OP_READ, "Android/data/com.example.notes/files/n.db",
       Bytes::kNone, kNotes, OUTCOME_ALLOW, {}, "own-app-dirs"},
      {"own Android/data even if not the creator", kNotes, OP_WRITE,
       "Android/data/com.example.notes/cache/x", Bytes::kNone, kSystem, OUTCOME_ALLOW, {},
       "own-app-dirs"},
      {"own obb", kNotes, OP_LOOKUP, "Android/obb/com.example.notes/main.obb", Bytes::kNone,
       std::nullopt, OUTCOME_ALLOW, {}, "own-app-dirs"},
      {"another app's data dir", kSocial, OP_LOOKUP, "Android/data/com.example.notes",
       Bytes::kNone, std::nullopt, OUTCOME_HIDE, {}, "other-apps-private-dirs-hidden",
       NODE_TYPE_DIRECTORY},
      {"another app's data file, even an image", kGallery, OP_READ,
       "Android/data/com.example.notes/a.jpg", Bytes::kJpeg, kNotes, OUTCOME_HIDE, {},
       "other-apps-private-dirs-hidden"},
      {"case does not open a way in", kSocial, OP_LOOKUP, "android/DATA/com.example.notes/x",
       Bytes::kNone, kNotes, OUTCOME_HIDE, {}, "other-apps-private-dirs-hidden"},
      {"all-files access does not reach Android/data", kFiles, OP_READ,
       "Android/data/com.example.notes/files/n.db", Bytes::kNone, kNotes, OUTCOME_HIDE, {},
       "other-apps-private-dirs-hidden"},
      {"creating another app's data dir", kSocial, OP_MKDIR, "Android/data/com.example.notes",
       Bytes::kNone, std::nullopt, OUTCOME_HIDE, {}, "other-apps-private-dirs-hidden",
       NODE_TYPE_DIRECTORY},
      {"Android/data itself is listable", kSocial, OP_READ, "Android/data", Bytes::kNone,
       std::nullopt, OUTCOME_ALLOW, {}, "directories-visible", NODE_TYPE_DIRECTORY},
      {"Android/media of another app is shared media", kSocial, OP_READ,
       "Android/media/com.example.notes/a.jpg", Bytes::kJpeg, kNotes, OUTCOME_ALLOW, {},
       "read-images", NODE_TYPE_FILE, Loc::kNone},
      {"own Android/media accepts any type", kNotes, OP_CREATE,
       "Android/media/com.example.notes/x.pdf", Bytes::kNone, std::nullopt, OUTCOME_ALLOW, {},
       "own-app-dirs"},
  });
}

TEST_F(EngineTest, CreateTypeRules) {
  Check({
      {"image in DCIM", kCamera, OP_CREATE, "DCIM/Camera/IMG_2.jpg", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-images"},
      {"image in Pictures", kCamera, OP_CREATE, "Pictures/p.png", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-images"},
      {"video in DCIM", kCamera, OP_CREATE, "DCIM/v.mp4", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-video"},
      {"video in Movies", kCamera, OP_CREATE, "Movies/v.mkv", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-video"},
      {"video in Pictures", kCamera, OP_CREATE, "Pictures/v.mp4", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-video"},
      {"audio in Music", kMusic, OP_CREATE, "Music/a.mp3", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-audio"},
      {"audio in Ringtones", kMusic, OP_CREATE, "Ringtones/r.ogg", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-audio"},
      {"audio in Recordings", kMusic, OP_CREATE, "Recordings/r.m4a", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-audio"},
      {"anything in Download", kNotes, OP_CREATE, "Download/x.pdf", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "create-anything-in-download-documents"},
      {"anything in Documents", kNotes, OP_CREATE, "Documents/deep/x.bin", Bytes::kNone,
       std::nullopt, OUTCOME_ALLOW, {}, "create-anything-in-download-documents"},
      {"pdf in DCIM", kCamera, OP_CREATE, "DCIM/x.pdf", Bytes::kNone, std::nullopt, OUTCOME_DENY,
       ERRNO_EPERM, "create-wrong-type-or-place"},
      {"audio in DCIM", kCamera, OP_CREATE, "DCIM/x.mp3", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "create-wrong-type-or-place"},
      {"image in Music", kMusic, OP_CREATE, "Music/x.jpg", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "create-wrong-type-or-place"},
      {"image in Movies", kCamera, OP_CREATE, "Movies/x.jpg", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "create-wrong-type-or-place"},
      {"video in Music", kCamera, OP_CREATE, "Music/x.mp4", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "create-wrong-type-or-place"},
      {"file in a custom top-level dir", kNotes, OP_CREATE, "MyStuff/x.txt", Bytes::kNone,
       std::nullopt, OUTCOME_DENY, ERRNO_EPERM, "create-wrong-type-or-place"},
  });
}

TEST_F(EngineTest, OnlyDefaultDirectoriesAtTheRoot) {
  Check({
      {"root is listable", kSocial, OP_READ, "", Bytes::kNone, std::nullopt, OUTCOME_ALLOW, {},
       "root-listable", NODE_TYPE_DIRECTORY},
      {"root cannot be changed", kSocial, OP_SETATTR, "", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EACCES, "root-immutable", NODE_TYPE_DIRECTORY},
      {"no files at the root", kNotes, OP_CREATE, "notes.txt", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "no-files-at-root"},
      {"default dir may be re-created", kCamera, OP_MKDIR, "DCIM", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "default-dirs-may-be-recreated", NODE_TYPE_DIRECTORY},
      {"default dir, any case", kCamera, OP_MKDIR, "dcim", Bytes::kNone, std::nullopt,
       OUTCOME_ALLOW, {}, "default-dirs-may-be-recreated", NODE_TYPE_DIRECTORY},
      {"custom top-level dir", kNotes, OP_MKDIR, "MyApp", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "no-custom-top-dirs", NODE_TYPE_DIRECTORY},
      {"all-files access cannot add top-level dirs", kFiles, OP_MKDIR, "MyApp", Bytes::kNone,
       std::nullopt, OUTCOME_DENY, ERRNO_EPERM, "no-custom-top-dirs", NODE_TYPE_DIRECTORY},
      {"default dir cannot be removed", kFiles, OP_RMDIR, "DCIM", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "default-dirs-fixed", NODE_TYPE_DIRECTORY},
      {"subdirectory of a default dir", kNotes, OP_MKDIR, "Pictures/Trips", Bytes::kNone,
       std::nullopt, OUTCOME_ALLOW, {}, "mkdir-in-default-dirs", NODE_TYPE_DIRECTORY},
      {"subdirectory of a custom dir", kNotes, OP_MKDIR, "MyApp/sub", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "create-wrong-type-or-place", NODE_TYPE_DIRECTORY},
      {"others' directory is visible", kSocial, OP_LOOKUP, "Pictures/Trips", Bytes::kNone,
       kNotes, OUTCOME_ALLOW, {}, "directories-visible", NODE_TYPE_DIRECTORY},
      {"others' directory cannot be removed", kSocial, OP_RMDIR, "Pictures/Trips", Bytes::kNone,
       kNotes, OUTCOME_DENY, ERRNO_EACCES, "others-directories-read-only", NODE_TYPE_DIRECTORY},
  });
}

TEST_F(EngineTest, PrivilegedUidsBypass) {
  for (uint32_t uid : {kRoot, kSystem, kMedia, kMediaRw, kShell, kUser10 + kSystem}) {
    Check({
        {"custom top-level dir", uid, OP_MKDIR, "MyApp", Bytes::kNone, std::nullopt,
         OUTCOME_ALLOW, {}, "privileged-uids-bypass", NODE_TYPE_DIRECTORY},
        {"another app's private data", uid, OP_READ, "Android/data/com.example.notes/n.db",
         Bytes::kNone, kNotes, OUTCOME_ALLOW, {}, "privileged-uids-bypass"},
        {"an image with location, unredacted", uid, OP_READ, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
         OUTCOME_ALLOW, {}, "privileged-uids-bypass", NODE_TYPE_FILE, Loc::kPresent},
    });
  }
  Check({{"an ordinary system service uid is not privileged", 1041, OP_LOOKUP,
          "Documents/todo.txt", Bytes::kNone, kNotes, OUTCOME_HIDE, {}, "<default>"}});
}

TEST_F(EngineTest, ManageExternalStorageSeesAll) {
  Check({
      {"reads another app's document", kFiles, OP_READ, "Documents/todo.txt", Bytes::kNone,
       kNotes, OUTCOME_ALLOW, {}, "all-files-access"},
      {"writes another app's document", kFiles, OP_WRITE, "Documents/todo.txt", Bytes::kNone,
       kNotes, OUTCOME_ALLOW, {}, "all-files-access"},
      {"deletes another app's image", kFiles, OP_DELETE, "DCIM/a.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_ALLOW, {}, "all-files-access"},
      {"creates any type anywhere below the root", kFiles, OP_CREATE, "DCIM/x.pdf",
       Bytes::kNone, std::nullopt, OUTCOME_ALLOW, {}, "all-files-access"},
      {"still redacted without ACCESS_MEDIA_LOCATION", kFiles, OP_READ, "DCIM/a.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_ALLOW_REDACTED, {}, "redact-image-location",
       NODE_TYPE_FILE, Loc::kPresent},
      {"still no files at the root", kFiles, OP_CREATE, "x.txt", Bytes::kNone, std::nullopt,
       OUTCOME_DENY, ERRNO_EPERM, "no-files-at-root"},
  });
}

TEST_F(EngineTest, SharedUidSharesPermissionsAndFiles) {
  Check({
      {"calendar reads images through mail's grant", kSuite, OP_READ, "DCIM/a.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_ALLOW, {}, "read-images", NODE_TYPE_FILE, Loc::kNone},
      {"files of the shared uid belong to both", kSuite, OP_WRITE, "Documents/mail.eml",
       Bytes::kNone, kSuite, OUTCOME_ALLOW, {}, "owner-full-access"},
      {"each package's private dir is the uid's", kSuite, OP_READ,
       "Android/data/com.example.suite.calendar/x", Bytes::kNone, std::nullopt, OUTCOME_ALLOW,
       {}, "own-app-dirs"},
      {"and the other package's too", kSuite, OP_READ, "Android/data/com.example.suite.mail/x",
       Bytes::kNone, std::nullopt, OUTCOME_ALLOW, {}, "own-app-dirs"},
  });
}

TEST_F(EngineTest, MultiUserUids) {
  Check({
      {"user 10's app on user 0's storage", kUser10 + kSocial, OP_LOOKUP, "DCIM/a.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_HIDE, {}, "other-users-hidden"},
      {"user 10's app even for its own files", kUser10 + kCamera, OP_READ, "DCIM/a.jpg",
       Bytes::kJpeg, kUser10 + kCamera, OUTCOME_HIDE, {}, "other-users-hidden"},
      {"user 10's app on user 10's storage keeps its grants", kUser10 + kSocial, OP_READ,
       "DCIM/a.jpg", Bytes::kJpeg, kUser10 + kCamera, OUTCOME_ALLOW_REDACTED, {},
       "redact-image-location", NODE_TYPE_FILE, Loc::kPresent, 10},
      {"owner is per uid, not per app id", kUser10 + kCamera, OP_WRITE, "DCIM/a.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_HIDE, {}, "<default>", NODE_TYPE_FILE, Loc::kUnparsed,
       10},
      {"user 10's owner on user 10's storage", kUser10 + kCamera, OP_WRITE, "DCIM/a.jpg",
       Bytes::kJpeg, kUser10 + kCamera, OUTCOME_ALLOW, {}, "owner-full-access",
       NODE_TYPE_FILE, Loc::kUnparsed, 10},
  });
}

TEST_F(EngineTest, ContentDecidesMediaTypeNotTheExtension) {
  Check({
      {"a pdf named .jpg is not an image", kSocial, OP_LOOKUP, "DCIM/secret.jpg", Bytes::kPdf,
       kNotes, OUTCOME_HIDE, {}, "<default>"},
      {"a pdf named .jpg cannot be read as one", kGallery, OP_READ, "Pictures/secret.jpg",
       Bytes::kPdf, kNotes, OUTCOME_HIDE, {}, "<default>"},
      {"a jpeg named .txt is not shared media", kSocial, OP_READ, "Download/photo.txt",
       Bytes::kJpeg, kCamera, OUTCOME_HIDE, {}, "<default>"},
      {"an mp3 named .mp4 is not video", kSocial, OP_READ, "Movies/song.mp4", Bytes::kMp3,
       kMusic, OUTCOME_HIDE, {}, "<default>"},
      {"matching content and name is an image", kSocial, OP_LOOKUP, "DCIM/real.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_ALLOW, {}, "read-images"},
  });
}

TEST_F(EngineTest, HostilePathsFailClosed) {
  std::string nul_path("DCIM/a\0.jpg", 11);
  std::string long_name = "DCIM/" + std::string(256, 'x');
  std::string max_name = "Download/" + std::string(255, 'x');
  for (uint32_t uid : {kRoot, kSocial}) {
    for (const char* path : {"..", "../etc/passwd", "DCIM/../Android/data/com.example.notes",
                             "DCIM/./a.jpg", "DCIM//a.jpg", "/DCIM/a.jpg", "DCIM/",
                             nul_path.c_str(), long_name.c_str()}) {
      Request r;
      r.uid = uid;
      r.op = OP_READ;
      r.path = path == nul_path.c_str() ? absl::string_view(nul_path) : absl::string_view(path);
      Decision d = engine_->Decide(r);
      EXPECT_EQ(d.outcome, OUTCOME_DENY) << path;
      EXPECT_EQ(std::string(d.rule_name), "<invalid-path>") << path;
    }
  }
  Check({{"a 255-byte name is fine", kNotes, OP_CREATE, max_name.c_str(), Bytes::kNone,
          std::nullopt, OUTCOME_ALLOW, {}, "create-anything-in-download-documents"},
         {"newlines and invalid UTF-8 are just bytes", kNotes, OP_CREATE,
          "Download/a\nb\xff\xfe.txt", Bytes::kNone, std::nullopt, OUTCOME_ALLOW, {},
          "create-anything-in-download-documents"}});
}

TEST_F(EngineTest, UnknownCallersAndRequestsFailClosed) {
  Check({
      {"unregistered app uid sees no media", kUnknownApp, OP_LOOKUP, "DCIM/a.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_HIDE, {}, "<default>"},
      {"unregistered app uid still owns what it made", kUnknownApp, OP_READ, "Download/x.bin",
       Bytes::kNone, kUnknownApp, OUTCOME_ALLOW, {}, "owner-full-access"},
  });
  Request r;
  r.uid = kSocial;
  r.path = "DCIM/a.jpg";
  Decision d = engine_->Decide(r);  // no op
  EXPECT_EQ(d.outcome, OUTCOME_DENY);
  EXPECT_EQ(std::string(d.rule_name), "<invalid-request>");

  r.op = OP_READ;  // content not given: nothing media-specific can be granted
  d = engine_->Decide(r);
  EXPECT_EQ(d.outcome, OUTCOME_HIDE);
}

TEST_F(EngineTest, DecisionsExplainThemselves) {
  Decision d = Decide({"", kSocial, OP_READ, "DCIM/a.jpg", Bytes::kJpeg, kCamera});
  ASSERT_GE(d.rule_index, 0);
  EXPECT_FALSE(d.reason.empty());
  EXPECT_EQ(engine_->rule_location(static_cast<size_t>(d.rule_index)).rfind(
                "policy/configs/android-strict.textproto:", 0),
            0u);
}


// Policy.location_guard: location belongs to the file, whatever rule lets the caller read it.
TEST_F(EngineTest, LocationGuardRedactsWhateverRuleAllowsTheRead) {
  Check({
      {"a JPEG named .txt, all-files access", kFiles, OP_READ, "Download/trip.txt", Bytes::kJpeg,
       kNotes, OUTCOME_ALLOW_REDACTED, {}, "<location-guard>", NODE_TYPE_FILE, Loc::kPresent},
      {"another app's photo in the caller's own area", kSocial, OP_READ,
       "Android/data/com.example.social/x.jpg", Bytes::kJpeg, kCamera, OUTCOME_ALLOW_REDACTED, {},
       "<location-guard>", NODE_TYPE_FILE, Loc::kPresent},
      {"entitled", kGallery, OP_READ, "Android/data/com.example.gallery/x.jpg", Bytes::kJpeg,
       kCamera, OUTCOME_ALLOW, {}, "own-app-dirs", NODE_TYPE_FILE, Loc::kPresent},
      {"owner", kNotes, OP_READ, "Download/trip.txt", Bytes::kJpeg, kNotes, OUTCOME_ALLOW, {},
       "owner-full-access", NODE_TYPE_FILE, Loc::kPresent},
      {"system", kSystem, OP_READ, "Download/trip.txt", Bytes::kJpeg, kNotes, OUTCOME_ALLOW, {},
       "privileged-uids-bypass", NODE_TYPE_FILE, Loc::kPresent},
      {"a PDF carries none", kFiles, OP_READ, "Download/a.pdf", Bytes::kPdf, kNotes,
       OUTCOME_ALLOW, {}, "all-files-access", NODE_TYPE_FILE},
      {"a photo scanned clean", kFiles, OP_READ, "Download/trip.txt", Bytes::kJpeg, kNotes,
       OUTCOME_ALLOW, {}, "all-files-access", NODE_TYPE_FILE, Loc::kNone},
  });
}

TEST_F(EngineTest, LocationGuardRefusesWritesByRedactedReaders) {
  Check({
      {"photo with location", kFiles, OP_WRITE, "DCIM/Camera/a.jpg", Bytes::kJpeg, kCamera,
       OUTCOME_DENY, ERRNO_EACCES, "<location-guard>", NODE_TYPE_FILE, Loc::kPresent},
      {"photo scanned clean: may hold location tomorrow", kFiles, OP_WRITE, "DCIM/Camera/a.jpg",
       Bytes::kJpeg, kCamera, OUTCOME_DENY, ERRNO_EACCES, "<location-guard>", NODE_TYPE_FILE,
       Loc::kNone},
      {"video", kFiles, OP_WRITE, "Movies/v.mp4", Bytes::kMp4, kCamera, OUTCOME_DENY,
       ERRNO_EACCES, "<location-guard>", NODE_TYPE_FILE, Loc::kNone},
      {"a PDF", kFiles, OP_WRITE, "Download/a.pdf", Bytes::kPdf, kNotes, OUTCOME_ALLOW, {},
       "all-files-access"},
      {"owner", kCamera, OP_WRITE, "DCIM/Camera/a.jpg", Bytes::kJpeg, kCamera, OUTCOME_ALLOW, {},
       "owner-full-access", NODE_TYPE_FILE, Loc::kPresent},
  });
}

// clang-format on

std::unique_ptr<const Engine> EngineFor(const std::string& policy) {
  absl::StatusOr<LoadedConfig> config = LoadConfig({policy, "policy/configs/apps.textproto", ""});
  EXPECT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<const Engine>> engine = Engine::Create(*config);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return std::move(*engine);
}

// Callers the soundness tests below try: root, system, shell, an unknown app, another user's
// app, and every app the registry names.
std::vector<uint32_t> SampleCallers(const Engine& engine) {
  std::vector<uint32_t> uids = {0, 1000, 2000, 10999, 1010062};
  for (const auto& record : engine.apps().records()) uids.push_back(record.app_id);
  return uids;
}

// Policy.redact_place_names: place names are location unless the policy says otherwise, and then
// every redacted decision, whichever rule or the location guard made it, fills coordinates only.
TEST(RedactPlaceNamesTest, DefaultOnAndOffOnlyWhenFalse) {
  constexpr EnumMask kPlaces = Bit(REDACTION_IPTC_PLACE) | Bit(REDACTION_XMP_PLACE);
  constexpr EnumMask kCoordinates =
      Bit(REDACTION_EXIF_GPS) | Bit(REDACTION_XMP_GPS) | Bit(REDACTION_ISOBMFF_LOCATION);
  for (Tristate value : {TRISTATE_UNSPECIFIED, TRISTATE_TRUE, TRISTATE_FALSE}) {
    absl::StatusOr<LoadedConfig> config =
        LoadConfig({"policy/configs/android.textproto", "policy/configs/apps.textproto", ""});
    ASSERT_TRUE(config.ok()) << config.status();
    config->policy.set_redact_place_names(value);
    absl::StatusOr<std::unique_ptr<const Engine>> engine = Engine::Create(*config);
    ASSERT_TRUE(engine.ok()) << engine.status();
    EnumMask want = value == TRISTATE_FALSE ? kCoordinates : kCoordinates | kPlaces;
    EXPECT_EQ((*engine)->redaction_kinds(), want) << Tristate_Name(value);
    media::ContentFacts located = media::FactsFromName("a.jpg");
    located.location = media::LocationPresence::kPresent;
    Request r;
    r.uid = kSocial;
    r.op = OP_READ;
    r.path = "DCIM/Camera/a.jpg";
    r.node_type = NODE_TYPE_FILE;
    r.owner_uid = kCamera;
    r.content = &located;
    Decision d = (*engine)->Decide(r);
    ASSERT_EQ(d.outcome, OUTCOME_ALLOW_REDACTED) << d.reason;
    EXPECT_EQ(d.redact, want) << Tristate_Name(value);
    // All-files access reading another app's photo elsewhere fills the same.
    r.uid = kFiles;
    r.path = "Download/trip.jpg";
    d = (*engine)->Decide(r);
    ASSERT_EQ(d.outcome, OUTCOME_ALLOW_REDACTED) << d.reason;
    EXPECT_EQ(d.redact, want) << Tristate_Name(value);
  }
  EXPECT_EQ(EngineFor("policy/configs/android.textproto")->redaction_kinds() & kPlaces, kPlaces);
  EXPECT_EQ(EngineFor("policy/configs/permissive.textproto")->redaction_kinds() & kPlaces, kPlaces);
}

// Only a policy whose decisions cannot depend on the caller lets the kernel cache names for all.
TEST(CallerIndependenceTest, PermissiveIsAndroidIsNot) {
  EXPECT_TRUE(EngineFor("policy/configs/permissive.textproto")->caller_independent());
  EXPECT_FALSE(EngineFor("policy/configs/android.textproto")->caller_independent());
  EXPECT_FALSE(EngineFor("policy/configs/enterprise.textproto")->caller_independent());
}

// Only a policy whose decisions cannot depend on where a file is lets a rename skip the read
// checks of everything it moves.
TEST(PlaceIndependenceTest, PermissiveIsAndroidIsNot) {
  EXPECT_TRUE(EngineFor("policy/configs/permissive.textproto")->place_independent());
  EXPECT_FALSE(EngineFor("policy/configs/android.textproto")->place_independent());
  EXPECT_FALSE(EngineFor("policy/configs/enterprise.textproto")->place_independent());
}

// Below the storage root the kernel allows any depth: a place-independent policy judges a path
// longer than PATH_MAX - 1 like any other, a policy with path rules refuses it; malformed paths
// fail under both.
TEST(PlaceIndependenceTest, OnlyAPlaceIndependentPolicyTakesPathsLongerThanPathMax) {
  std::string deep = "Download";
  while (deep.size() <= 2 * kMaxPathBytes) deep += "/" + std::string(200, 'd');
  std::string bad_deep = deep + "/../x";
  std::string long_segment = deep + "/" + std::string(256, 's');
  for (const char* policy :
       {"policy/configs/permissive.textproto", "policy/configs/android.textproto"}) {
    std::unique_ptr<const Engine> engine = EngineFor(policy);
    Request r;
    r.uid = kRoot;
    r.op = OP_CREATE;
    r.path = deep;
    Decision d = engine->Decide(r);
    if (engine->place_independent()) {
      EXPECT_EQ(d.outcome, OUTCOME_ALLOW) << policy;
    } else {
      EXPECT_EQ(std::string(d.rule_name), "<invalid-path>") << policy;
    }
    for (const std::string& path : {bad_deep, long_segment}) {
      r.path = path;
      EXPECT_EQ(std::string(engine->Decide(r).rule_name), "<invalid-path>") << policy;
    }
  }
}

// Directories every caller of the storage's user may look up, proved from the rules alone; and
// the proof agrees with the decisions for every sample app, root, an unknown uid and the owner.
TEST(CallerIndependenceTest, AndroidDirectoriesVisibleToEveryCallerAreProved) {
  std::unique_ptr<const Engine> android = EngineFor("policy/configs/android.textproto");
  for (const char* path :
       {"", "DCIM", "DCIM/Camera", "Music", "Android", "Android/data", "Android/obb",
        "Android/media", "Android/media/com.example.notes", "Download/trip/day1", "MyStuff"}) {
    EXPECT_TRUE(android->VisibleToEveryCaller(path)) << path;
  }
  // Whose private area a path is in depends on the caller; an invalid path proves nothing.
  for (const char* path : {"Android/data/com.example.notes", "Android/obb/com.example.notes/x",
                           "Android/data/com.unknown.app/files", "a/../b"}) {
    EXPECT_FALSE(android->VisibleToEveryCaller(path)) << path;
  }
  std::unique_ptr<const Engine> permissive = EngineFor("policy/configs/permissive.textproto");
  EXPECT_TRUE(permissive->VisibleToEveryCaller("Android/data/com.example.notes"));
}

TEST(CallerIndependenceTest, ProvedVisibleDirectoriesAreVisibleToEverySampleCaller) {
  std::unique_ptr<const Engine> android = EngineFor("policy/configs/android.textproto");
  std::vector<uint32_t> uids = {0, 1000, 2000, 10999, 99999};
  for (const auto& record : android->apps().records()) uids.push_back(record.app_id);
  for (const char* path : {"DCIM", "DCIM/Camera", "Android/data", "Download/trip/day1"}) {
    ASSERT_TRUE(android->VisibleToEveryCaller(path));
    for (uint32_t uid : uids) {
      for (std::optional<uint32_t> owner : {std::optional<uint32_t>(), std::optional(uid)}) {
        Request r;
        r.uid = uid;
        r.op = OP_LOOKUP;
        r.path = path;
        r.node_type = NODE_TYPE_DIRECTORY;
        r.owner_uid = owner;
        EXPECT_TRUE(android->Decide(r).Permits()) << path << " uid " << uid;
      }
    }
  }
}

// DecideLookup answers each question exactly as Decide does, for every sample caller, owned or
// not, over paths and contents that reach different rules.
TEST(DecideLookupTest, EqualsTheSeparateDecisions) {
  std::unique_ptr<const Engine> android = EngineFor("policy/configs/android.textproto");
  std::vector<uint32_t> uids = {0, 1000, 10999, 1010062};
  for (const auto& record : android->apps().records())
    uids.push_back(10000 + record.app_id % 10000);
  for (const auto& record : android->apps().records()) uids.push_back(record.app_id);
  media::ContentFacts photo = media::FactsFromFormat("a.jpg", media::MediaFormat::kJpeg);
  media::ContentFacts song = media::FactsFromFormat("a.mp3", media::MediaFormat::kMp3);
  media::ContentFacts text = media::FactsFromFormat("a.txt", media::MediaFormat::kUnknown);
  media::ContentFacts located = photo;
  located.location = media::LocationPresence::kPresent;
  int compared = 0;
  for (uint32_t uid : uids) {
    for (const char* path : {"DCIM/Camera/a.jpg", "Music/a.mp3", "Documents/a.txt",
                             "Android/data/com.example.notes/a.txt", "a.txt", "bad/../x"}) {
      for (const media::ContentFacts* content : {&photo, &song, &text}) {
        for (std::optional<uint32_t> owner : {std::optional<uint32_t>(), std::optional(uid)}) {
          Request r;
          r.uid = uid;
          r.path = path;
          r.node_type = NODE_TYPE_FILE;
          r.content = content;
          r.owner_uid = owner;
          LookupDecisions d = android->DecideLookup(r, &located);
          r.op = OP_LOOKUP;
          Decision lookup = android->Decide(r);
          EXPECT_EQ(d.lookup.outcome, lookup.outcome) << uid << " " << path;
          EXPECT_EQ(d.lookup.rule_name, lookup.rule_name) << uid << " " << path;
          if (!lookup.Permits()) continue;
          r.op = OP_READ;
          Decision read = android->Decide(r);
          EXPECT_EQ(d.read.outcome, read.outcome) << uid << " " << path;
          EXPECT_EQ(d.read.rule_name, read.rule_name) << uid << " " << path;
          r.content = read.outcome == OUTCOME_ALLOW ? &located : content;
          Decision if_located = android->Decide(r);
          EXPECT_EQ(d.read_if_located.outcome, if_located.outcome) << uid << " " << path;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 100);
}

// HiddenWhateverIsThere is sound: where it proves a HIDE, DecideLookup finds the name for no
// object there (file or directory, any content, owned by the caller or not), for every sample
// caller of both shipped Android policies and the permissive one.
TEST(HiddenWhateverIsThereTest, AProvedHideHidesEveryObject) {
  media::ContentFacts photo = media::FactsFromFormat("a.jpg", media::MediaFormat::kJpeg);
  media::ContentFacts song = media::FactsFromFormat("a.mp3", media::MediaFormat::kMp3);
  media::ContentFacts text = media::FactsFromFormat("a.txt", media::MediaFormat::kUnknown);
  media::ContentFacts located = photo;
  located.location = media::LocationPresence::kPresent;
  int proved = 0;
  int unproved = 0;
  for (const char* config :
       {"policy/configs/android.textproto", "policy/configs/android-strict.textproto",
        "policy/configs/permissive.textproto"}) {
    std::unique_ptr<const Engine> engine = EngineFor(config);
    std::vector<uint32_t> uids = SampleCallers(*engine);
    for (uint32_t uid : uids) {
      for (const char* path :
           {"DCIM/Camera/a.jpg", "Music/a.mp3", "Documents/a.txt", "Download/x",
            "Android/data/com.example.notes", "Android/data/com.example.notes/files/a.txt",
            "Android/obb/com.example.gallery/x.obb", "Android/media/com.example.notes/a.jpg",
            "Android/data/com.not.installed", "ANDROID/DATA/COM.EXAMPLE.NOTES/x", "a.txt"}) {
        Request who;
        who.uid = uid;
        who.path = path;
        std::optional<Decision> hidden = engine->HiddenWhateverIsThere(who);
        (hidden ? proved : unproved)++;
        if (!hidden) continue;
        EXPECT_EQ(hidden->outcome, OUTCOME_HIDE);
        for (NodeType node : {NODE_TYPE_FILE, NODE_TYPE_DIRECTORY}) {
          for (const media::ContentFacts* content : {&photo, &song, &text, &located}) {
            for (std::optional<uint32_t> owner : {std::optional<uint32_t>(), std::optional(uid)}) {
              Request r = who;
              r.node_type = node;
              r.content = content;
              r.owner_uid = owner;
              EXPECT_FALSE(engine->DecideLookup(r, &located).found)
                  << config << " uid " << uid << " " << path << " proved hidden by "
                  << hidden->rule_name << " but found";
            }
          }
        }
      }
    }
  }
  // Both answers occur, so the loop above checked something.
  EXPECT_GT(proved, 20);
  EXPECT_GT(unproved, 20);
}

// DependsOnContent is sound: where it proves a decision free of the content, Decide gives the
// same answer for every content (none, a photo with and without location, a song, text, content
// whose location could not be read), for every sample caller, operation, creator and path of the
// shipped policies.
TEST(DependsOnContentTest, AProvedIndependenceHoldsForEveryContent) {
  media::ContentFacts photo = media::FactsFromFormat("a.jpg", media::MediaFormat::kJpeg);
  photo.location = media::LocationPresence::kAbsent;
  media::ContentFacts located = photo;
  located.location = media::LocationPresence::kPresent;
  media::ContentFacts malformed = photo;
  malformed.location = media::LocationPresence::kMalformed;
  media::ContentFacts song = media::FactsFromFormat("a.mp3", media::MediaFormat::kMp3);
  media::ContentFacts text = media::FactsFromFormat("a.txt", media::MediaFormat::kUnknown);
  int proved = 0;
  int unproved = 0;
  for (const char* config :
       {"policy/configs/android.textproto", "policy/configs/android-strict.textproto",
        "policy/configs/permissive.textproto"}) {
    std::unique_ptr<const Engine> engine = EngineFor(config);
    std::vector<uint32_t> uids = SampleCallers(*engine);
    for (uint32_t uid : uids) {
      for (const char* path : {"DCIM/Camera/a.jpg", "Music/a.mp3", "Documents/a.txt", "Download/x",
                               "Android/data/com.example.notes/files/a.txt",
                               "Android/media/com.example.notes/a.jpg", "a.txt"}) {
        for (Op op : {OP_LOOKUP, OP_READ, OP_WRITE, OP_CREATE, OP_DELETE, OP_RENAME, OP_SETATTR}) {
          for (std::optional<uint32_t> owner :
               {std::optional<uint32_t>(), std::optional(uid), std::optional(kCamera)}) {
            Request r;
            r.uid = uid;
            r.path = path;
            r.op = op;
            r.node_type = NODE_TYPE_FILE;
            r.owner_uid = owner;
            bool depends = engine->DependsOnContent(r);
            (depends ? unproved : proved)++;
            if (depends) continue;
            r.content = nullptr;
            Decision first = engine->Decide(r);
            for (const media::ContentFacts* content :
                 {&photo, &located, &malformed, &song, &text}) {
              r.content = content;
              Decision d = engine->Decide(r);
              EXPECT_EQ(d.outcome, first.outcome)
                  << config << " uid " << uid << " " << path << " op " << op << " " << d.rule_name;
              EXPECT_EQ(d.error, first.error) << config << " uid " << uid << " " << path;
              EXPECT_EQ(d.redact, first.redact) << config << " uid " << uid << " " << path;
              EXPECT_EQ(d.rule_name, first.rule_name) << config << " uid " << uid << " " << path;
            }
          }
        }
      }
    }
  }
  // Both answers occur, so the loop above checked something.
  EXPECT_GT(proved, 1000);
  EXPECT_GT(unproved, 1000);
}

// What it proves under Android's rules: an owner's own file needs no content to judge a lookup,
// a read, a write, a SETATTR or an unlink; another app's file does (its media class decides).
TEST(DependsOnContentTest, OwnersWritesAreJudgedWithoutContent) {
  std::unique_ptr<const Engine> engine = EngineFor("policy/configs/android.textproto");
  auto depends = [&engine](uint32_t uid, std::optional<uint32_t> owner, Op op) {
    Request r;
    r.uid = uid;
    r.path = "Download/tree/a.c";
    r.op = op;
    r.node_type = NODE_TYPE_FILE;
    r.owner_uid = owner;
    return engine->DependsOnContent(r);
  };
  for (Op op : {OP_LOOKUP, OP_READ, OP_WRITE, OP_SETATTR, OP_DELETE}) {
    EXPECT_FALSE(depends(kNotes, kNotes, op)) << op;
    EXPECT_TRUE(depends(kGallery, kNotes, op)) << op;
  }
  // All-files access without location: the media redaction rules, which look at the content,
  // come before the rule that lets it read and write anything.
  EXPECT_TRUE(depends(kFiles, kNotes, OP_READ));
  EXPECT_TRUE(depends(kFiles, kNotes, OP_WRITE));
}

// What it must prove: another package's private area (present or not, any spelling), under
// strict and listing visibility alike; and what it must leave to the object: names whose
// visibility depends on their content or creator, the caller's own area, names listing finds.
TEST(HiddenWhateverIsThereTest, OtherPackagesPrivateAreasAreHiddenByPathAlone) {
  for (const char* config :
       {"policy/configs/android.textproto", "policy/configs/android-strict.textproto"}) {
    std::unique_ptr<const Engine> engine = EngineFor(config);
    auto hidden = [&engine](uint32_t uid, const char* path) {
      Request r;
      r.uid = uid;
      r.path = path;
      return engine->HiddenWhateverIsThere(r).has_value();
    };
    EXPECT_TRUE(hidden(kMusic, "Android/data/com.example.notes")) << config;
    EXPECT_TRUE(hidden(kMusic, "Android/data/com.not.installed")) << config;
    EXPECT_TRUE(hidden(kMusic, "android/DATA/Com.Example.Notes/files/x")) << config;
    EXPECT_TRUE(hidden(kSocial, "Android/obb/com.example.gallery/main.obb")) << config;
    EXPECT_FALSE(hidden(kNotes, "Android/data/com.example.notes/files/x")) << config;
    EXPECT_FALSE(hidden(kSocial, "Music/a.mp3")) << config;
    // Not even all-files access opens another app's Android/data (as on Android 11 and later).
    EXPECT_TRUE(hidden(kFiles, "Android/data/com.example.notes")) << config;
    EXPECT_FALSE(hidden(kRoot, "Android/data/com.example.notes")) << config;
  }
  Request permissive;
  permissive.uid = kMusic;
  permissive.path = "Android/data/com.example.notes";
  EXPECT_FALSE(EngineFor("policy/configs/permissive.textproto")
                   ->HiddenWhateverIsThere(permissive)
                   .has_value());
}

// LISTING (android.textproto) against STRICT (android-strict.textproto), same rules.
Request VisibilityRequest(uint32_t uid, Op op, const char* path, const media::ContentFacts* facts,
                          NodeType node = NODE_TYPE_FILE) {
  Request r;
  r.uid = uid;
  r.op = op;
  r.path = path;
  r.node_type = node;
  r.content = facts;
  r.owner_uid = kNotes;
  return r;
}

TEST(VisibilityTest, ShippedPoliciesDeclareTheirVisibility) {
  EXPECT_EQ(EngineFor("policy/configs/android.textproto")->visibility(), VISIBILITY_LISTING);
  EXPECT_EQ(EngineFor("policy/configs/android-strict.textproto")->visibility(), VISIBILITY_STRICT);
  EXPECT_EQ(EngineFor("policy/configs/permissive.textproto")->visibility(), VISIBILITY_STRICT)
      << "unset is strict";
}

// Outside separate-mount areas, a LOOKUP under LISTING finds every name; listings (the lookup
// decision) still show only what the rules allow.
TEST(VisibilityTest, ListingFindsNamesOutsideSeparateMountAreas) {
  std::unique_ptr<const Engine> listing = EngineFor("policy/configs/android.textproto");
  std::unique_ptr<const Engine> strict = EngineFor("policy/configs/android-strict.textproto");
  for (const char* path : {"Download/notes.pdf", "Documents/a/b.txt", "DCIM", "notes.txt",
                           "Android/data", "Android/media/com.example.notes/x.pdf"}) {
    EXPECT_TRUE(listing->FoundByEveryCaller(path)) << path;
    EXPECT_FALSE(strict->FoundByEveryCaller(path)) << path;
  }
  for (const char* path : {"Android/data/com.example.notes", "Android/obb/com.example.notes/x",
                           "android/DATA/com.example.notes/f", "a/../b"}) {
    EXPECT_FALSE(listing->FoundByEveryCaller(path)) << path;
  }
  media::ContentFacts pdf = media::FactsFromName("notes.pdf");
  Request r = VisibilityRequest(kCamera, OP_LOOKUP, "Download/notes.pdf", &pdf);
  LookupDecisions seen_listing = listing->DecideLookup(r, nullptr);
  LookupDecisions seen_strict = strict->DecideLookup(r, nullptr);
  EXPECT_EQ(seen_listing.lookup.outcome, OUTCOME_HIDE) << "left out of listings";
  EXPECT_TRUE(seen_listing.found) << "found by a stat";
  EXPECT_EQ(seen_listing.read.outcome, OUTCOME_DENY);
  EXPECT_EQ(seen_strict.lookup.outcome, OUTCOME_HIDE);
  EXPECT_FALSE(seen_strict.found);
  // Another package's private area and another user's caller: the rules decide, as under STRICT.
  Request private_area = VisibilityRequest(kCamera, OP_LOOKUP, "Android/data/com.example.notes",
                                           nullptr, NODE_TYPE_DIRECTORY);
  EXPECT_FALSE(listing->DecideLookup(private_area, nullptr).found);
  Request other_user = VisibilityRequest(kUser10 + kNotes, OP_LOOKUP, "Download/notes.pdf", &pdf);
  EXPECT_FALSE(listing->DecideLookup(other_user, nullptr).found);
}

// Every other operation on a known but hidden name is refused with EACCES under LISTING, and
// stays "absent" (HIDE: ENOENT) under STRICT and where the rules alone decide.
TEST(VisibilityTest, ListingRefusesKnownHiddenNamesWithEacces) {
  std::unique_ptr<const Engine> listing = EngineFor("policy/configs/android.textproto");
  std::unique_ptr<const Engine> strict = EngineFor("policy/configs/android-strict.textproto");
  media::ContentFacts pdf = media::FactsFromName("notes.pdf");
  for (Op op : {OP_READ, OP_WRITE, OP_DELETE, OP_RENAME, OP_SETATTR}) {
    Request r = VisibilityRequest(kCamera, op, "Download/notes.pdf", &pdf);
    Decision d = listing->Decide(r);
    EXPECT_EQ(d.outcome, OUTCOME_DENY) << Op_Name(op);
    EXPECT_EQ(d.error, ERRNO_EACCES) << Op_Name(op);
    EXPECT_EQ(strict->Decide(r).outcome, OUTCOME_HIDE) << Op_Name(op);
  }
  EXPECT_EQ(
      listing->Decide(VisibilityRequest(kCamera, OP_LOOKUP, "Download/notes.pdf", &pdf)).outcome,
      OUTCOME_HIDE)
      << "the lookup decision is what listings show";
  EXPECT_EQ(
      listing->Decide(VisibilityRequest(kCamera, OP_READ, "Android/data/com.example.notes/f", &pdf))
          .outcome,
      OUTCOME_HIDE);
  EXPECT_EQ(
      listing->Decide(VisibilityRequest(kUser10 + kNotes, OP_READ, "Download/notes.pdf", &pdf))
          .outcome,
      OUTCOME_HIDE);
  // The owner still reads its file.
  EXPECT_EQ(listing->Decide(VisibilityRequest(kNotes, OP_READ, "Download/notes.pdf", &pdf)).outcome,
            OUTCOME_ALLOW);
}

// A directory's link count counts its subdirectories: shown only where the rules show every one
// of them to every caller.
TEST(VisibilityTest, SubdirectoriesVisibleToEveryCallerAreProved) {
  std::unique_ptr<const Engine> android = EngineFor("policy/configs/android.textproto");
  for (const char* path : {"", "DCIM", "Download", "Download/trip", "Android", "Android/media",
                           "Android/media/com.example.notes", "MyStuff/a"}) {
    EXPECT_TRUE(android->SubdirectoriesVisibleToEveryCaller(path)) << path;
  }
  // Their children are packages' private areas (or inside one).
  for (const char* path : {"Android/data", "Android/obb", "Android/data/com.example.notes",
                           "Android/obb/com.example.notes/x"}) {
    EXPECT_FALSE(android->SubdirectoriesVisibleToEveryCaller(path)) << path;
  }
}

}  // namespace
}  // namespace scopedfs::policy
