// The audit log of a running daemon (issue 13): a refusal and a redacted open each write one
// line in the documented form; a name that does not exist writes none; a hostile name cannot
// forge a line; the rate limit holds a looping app to its burst and the log says how many lines
// it dropped. audit2why explains a line the daemon wrote, and live explain answers with the
// daemon's policy and the file's real content.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

// The daemon's log lines that start with `prefix`.
std::vector<std::string> LinesStartingWith(const std::string& log, absl::string_view prefix) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::StartsWith(line, prefix)) out.emplace_back(line);
  }
  return out;
}

class AuditMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.control_socket = true;
    o.extra_flags = extra_flags_;
    return o;
  }
  std::vector<std::string> extra_flags_;
};

TEST_F(AuditMountTest, ARefusalIsOneLineAndAMissingNameIsNone) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Music/song.mp3", Mp3Bytes(), kMusic));
  EXPECT_TRUE(FailsWith(As(kSocial).Read("Music/song.mp3"), ENOENT));
  EXPECT_TRUE(FailsWith(As(kSocial).Read("Music/no-such-song.mp3"), ENOENT));
  std::vector<std::string> denied =
      LinesStartingWith(storage_.DaemonLog(), "scopedfs: denied { lookup } uid=10062 pid=");
  ASSERT_EQ(denied.size(), 1u) << storage_.DaemonLog();
  EXPECT_TRUE(absl::EndsWith(denied[0],
                             " pkg=com.example.social path=\"Music/song.mp3\" tclass=file "
                             "media=audio location=absent owner=10063 rule=\"<default>\" "
                             "errno=ENOENT"))
      << denied[0];
  EXPECT_FALSE(absl::StrContains(storage_.DaemonLog(), "no-such-song")) << storage_.DaemonLog();
  // The owner and an entitled app are not refused: no line.
  EXPECT_TRUE(Succeeds(As(kMusic).Read("Music/song.mp3")));
  EXPECT_EQ(LinesStartingWith(storage_.DaemonLog(), "scopedfs: denied").size(), 1u);

  // audit2why on the line the daemon wrote names the permission that would change it.
  absl::StatusOr<std::string> why =
      storage_.Ctl({"audit2why", "--policy=policy/configs/android-strict.textproto",
                    "--apps=policy/configs/apps.textproto", denied[0]});
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(absl::StrContains(*why, "decision: HIDE (ENOENT)")) << *why;
  EXPECT_TRUE(absl::StrContains(*why, "change:   with android.permission.READ_MEDIA_AUDIO: ALLOW"))
      << *why;
}

TEST_F(AuditMountTest, ACreateInTheWrongPlaceIsLoggedWithItsErrno) {
  EXPECT_TRUE(FailsWith(As(kCamera).Create("Music/clip.jpg", "x"), EPERM));
  std::vector<std::string> denied =
      LinesStartingWith(storage_.DaemonLog(), "scopedfs: denied { create } uid=10065 ");
  ASSERT_EQ(denied.size(), 1u) << storage_.DaemonLog();
  EXPECT_TRUE(absl::StrContains(denied[0], "path=\"Music/clip.jpg\"")) << denied[0];
  EXPECT_TRUE(absl::EndsWith(denied[0], "errno=EPERM")) << denied[0];
}

// A create onto a name that exists but is hidden is refused by the lookup of that name: the line
// names the create the app made, and the lookup that refused it, and audit2why replays the lookup.
TEST_F(AuditMountTest, ARefusedCreateNamesTheCreateAndTheLookupThatRefusedIt) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/theirs.pdf", PdfBytes(), kNotes));
  EXPECT_TRUE(FailsWith(As(kSocial).Create("Download/theirs.pdf", "x"), EACCES));
  std::vector<std::string> denied =
      LinesStartingWith(storage_.DaemonLog(), "scopedfs: denied { create } uid=10062 ");
  ASSERT_EQ(denied.size(), 1u) << storage_.DaemonLog();
  EXPECT_TRUE(absl::StrContains(denied[0], "path=\"Download/theirs.pdf\"")) << denied[0];
  EXPECT_TRUE(absl::StrContains(denied[0], " judged=lookup errno=EACCES")) << denied[0];
  absl::StatusOr<std::string> why =
      storage_.Ctl({"audit2why", "--policy=policy/configs/android-strict.textproto",
                    "--apps=policy/configs/apps.textproto", denied[0]});
  ASSERT_TRUE(why.ok()) << why.status();
  EXPECT_TRUE(absl::StrContains(*why, "logged:   denied { create }")) << *why;
  EXPECT_TRUE(absl::StrContains(*why, "judged:   lookup of that name")) << *why;
  EXPECT_TRUE(absl::StrContains(*why, "decision: HIDE")) << *why;
}

TEST_F(AuditMountTest, ARedactedOpenIsOneLine) {
  SCOPEDFS_ASSERT_OK(
      storage_.WriteLower("DCIM/Camera/gps.jpg", ReadFileOrDie("tests/media/gps.jpg"), kCamera));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("DCIM/Camera/clean.jpg",
                                         ReadFileOrDie("tests/media/clean.jpg"), kCamera));
  ASSERT_TRUE(Succeeds(As(kSocial).Read("DCIM/Camera/gps.jpg")));
  ASSERT_TRUE(Succeeds(As(kGallery).Read("DCIM/Camera/gps.jpg")));   // entitled: raw, no line
  ASSERT_TRUE(Succeeds(As(kSocial).Read("DCIM/Camera/clean.jpg")));  // nothing to fill: no line
  std::vector<std::string> redacted = LinesStartingWith(storage_.DaemonLog(), "scopedfs: redacted");
  ASSERT_EQ(redacted.size(), 1u) << storage_.DaemonLog();
  EXPECT_TRUE(absl::StartsWith(redacted[0], "scopedfs: redacted { read } uid=10062 pid="));
  EXPECT_TRUE(absl::StrContains(redacted[0],
                                " pkg=com.example.social path=\"DCIM/Camera/gps.jpg\" tclass=file "
                                "media=image location=present owner=10065 rule=\""))
      << redacted[0];
  EXPECT_TRUE(absl::StrContains(redacted[0], " redact=EXIF_GPS")) << redacted[0];
}

TEST_F(AuditMountTest, AHostileNameCannotForgeALine) {
  std::string name = "Documents/a\"\nscopedfs: denied { read } uid=0 path=\"x\x1b[2J.txt";
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(name, "secret", kNotes));
  AppResult listed = As(kNotes).List("Documents");
  ASSERT_TRUE(Succeeds(listed));
  ASSERT_EQ(listed.names.size(), 1u);
  // Another app asks for the exact name: hidden, and logged.
  EXPECT_TRUE(FailsWith(As(kSocial).Stat("Documents/" + listed.names[0]), ENOENT));
  std::string log = storage_.DaemonLog();
  EXPECT_TRUE(LinesStartingWith(log, "scopedfs: denied { read } uid=0").empty()) << log;
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  std::vector<std::string> denied = LinesStartingWith(log, "scopedfs: denied { lookup } uid=10062");
  // The kernel may send a stat's LOOKUP more than once: one line per refused request.
  ASSERT_GE(denied.size(), 1u) << log;
  for (const std::string& line : denied) EXPECT_EQ(line, denied[0]);
  EXPECT_TRUE(absl::StrContains(
      denied[0],
      "path=\"Documents/a\\x22\\x0ascopedfs: denied { read } uid=0 path=\\x22x\\x1b[2J.txt\""))
      << denied[0];
}

class RateLimitedAuditMountTest : public AuditMountTest {
 protected:
  RateLimitedAuditMountTest() { extra_flags_ = {"--audit_burst=5", "--audit_rate=1"}; }
};

TEST_F(RateLimitedAuditMountTest, ALoopingAppIsHeldToTheBurstAndTheDropsAreCounted) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/secret.pdf", PdfBytes(), kNotes));
  constexpr int kTries = 200;
  AppResult r = As(kSocial).Run("stat a hidden document 200 times", [] {
    AppResult out;
    struct stat st;
    for (int i = 0; i < kTries; ++i) {
      if (stat("Documents/secret.pdf", &st) == 0 || errno != ENOENT) out.err = EPROTO;
    }
    return out;
  });
  ASSERT_TRUE(Succeeds(r));
  DaemonExit e = storage_.StopDaemon();  // closing the log reports the drops
  EXPECT_TRUE(e.clean()) << e.ToString();
  std::string log = storage_.DaemonLog();
  int written = static_cast<int>(LinesStartingWith(log, "scopedfs: denied").size());
  // The burst, plus at most what 1/s refilled while the loop ran (it takes well under a second
  // on an idle machine; allow a few).
  EXPECT_GE(written, 5);
  EXPECT_LE(written, 5 + 5) << log;
  int dropped = 0;
  for (const std::string& line : LinesStartingWith(log, "scopedfs: audit: ")) {
    int n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(line.substr(17, line.find(' ', 17) - 17), &n)) << line;
    EXPECT_TRUE(absl::EndsWith(line, "lines dropped (rate limit: burst 5, 1/s)")) << line;
    dropped += n;
  }
  // Every refusal is either written or counted.
  EXPECT_GE(written + dropped, kTries) << log;
  EXPECT_LE(written + dropped, 2 * kTries) << log;
}

TEST_F(AuditMountTest, LiveExplainUsesTheFilesRealContent) {
  SCOPEDFS_ASSERT_OK(
      storage_.WriteLower("DCIM/Camera/gps.jpg", ReadFileOrDie("tests/media/gps.jpg"), kCamera));
  // A PDF named like a photo: content decides, so it is no image.
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Pictures/secret.jpg", PdfBytes(), kNotes));
  absl::StatusOr<std::string> photo =
      storage_.Ctl({"explain", "--uid=10062", "--op=read", "--path=DCIM/Camera/gps.jpg"});
  ASSERT_TRUE(photo.ok()) << photo.status();
  EXPECT_TRUE(absl::StartsWith(*photo, "decision: ALLOW_REDACTED\n")) << *photo;
  EXPECT_TRUE(absl::StrContains(*photo, "content:  IMAGE; location present (")) << *photo;
  EXPECT_TRUE(absl::StrContains(*photo,
                                "live: the daemon's facts for this version of the file "
                                "(format jpeg"))
      << *photo;
  EXPECT_TRUE(absl::StrContains(*photo, "\nfill:     [")) << *photo;
  EXPECT_TRUE(absl::StrContains(*photo, "\nowner:    uid 10065\n")) << *photo;

  // The same question offline, with the same bytes as --content and the owner given: the same
  // decision, rule and fills.
  absl::StatusOr<std::string> offline = storage_.Ctl(
      {"explain", "--socket=", "--policy=policy/configs/android-strict.textproto",
       "--apps=policy/configs/apps.textproto", "--uid=10062", "--op=read",
       "--path=DCIM/Camera/gps.jpg", "--content=tests/media/gps.jpg", "--owner_uid=10065"});
  ASSERT_TRUE(offline.ok()) << offline.status();
  auto lines_of = [](const std::string& text, absl::string_view label) {
    std::string out;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (absl::StartsWith(line, label)) absl::StrAppend(&out, line, "\n");
    }
    return out;
  };
  for (absl::string_view label : {"decision:", "rule:", "fill:", "redact:"}) {
    EXPECT_EQ(lines_of(*photo, label), lines_of(*offline, label)) << label;
  }

  absl::StatusOr<std::string> pdf =
      storage_.Ctl({"explain", "--uid=10062", "--op=read", "--path=Pictures/secret.jpg"});
  ASSERT_TRUE(pdf.ok()) << pdf.status();
  EXPECT_TRUE(absl::StartsWith(*pdf, "decision: HIDE")) << *pdf;
  EXPECT_TRUE(absl::StrContains(*pdf, "content:  NONE;")) << *pdf;

  // A reload changes the live answer at once: to the permissive rules, under the mount's
  // (ANDROID) semantics, since a reload cannot change those.
  std::ifstream in("policy/configs/permissive.textproto");
  std::stringstream text;
  text << in.rdbuf();
  std::string allow_all = text.str();
  size_t at = allow_all.find("SEMANTICS_POSIX");
  ASSERT_NE(at, std::string::npos);
  allow_all.replace(at, strlen("SEMANTICS_POSIX"), "SEMANTICS_ANDROID");
  std::string allow_all_path = absl::StrCat(::testing::TempDir(), "/allow_all.textproto");
  std::ofstream(allow_all_path) << allow_all;
  absl::StatusOr<std::string> reloaded =
      storage_.Ctl({"reload", absl::StrCat("--policy=", allow_all_path)});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  absl::StatusOr<std::string> after =
      storage_.Ctl({"explain", "--uid=10062", "--op=read", "--path=Pictures/secret.jpg"});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(absl::StartsWith(*after, "decision: ALLOW\n")) << *after;

  // Errors are clear.
  EXPECT_FALSE(storage_.Ctl({"explain", "--uid=10062", "--op=fly", "--path=a"}).ok());
  EXPECT_FALSE(storage_.Ctl({"explain", "--uid=10062", "--op=read", "--path=../etc"}).ok());
}

}  // namespace
}  // namespace scopedfs::tests
