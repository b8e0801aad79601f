// The audit log of a running daemon (issue 13): a refusal and a redacted open each write one
// line in the documented form; a name that does not exist writes none; a hostile name cannot
// forge a line; the rate limit holds a looping app to its burst and the log says how many lines
// it dropped. audit2why explains a line the daemon wrote, and live explain answers with the
// daemon's policy and the file's real content.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
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
  // The format is known (the head was read to judge the name); location is not: a file the caller
  // does not find is never scanned, so its time tells nothing of its size.
  EXPECT_TRUE(absl::EndsWith(denied[0],
                             " pkg=com.example.social path=\"Music/song.mp3\" tclass=file "
                             "media=audio location=unknown owner=10063 rule=\"<default>\" "
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
  std::string allow_all = ReadFileOrDie("policy/configs/permissive.textproto");
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

// --- Every op that answers with a refusal logs it -----------------------------------------------

// The one "denied" line of `uid` whose text holds `needle`, or a test failure.
std::string OneLine(const std::string& log, absl::string_view prefix, absl::string_view needle) {
  std::vector<std::string> lines;
  for (const std::string& line : LinesStartingWith(log, prefix)) {
    if (absl::StrContains(line, needle)) lines.push_back(line);
  }
  EXPECT_EQ(lines.size(), 1u) << prefix << " ... " << needle << " in:\n" << log;
  return lines.empty() ? "" : lines[0];
}

// access(W_OK) on another app's photo answers what a write would: EACCES, and one line.
TEST_F(AuditMountTest, ARefusedAccessIsLogged) {
  SCOPEDFS_ASSERT_OK(
      storage_.WriteLower("DCIM/Camera/gps.jpg", ReadFileOrDie("tests/media/gps.jpg"), kCamera));
  AppResult r = As(kSocial).Run("access W_OK", [] {
    AppResult out;
    out.err = access("DCIM/Camera/gps.jpg", W_OK) == 0 ? 0 : errno;
    return out;
  });
  EXPECT_TRUE(FailsWith(r, EACCES));
  std::string line = OneLine(storage_.DaemonLog(), "scopedfs: denied { write } uid=10062 ",
                             "path=\"DCIM/Camera/gps.jpg\"");
  EXPECT_TRUE(absl::EndsWith(line, "errno=EACCES")) << line;
}

// An app of another Android user opening this user's storage root: the OPENDIR is refused.
TEST_F(AuditMountTest, ARefusedOpendirIsLogged) {
  constexpr uid_t kIntruder = 10 * 100000 + kNotes;
  AppResult root = As(kIntruder).List(".");
  ASSERT_TRUE(FailsWith(root, ENOENT)) << root;
  std::string line =
      OneLine(storage_.DaemonLog(), "scopedfs: denied { read } uid=1010067 ", "path=\"\"");
  EXPECT_TRUE(absl::StrContains(line, " tclass=dir ")) << line;
  EXPECT_TRUE(absl::EndsWith(line, "errno=ENOENT")) << line;
}

// A rename the layout refuses without any rule: into Android/data/<pkg>, a mount of its own on a
// device (EXDEV). The line names the check in place of a rule.
TEST_F(AuditMountTest, ARenameAcrossMountsIsLogged) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.files", kFiles));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/f.txt", "x", kFiles));
  EXPECT_TRUE(FailsWith(As(kFiles).Rename("Download/f.txt", "Android/data/com.example.files/f.txt"),
                        EXDEV));
  std::string line = OneLine(storage_.DaemonLog(), "scopedfs: denied { rename } uid=10064 ",
                             "path=\"Android/data/com.example.files/f.txt\"");
  EXPECT_TRUE(absl::EndsWith(line, "rule=\"(layout move rules)\" errno=EXDEV")) << line;
}

// A write through a redacted view is judged again against the file as it is now: once its owner
// has written a photo with location into it, the write is refused, and logged.
TEST_F(AuditMountTest, ARefusedWriteIsLogged) {
  constexpr char kShared[] = "Download/shared.bin";
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kShared, Pattern(4096, 7), kNotes));
  ASSERT_TRUE(Succeeds(As(kFiles).Read(kShared)));  // its facts: no carrier format yet
  int opened[2], rewritten[2];
  ASSERT_EQ(pipe(opened), 0);
  ASSERT_EQ(pipe(rewritten), 0);
  std::string lower = storage_.Lower(kShared);
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  // The owner's rewrite, in place (the same inode), once the writer holds its fd.
  std::thread owner([&] {
    char c;
    if (read(opened[0], &c, 1) == 1) {
      int fd = open(lower.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      if (fd >= 0) {
        (void)!write(fd, photo.data(), photo.size());
        close(fd);
      }
    }
    (void)!write(rewritten[1], "g", 1);
  });
  AppResult w = As(kFiles).Run("write after the owner's rewrite", [&] {
    AppResult out;
    int fd = open(kShared, O_WRONLY | O_CLOEXEC);
    (void)!write(opened[1], "o", 1);
    char c;
    (void)!read(rewritten[0], &c, 1);
    if (fd < 0) {
      out.err = 1000 + errno;  // the open itself failed
      return out;
    }
    out.err = pwrite(fd, "zz", 2, 0) == 2 ? 0 : errno;
    close(fd);
    return out;
  });
  owner.join();
  for (int fd : {opened[0], opened[1], rewritten[0], rewritten[1]}) close(fd);
  ASSERT_TRUE(FailsWith(w, EACCES)) << w;
  std::string line = OneLine(storage_.DaemonLog(), "scopedfs: denied { write } uid=10064 ",
                             "path=\"Download/shared.bin\"");
  EXPECT_TRUE(absl::StrContains(line, " location=present ")) << line;
  EXPECT_TRUE(absl::EndsWith(line, "errno=EACCES")) << line;
}

// Symlinks, links and xattrs exist under POSIX semantics only (ENOSYS under ANDROID, before any
// decision): the Android rules under POSIX semantics.
class PosixAuditMountTest : public AuditMountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o = AuditMountTest::Options();
    o.policy = policy_path_;
    return o;
  }
  void SetUp() override {
    policy_path_ = AndroidRulesUnderPosixSemantics();
    ASSERT_FALSE(policy_path_.empty());
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kPhoto, ReadFileOrDie("tests/media/gps.jpg"), kCamera));
    Own(kPhoto, kCamera, 0666);
    for (const char* rel : {"DCIM/Camera", "Music"}) {
      ASSERT_EQ(chmod(storage_.Lower(rel).c_str(), 0777), 0) << rel;
    }
  }
  // Under POSIX semantics the lower file's owner is its creator.
  void Own(const std::string& rel, uid_t uid, mode_t mode) {
    ASSERT_EQ(chown(storage_.Lower(rel).c_str(), uid, uid), 0) << rel;
    ASSERT_EQ(chmod(storage_.Lower(rel).c_str(), mode), 0) << rel;
  }
  static constexpr char kPhoto[] = "DCIM/Camera/gps.jpg";
  std::string policy_path_;
};

TEST_F(PosixAuditMountTest, ARefusedSymlinkIsLogged) {
  EXPECT_TRUE(FailsWith(As(kCamera).Symlink("x", "Music/clip.jpg"), EPERM));
  std::string line = OneLine(storage_.DaemonLog(), "scopedfs: denied { create } uid=10065 ",
                             "path=\"Music/clip.jpg\"");
  EXPECT_TRUE(absl::EndsWith(line, "errno=EPERM")) << line;
}

TEST_F(PosixAuditMountTest, ARefusedLinkIsLogged) {
  EXPECT_TRUE(FailsWith(As(kCamera).Link(kPhoto, "Music/clip.jpg"), EPERM));
  std::string line = OneLine(storage_.DaemonLog(), "scopedfs: denied { create } uid=10065 ",
                             "path=\"Music/clip.jpg\"");
  EXPECT_TRUE(absl::EndsWith(line, "errno=EPERM")) << line;
}

// A link that would give an app more than the photo's own name (gallery, which may only read it,
// could write it under its own Android/media): EXDEV, logged naming the check.
TEST_F(PosixAuditMountTest, ALinkThatWouldGiveMoreIsLogged) {
  constexpr char kGalleryMedia[] = "Android/media/com.example.gallery";
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower(kGalleryMedia));
  Own(kGalleryMedia, kGallery, 0755);
  EXPECT_TRUE(FailsWith(As(kGallery).Link(kPhoto, absl::StrCat(kGalleryMedia, "/x.jpg")), EXDEV));
  std::string line = OneLine(storage_.DaemonLog(), "scopedfs: denied { create } uid=10061 ",
                             "path=\"Android/media/com.example.gallery/x.jpg\"");
  EXPECT_TRUE(absl::EndsWith(line, "rule=\"(a move may not let any app do more)\" errno=EXDEV"))
      << line;
}

TEST_F(PosixAuditMountTest, ARefusedXattrChangeIsLogged) {
  EXPECT_TRUE(FailsWith(As(kSocial).SetXattr(kPhoto, "user.tag", "x"), EACCES));
  std::string line = OneLine(storage_.DaemonLog(), "scopedfs: denied { setattr } uid=10062 ",
                             "path=\"DCIM/Camera/gps.jpg\"");
  EXPECT_TRUE(absl::EndsWith(line, "errno=EACCES")) << line;
}

}  // namespace
}  // namespace scopedfs::tests
