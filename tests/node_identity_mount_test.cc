// A node is an object, not an inode number. ext4 hands a freed number to the next file at once,
// while the kernel may still hold the old object's node (a dentry under another spelling, an
// O_PATH fd): the next file to get the number must be usable by its owner, and nothing of the old
// object (its handle, attributes, facts) may reach it, nor anything of the new one the holder of
// the old. Each test runs on an ext4 lower (which reuses numbers) and on tmpfs (which does not).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

class NodeIdentityTest : public MountTest, public ::testing::WithParamInterface<LowerKind> {
 protected:
  LowerKind Lower() const override { return GetParam(); }
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = "policy/configs/android.textproto";
    o.control_socket = true;
    return o;
  }

  ino_t LowerIno(const std::string& rel) const {
    struct stat st;
    return lstat(storage_.Lower(rel).c_str(), &st) == 0 ? st.st_ino : 0;
  }

  // On ext4 the scenario is only exercised if the number was handed out again: say so, loudly.
  void ExpectReused(ino_t before, const std::string& rel) {
    if (Lower() != LowerKind::kExt4) return;
    ASSERT_EQ(LowerIno(rel), before)
        << "ext4 did not give " << rel << " the removed object's number: the test no longer "
        << "exercises a reused number";
  }
};

// The reported sequence: a name cached under another spelling, the file removed, a new one made.
TEST_P(NodeIdentityTest, NewFileAfterAnotherSpellingIsUsable) {
  AppResult r = As(kNotes).Run("e1, E1, rm, e2", [] {
    AppResult out;
    auto put = [](const char* path, const char* bytes) {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) return errno;
      int err = ::write(fd, bytes, 1) == 1 ? 0 : errno;
      close(fd);
      return err;
    };
    struct stat st;
    if ((out.err = put("Download/e1.txt", "x")) != 0) return out.data = "write e1", out;
    if (stat("download/E1.TXT", &st) != 0) return out.err = errno, out.data = "stat E1", out;
    if (unlink("Download/e1.txt") != 0) return out.err = errno, out.data = "rm e1", out;
    if ((out.err = put("Download/e2.txt", "y")) != 0) return out.data = "write e2", out;
    if (stat("Download/e2.txt", &st) != 0) return out.err = errno, out.data = "stat e2", out;
    char c = 0;
    int fd = open("Download/e2.txt", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out.err = errno, out.data = "open e2", out;
    if (read(fd, &c, 1) != 1) out.err = errno;
    close(fd);
    out.data = std::string(1, c);
    return out;
  });
  ASSERT_TRUE(Succeeds(r)) << r.data;
  EXPECT_EQ(r.data, "y");
  AppResult root = As(kRoot).Read("Download/e2.txt");
  ASSERT_TRUE(Succeeds(root));
  EXPECT_EQ(root.data, "y");
}

// The lower tree changed behind the daemon: a name the kernel still holds is removed, and a new
// file gets its number. The new file's owner reads it; root does too.
TEST_P(NodeIdentityTest, FileMadeBehindTheDaemonWithAReusedNumberIsUsable) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/a.txt", "old", kNotes));
  ASSERT_TRUE(Succeeds(As(kNotes).Stat("Download/a.txt")));  // the kernel now holds its node
  ino_t old_ino = LowerIno("Download/a.txt");
  ASSERT_EQ(unlink(storage_.Lower("Download/a.txt").c_str()), 0);
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/b.txt", "fresh bytes", kNotes));
  ExpectReused(old_ino, "Download/b.txt");
  AppResult r = As(kNotes).Read("Download/b.txt");
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.data, "fresh bytes");
  AppResult s = As(kNotes).Stat("Download/b.txt");
  ASSERT_TRUE(Succeeds(s));
  EXPECT_EQ(s.value, 11);
  EXPECT_TRUE(Succeeds(As(kRoot).Read("Download/b.txt")));
  EXPECT_TRUE(FailsWith(As(kNotes).Stat("Download/a.txt"), ENOENT));
  // The daemon saw the number come back as another object, and made it a node of its own.
  absl::StatusOr<DaemonStats> stats = storage_.Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  if (Lower() == LowerKind::kExt4) {
    EXPECT_GE((*stats)["reused_numbers"], 1);
  }
}

// A directory the same way: its new owner creates in it and lists it.
TEST_P(NodeIdentityTest, DirectoryWithAReusedNumberIsUsable) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/old", kNotes));
  ASSERT_TRUE(Succeeds(As(kNotes).List("Download/old")));
  ino_t old_ino = LowerIno("Download/old");
  ASSERT_EQ(rmdir(storage_.Lower("Download/old").c_str()), 0);
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/new", kNotes));
  // ext4 frees the number once the last reference goes (the daemon's listing of it may still be
  // closing): a few more tries until the new directory gets it.
  for (int attempt = 0;
       attempt < 50 && Lower() == LowerKind::kExt4 && LowerIno("Download/new") != old_ino;
       ++attempt) {
    ASSERT_EQ(rmdir(storage_.Lower("Download/new").c_str()), 0);
    usleep(20'000);
    SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Download/new", kNotes));
  }
  ExpectReused(old_ino, "Download/new");
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Download/new/inside.txt", "z")));
  AppResult listing = As(kNotes).List("Download/new");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_EQ(listing.names, std::vector<std::string>{"inside.txt"});
}

// The attack: an app holds O_PATH fds of its own files through the mount; the files go and
// another app's private files get their numbers. The victim uses its files; the attacker's fds
// tell it nothing of them (neither a cached nor a fresh stat gives the victim's size).
TEST_P(NodeIdentityTest, HeldOPathFdCapturesNothing) {
  constexpr int kFiles = 4;
  const std::string victim_dir = "Android/data/com.example.notes/files";
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.notes", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower(victim_dir, kNotes));
  for (int i = 0; i < kFiles; ++i) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("Download/bait", i), "b", kCamera));
  }
  // The attacker: O_PATH fds of its files, held while the test goes on (a pipe handshake).
  int go[2], ready[2];
  ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  const int64_t victim_size = 5000;
  pid_t attacker = StartAs(
      kCamera,
      [&] {
        close(go[1]);
        close(ready[0]);
        std::vector<int> fds;
        for (int i = 0; i < kFiles; ++i) {
          int fd = open(absl::StrCat("Download/bait", i).c_str(), O_PATH | O_CLOEXEC);
          if (fd < 0) return 10;
          fds.push_back(fd);
        }
        char c = 1;
        if (write(ready[1], &c, 1) != 1) return 11;
        if (read(go[0], &c, 1) != 1) return 12;  // the victim has made its files
        for (int fd : fds) {
          struct statx stx;
          for (int flags : {AT_STATX_DONT_SYNC, AT_STATX_FORCE_SYNC}) {
            if (statx(fd, "", AT_EMPTY_PATH | flags, STATX_SIZE, &stx) == 0 &&
                static_cast<int64_t>(stx.stx_size) == victim_size) {
              return 20;  // the victim's size, through a number it once had
            }
          }
        }
        return 0;
      },
      storage_.mountpoint());
  close(go[0]);
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1) << "the attacker could not hold its fds";
  std::vector<ino_t> freed;
  for (int i = 0; i < kFiles; ++i) {
    std::string rel = absl::StrCat("Download/bait", i);
    freed.push_back(LowerIno(rel));
    ASSERT_EQ(unlink(storage_.Lower(rel).c_str()), 0);
  }
  // The victim's files, made through the mount; on ext4 they take the freed numbers.
  int reused = 0;
  for (int i = 0; i < kFiles; ++i) {
    std::string rel = absl::StrCat(victim_dir, "/f", i);
    ASSERT_TRUE(Succeeds(As(kNotes).Write(rel, std::string(victim_size, 'v'), O_WRONLY | O_CREAT)));
    for (ino_t ino : freed) reused += LowerIno(rel) == ino ? 1 : 0;
  }
  if (Lower() == LowerKind::kExt4) {
    EXPECT_GT(reused, 0) << "no victim file got a freed number: the attack was not exercised";
  }
  for (int i = 0; i < kFiles; ++i) {
    std::string rel = absl::StrCat(victim_dir, "/f", i);
    AppResult r = As(kNotes).Read(rel);
    ASSERT_TRUE(Succeeds(r));
    EXPECT_EQ(r.data.size(), static_cast<size_t>(victim_size));
  }
  ASSERT_EQ(write(go[1], &c, 1), 1);
  close(go[1]);
  close(ready[0]);
  EXPECT_EQ(WaitChild(attacker), 0) << "10-12: the attacker failed; 20: it saw the victim's size";
  // Once the attacker is gone, still the victim's.
  for (int i = 0; i < kFiles; ++i) {
    EXPECT_TRUE(Succeeds(As(kNotes).Stat(absl::StrCat(victim_dir, "/f", i))));
  }
}

// Through the mount, a removed file that the kernel still holds (an O_PATH fd) answers a stat as
// a native unlinked file does, rather than ESTALE.
TEST_P(NodeIdentityTest, RemovedFileHeldOpenStillAnswersStat) {
  AppResult r = As(kNotes).Run("hold, rm, fstat", [] {
    AppResult out;
    int fd = open("Download/held.txt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, "abc", 3) != 3) return out.err = errno, out.data = "create", out;
    close(fd);
    int path_fd = open("Download/held.txt", O_PATH | O_CLOEXEC);
    if (path_fd < 0) return out.err = errno, out.data = "O_PATH", out;
    if (unlink("Download/held.txt") != 0) return out.err = errno, out.data = "rm", out;
    struct statx stx;
    if (statx(path_fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_SIZE | STATX_NLINK, &stx) !=
        0) {
      out.err = errno;
      out.data = "statx";
    } else {
      out.value = static_cast<int64_t>(stx.stx_size);
      out.mode = stx.stx_nlink;
    }
    close(path_fd);
    return out;
  });
  ASSERT_TRUE(Succeeds(r)) << r.data;
  EXPECT_EQ(r.value, 3);
  EXPECT_EQ(r.mode, 0u) << "link count of the removed file";
}

INSTANTIATE_TEST_SUITE_P(Lowers, NodeIdentityTest,
                         ::testing::Values(LowerKind::kExt4, LowerKind::kTmpfs),
                         [](const ::testing::TestParamInfo<LowerKind>& info) {
                           return LowerKindName(info.param);
                         });

}  // namespace
}  // namespace scopedfs::tests
