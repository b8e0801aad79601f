// The no-gain check of renames and links, one capability at a time: a policy where a move gains
// exactly one thing for exactly one app (the mover's write, another app's read, another app's
// raw read instead of a redacted one), so each part of the comparison is what refuses it. Under
// the Android rules these gains come together with others (a write with a truncate and a
// removal) or are refused earlier by a decision, so no single part shows there.
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

// The permissive policy (POSIX semantics) with rules in front: files are written only in
// Download/inbox; the music app reads files only in Download/shared (raw) and Download/lobby
// (redacted). Everything else is allowed to everyone.
std::string WriteOneGainPolicy() {
  std::string policy = ReadFileOrDie("policy/configs/permissive.textproto");
  size_t first_rule = policy.find("\nrule {");
  EXPECT_NE(first_rule, std::string::npos);
  if (first_rule == std::string::npos) return "";
  std::string music = absl::StrCat("app { uid { first: ", kMusic, " } } ");
  policy.insert(
      first_rule + 1,
      absl::StrCat(
          "rule { name: \"inbox-writable\" description: \"test\" op: OP_WRITE\n"
          "       path { glob: \"Download/inbox/**\" } action { outcome: OUTCOME_ALLOW } }\n"
          "rule { name: \"no-writes-elsewhere\" description: \"test\" op: OP_WRITE\n"
          "       path { node_type: NODE_TYPE_FILE } action { outcome: OUTCOME_DENY } }\n"
          "rule { name: \"music-reads-shared\" description: \"test\" op: OP_READ ",
          music,
          "\n       path { glob: \"Download/shared/**\" } action { outcome: OUTCOME_ALLOW } }\n"
          "rule { name: \"music-reads-lobby-redacted\" description: \"test\" op: OP_READ ",
          music,
          "\n       path { glob: \"Download/lobby/**\" }\n"
          "       action { outcome: OUTCOME_ALLOW_REDACTED redact: REDACTION_EXIF_GPS } }\n"
          "rule { name: \"music-reads-nothing-else\" description: \"test\" op: OP_READ ",
          music,
          "\n       path { node_type: NODE_TYPE_FILE } action { outcome: OUTCOME_DENY } }\n"));
  std::string path = absl::StrCat(::testing::TempDir(), "/one_gain_policy.textproto");
  std::ofstream(path) << policy;
  return path;
}

class MoveGainMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = policy_path_;
    return o;
  }
  void SetUp() override {
    policy_path_ = WriteOneGainPolicy();
    ASSERT_FALSE(policy_path_.empty());
    MountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* dir :
         {"Download/outbox", "Download/inbox", "Download/shared", "Download/lobby"}) {
      SCOPEDFS_ASSERT_OK(storage_.MkdirLower(dir));
      ASSERT_EQ(chmod(storage_.Lower(dir).c_str(), 0777), 0) << dir;
    }
  }
  // A file of the social app's, readable and writable by everyone as far as modes go: only the
  // policy decides.
  void Put(const std::string& rel, const std::string& content) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(rel, content, kSocial));
    ASSERT_EQ(chmod(storage_.Lower(rel).c_str(), 0666), 0) << rel;
  }
  std::string policy_path_;
};

// The mover gains write and nothing else: refused, as a rename and as a link.
TEST_F(MoveGainMountTest, AMoveThatGivesTheMoverWriteIsRefused) {
  Put("Download/outbox/a.txt", "a");
  ASSERT_TRUE(FailsWith(As(kSocial).Open("Download/outbox/a.txt", O_WRONLY), EACCES));
  EXPECT_TRUE(
      FailsWith(As(kSocial).Rename("Download/outbox/a.txt", "Download/inbox/a.txt"), EXDEV));
  EXPECT_TRUE(FailsWith(As(kSocial).Link("Download/outbox/a.txt", "Download/inbox/b.txt"), EXDEV));
  EXPECT_TRUE(storage_.LowerExists("Download/outbox/a.txt"));
  EXPECT_FALSE(storage_.LowerExists("Download/inbox/a.txt"));
  EXPECT_FALSE(storage_.LowerExists("Download/inbox/b.txt"));
}

// The mover gains nothing, another app gains a read: refused all the same.
TEST_F(MoveGainMountTest, AMoveThatGivesAnotherAppAReadIsRefused) {
  Put("Download/outbox/b.txt", "b");
  ASSERT_TRUE(FailsWith(As(kMusic).Read("Download/outbox/b.txt"), EACCES));
  EXPECT_TRUE(
      FailsWith(As(kSocial).Rename("Download/outbox/b.txt", "Download/shared/b.txt"), EXDEV));
  EXPECT_TRUE(FailsWith(As(kSocial).Link("Download/outbox/b.txt", "Download/shared/c.txt"), EXDEV));
  EXPECT_FALSE(storage_.LowerExists("Download/shared/b.txt"));
  EXPECT_TRUE(FailsWith(As(kMusic).Read("Download/outbox/b.txt"), EACCES));
}

// Another app that reads the photo redacted would read it raw at the new name: refused.
TEST_F(MoveGainMountTest, AMoveThatTurnsAnotherAppsRedactedReadRawIsRefused) {
  std::string photo = ReadFileOrDie("tests/media/gps.jpg");
  Put("Download/lobby/p.jpg", photo);
  AppResult redacted = As(kMusic).Read("Download/lobby/p.jpg");
  ASSERT_TRUE(Succeeds(redacted));
  ASSERT_FALSE(SameBytes(redacted.data, photo)) << "the lobby rule did not redact";
  EXPECT_TRUE(
      FailsWith(As(kSocial).Rename("Download/lobby/p.jpg", "Download/shared/p.jpg"), EXDEV));
  EXPECT_FALSE(storage_.LowerExists("Download/shared/p.jpg"));
  EXPECT_FALSE(SameBytes(As(kMusic).Read("Download/lobby/p.jpg").data, photo));
}

// No blanket refusal: moves that give no app anything are made.
TEST_F(MoveGainMountTest, MovesThatGiveNoOneMoreAreMade) {
  Put("Download/outbox/d.txt", "d");
  Put("Download/lobby/q.jpg", ReadFileOrDie("tests/media/gps.jpg"));
  EXPECT_TRUE(Succeeds(As(kSocial).Rename("Download/outbox/d.txt", "Download/outbox/e.txt")));
  EXPECT_TRUE(Succeeds(As(kSocial).Link("Download/outbox/e.txt", "Download/outbox/f.txt")));
  EXPECT_TRUE(Succeeds(As(kSocial).Rename("Download/lobby/q.jpg", "Download/lobby/r.jpg")));
  EXPECT_TRUE(storage_.LowerExists("Download/outbox/f.txt"));
  EXPECT_TRUE(storage_.LowerExists("Download/lobby/r.jpg"));
}

}  // namespace
}  // namespace scopedfs::tests
