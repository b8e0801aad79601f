// Attributes cached on a mount only one Android user's apps reach (--mount_reached_by_one_user),
// under android.textproto's LISTING visibility, as real app uids: each test runs with the option
// and without it (the default, where no attribute is cached). With it, another app's second stat
// of a Download file costs no request, a size written through passthrough is fresh for the next
// app, the owner's walk of files of unknown content asks nothing and sees at once what an app
// owed their redacted view changed (a chmod changes nothing), a warm listing looks up no file
// the kernel holds fresh but still a photo for an app owed its redacted view, a reload still
// invalidates, and an app of another user is refused wherever it reaches the daemon (redacted
// views' names: redacted_cache_mount_test). Needs root and /dev/fuse; skips, saying so, without
// them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kDoc[] = "Download/notes.pdf";    // notes' document, found by every app (LISTING)
constexpr char kPhoto[] = "Pictures/photo.jpg";  // camera's photo: its view differs by app
constexpr uid_t kOtherUsersFiles = 10 * 100000 + kFiles;
// notes' text file of unknown content: the all-files app (no ACCESS_MEDIA_LOCATION) reads and
// writes it through its redacted view, its owner through the raw one.
constexpr char kText[] = "Documents/todo.txt";

// A pipe a test and an app's process talk through; closed when it goes.
struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (pipe(fds) == 0) r = fds[0], w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

class UserCacheMountTest : public OneUserParamMountTest {
 protected:
  void SetUp() override {
    OneUserParamMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kDoc, PdfBytes(), kNotes));
    // A photo with GPS: apps without location access read a redacted view of it.
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kPhoto, ReadFileOrDie("tests/media/gps.jpg"), kCamera));
  }
  // READDIRPLUS entries sent without a lookup (the kernel held them fresh).
  int64_t EntriesWithoutLookup() {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? (*stats)["listing_entries_without_lookup"] : -1;
  }
  // The size `uid`'s stat of `path` finds, or -errno.
  int64_t SizeAs(uid_t uid, const std::string& path) {
    AppResult r = As(uid).Run(absl::StrCat("stat ", path), [path] {
      AppResult out;
      struct stat st;
      if (stat(path.c_str(), &st) != 0) {
        out.err = errno;
      } else {
        out.data = std::to_string(st.st_size);
      }
      return out;
    });
    return r.err != 0 ? -r.err : std::stoll(r.data);
  }
  // `uid`'s stat of every path in one process; the first failure's errno, else the last stat's
  // size (value) and mode.
  AppResult StatAll(uid_t uid, const std::vector<std::string>& paths) {
    return As(uid).Run("stat all", [paths] {
      AppResult out;
      struct stat st;
      for (const std::string& path : paths) {
        if (stat(path.c_str(), &st) != 0) {
          out.err = errno;
          return out;
        }
        out.value = st.st_size;
        out.mode = st.st_mode;
      }
      return out;
    });
  }
  // The all-files app opens kText for writing (its redacted view), the owner stats it (a LOOKUP
  // that brings the raw view back into the owner's dentry, with its attributes cached with the
  // name when cached()), the all-files app makes `change` through its open descriptor, and the
  // owner stats it again while the all-files app still holds its descriptor (so the drop cannot
  // come from the RELEASE that its close sends): what that stat finds.
  AppResult OwnersStatAfterChangeThroughRedactedView(const std::function<int(int fd)>& change) {
    absl::Status written = storage_.WriteLower(kText, "x", kNotes);
    EXPECT_TRUE(written.ok()) << written;
    Pipe opened, go, changed, done;
    pid_t changer = StartAs(
        kFiles,
        [&] {
          int fd = open(kText, O_WRONLY | O_CLOEXEC);
          if (fd < 0) return 100 + errno;
          if (write(opened.w, "O", 1) != 1) return 1;
          char c;
          if (read(go.r, &c, 1) != 1) return 2;
          int rc = change(fd) == 0 ? 0 : 100 + errno;
          if (write(changed.w, "C", 1) != 1) return 3;
          if (read(done.r, &c, 1) != 1) return 4;
          close(fd);
          return rc;
        },
        storage_.mountpoint());
    close(changed.w);  // a changer that dies early ends the wait for its "changed"
    changed.w = -1;
    char c;
    bool is_open = read(opened.r, &c, 1) == 1;
    AppResult before = As(kNotes).Stat(kText);
    EXPECT_TRUE(Succeeds(before));
    EXPECT_EQ(before.value, 1);
    if (cached()) {
      EXPECT_EQ(AskedForThreeStats(kNotes, kText), 0) << "its attributes are cached";
    }
    EXPECT_EQ(write(go.w, "G", 1), 1);
    EXPECT_EQ(read(changed.r, &c, 1), 1);
    AppResult after = As(kNotes).Stat(kText);
    EXPECT_EQ(write(done.w, "D", 1), 1);
    int exit = WaitChild(changer);
    EXPECT_TRUE(is_open);
    EXPECT_EQ(exit, 0) << (exit > 100 ? ErrnoName(exit - 100) : "");
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (stats.ok()) {
      EXPECT_EQ((*stats)["open_mediated"], 1) << "not through the redacted view";
    }
    return after;
  }
  // Requests three stats of `path` by `uid`, in one process, cost the daemon.
  int64_t AskedForThreeStats(uid_t uid, const std::string& path) {
    int64_t before = Asked();
    AppResult r = As(uid).StatRepeatedly(path, 3);
    EXPECT_TRUE(Succeeds(r));
    return Asked() - before;
  }
};

INSTANTIATE_TEST_SUITE_P(UserCache, UserCacheMountTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "OneUser" : "Default";
                         });

// After the owner's stat, another app of the same user stats the file three times: with the
// option the kernel answers all three from its cache; without it each costs a GETATTR.
TEST_P(UserCacheMountTest, AnotherAppsStatSendsNoGetattr) {
  ASSERT_EQ(SizeAs(kNotes, kDoc), static_cast<int64_t>(PdfBytes().size()));
  int64_t getattrs = Served("getattr");
  int64_t asked = AskedForThreeStats(kCamera, kDoc);
  if (cached()) {
    EXPECT_EQ(asked, 0) << "the attributes the owner's stat left were not used";
  } else {
    EXPECT_GE(Served("getattr") - getattrs, 3) << "attributes are never cached by default";
  }
}

// A file written through passthrough (its writes never reach the daemon) shows its new size to
// another app after close, although that app's earlier stat cached its attributes; so does a
// truncate.
TEST_P(UserCacheMountTest, SizeIsFreshAfterAnotherAppsPassthroughWrite) {
  // A document (no location-carrying format), so its name and attributes are cached for every
  // app.
  const std::string path = "Download/grow.pdf";
  const int64_t size = static_cast<int64_t>(PdfBytes().size());
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(path, PdfBytes(), kNotes));
  ASSERT_EQ(SizeAs(kCamera, path), size);
  if (cached()) {
    ASSERT_EQ(AskedForThreeStats(kCamera, path), 0) << "the attributes are cached";
  }
  absl::StatusOr<DaemonStats> before = storage_.Stats();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(Succeeds(As(kNotes).Write(path, std::string(5000, 'x'), O_WRONLY | O_APPEND)));
  absl::StatusOr<DaemonStats> after = storage_.Stats();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)["open_passthrough"] - (*before)["open_passthrough"], 1);
  EXPECT_EQ((*after)["requests_write"], (*before)["requests_write"]) << "a write reached us";
  EXPECT_EQ(SizeAs(kCamera, path), size + 5000) << "a stale size after a passthrough write";
  ASSERT_TRUE(Succeeds(As(kNotes).Truncate(path, size + 7)));
  EXPECT_EQ(SizeAs(kCamera, path), size + 7) << "a stale size after a truncate";
  ASSERT_TRUE(Succeeds(As(kNotes).Write(path, PdfBytes(100), O_WRONLY | O_TRUNC)));
  EXPECT_EQ(SizeAs(kCamera, path), 100) << "a stale size after O_TRUNC";
}

// READDIRPLUS under ANDROID semantics: the owner's second listing of its files sends each as a
// plain name, without a lookup, since the kernel holds each node and its attributes fresh (on a
// one-user mount), and the stats after it ask nothing and find the right sizes. By default the
// kernel holds no attributes, so every entry is looked up again.
TEST_P(UserCacheMountTest, AWarmListingLooksUpNoFileTheKernelHoldsFresh) {
  for (int i = 1; i <= 3; ++i) {
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("Download/warm/f", i, ".txt"),
                                           std::string(i, 'x'), kNotes));
  }
  ASSERT_TRUE(Succeeds(As(kNotes).List("Download/warm")));
  int64_t plain = EntriesWithoutLookup();
  AppResult listed = As(kNotes).List("Download/warm");
  ASSERT_TRUE(Succeeds(listed));
  EXPECT_EQ(absl::StrJoin(listed.names, " "), "f1.txt f2.txt f3.txt");
  EXPECT_EQ(EntriesWithoutLookup() - plain, cached() ? 3 : 0);
  int64_t asked = Asked();
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(SizeAs(kNotes, absl::StrCat("Download/warm/f", i, ".txt")), i);
  }
  if (cached()) {
    EXPECT_EQ(Asked() - asked, 0) << "the kernel did not hold what the listing left";
  }
}

// The same listing by an app owed the redacted view of a photo, after its owner's listings left
// the raw node fresh in the kernel: the photo is looked up (its view is the lookup's to pick), and
// the app reads the redacted bytes. The owner's next listing looks it up too (the kernel's dentry
// may now lead to the redacted node), and the owner reads the raw bytes.
TEST_P(UserCacheMountTest, AWarmListingLooksUpAPhotoForAnAppOwedItsRedactedView) {
  ASSERT_TRUE(Succeeds(As(kCamera).List("Pictures")));
  int64_t plain = EntriesWithoutLookup();
  ASSERT_TRUE(Succeeds(As(kCamera).List("Pictures")));
  EXPECT_EQ(EntriesWithoutLookup() - plain, cached() ? 1 : 0) << "the owner's raw view";
  // The raw node stays in the kernel (and the daemon's table) while the test holds it, after the
  // redacted reader's lookup has pointed the name at the redacted node.
  int held = open(absl::StrCat(storage_.mountpoint(), "/", kPhoto).c_str(), O_PATH | O_CLOEXEC);
  ASSERT_GE(held, 0) << strerror(errno);
  plain = EntriesWithoutLookup();
  AppResult listed = As(kSocial).List("Pictures");
  ASSERT_TRUE(Succeeds(listed));
  EXPECT_EQ(absl::StrJoin(listed.names, " "), "photo.jpg");
  EXPECT_EQ(EntriesWithoutLookup() - plain, 0) << "the photo went plain to a redacted reader";
  AppResult seen = As(kSocial).Read(kPhoto);
  ASSERT_TRUE(Succeeds(seen));
  std::string raw = ReadFileOrDie("tests/media/gps.jpg");
  EXPECT_EQ(seen.data.size(), raw.size());
  EXPECT_NE(seen.data, raw) << "the redacted reader read the raw bytes";
  plain = EntriesWithoutLookup();
  ASSERT_TRUE(Succeeds(As(kCamera).List("Pictures")));
  EXPECT_EQ(EntriesWithoutLookup() - plain, 0)
      << "the photo went plain while a redacted node exists";
  AppResult owners = As(kCamera).Read(kPhoto);
  ASSERT_TRUE(Succeeds(owners));
  EXPECT_TRUE(owners.data == raw) << "the owner read other bytes than its photo's";
  close(held);
}

// Files of unknown content, whose view differs by app (the all-files app reads them redacted):
// the owner's second walk of them costs no LOOKUP and no GETATTR, as its raw view's attributes
// are cached with the name; by default each stat is a GETATTR.
TEST_P(UserCacheMountTest, OwnersSecondWalkOfUnknownContentAsksNothing) {
  std::vector<std::string> paths;
  for (int i = 0; i < 5; ++i) {
    paths.push_back(absl::StrCat("Documents/src/f", i, ".c"));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(paths.back(), "int x;\n", kNotes));
  }
  ASSERT_TRUE(Succeeds(StatAll(kNotes, paths)));
  int64_t lookups = Served("lookup"), getattrs = Served("getattr");
  ASSERT_TRUE(Succeeds(StatAll(kNotes, paths)));
  if (cached()) {
    EXPECT_EQ(Served("lookup") - lookups, 0);
    EXPECT_EQ(Served("getattr") - getattrs, 0) << "the raw views' attributes were not cached";
  } else {
    EXPECT_GE(Served("getattr") - getattrs, 5) << "attributes are never cached by default";
  }
}

// A directory's attributes are the same for every app (its size and link count count nothing
// an app may not see): with the option they are cached with its name, and a file made in it
// through the mount, by any app, shows in its times and a directory made in it in its link count
// at the next stat; by default each stat is a GETATTR.
TEST_P(UserCacheMountTest, ADirectorysAttributesAreCachedAndFreshAfterAChangeInIt) {
  const std::string dir = "Download/album";
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower(dir, kNotes));
  AppResult before = As(kCamera).Stat(dir);
  ASSERT_TRUE(Succeeds(before));
  int64_t getattrs = Served("getattr");
  int64_t asked = AskedForThreeStats(kNotes, dir);
  if (cached()) {
    EXPECT_EQ(asked, 0) << "the directory's attributes were not cached";
  } else {
    EXPECT_GE(Served("getattr") - getattrs, 3) << "attributes are never cached by default";
  }
  ASSERT_TRUE(Succeeds(As(kCamera).Mkdir(dir + "/sub")));
  AppResult stat_after = As(kNotes).Run("stat", [dir] {
    AppResult out;
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) {
      out.err = errno;
    } else {
      out.value = static_cast<int64_t>(st.st_nlink);
      out.data = absl::StrCat(st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
    }
    return out;
  });
  ASSERT_TRUE(Succeeds(stat_after));
  struct stat lower_after;
  ASSERT_EQ(stat(storage_.Lower(dir).c_str(), &lower_after), 0);
  EXPECT_EQ(stat_after.value, 3) << "a stale link count";
  EXPECT_EQ(stat_after.data,
            absl::StrCat(lower_after.st_mtim.tv_sec, ".", lower_after.st_mtim.tv_nsec))
      << "a stale modification time";
}

// A change the all-files app makes through its redacted view of the owner's text file drops the
// attributes the kernel cached with the owner's raw name: the owner's next stat, through that
// cached name, sees the new size or mode at once.
TEST_P(UserCacheMountTest, OwnerSeesAWriteThroughTheRedactedViewAtOnce) {
  AppResult after = OwnersStatAfterChangeThroughRedactedView(
      [](int fd) { return pwrite(fd, "0123456789", 10, 1) == 10 ? 0 : -1; });
  ASSERT_TRUE(Succeeds(after));
  EXPECT_EQ(after.value, 11) << "the owner's cached attributes are stale";
}

// The owner unlinks its text file through its raw name while the all-files app holds the file
// open through its redacted view: that app's fstat finds the link count 0 at once. The kernel
// updates only the inode its dentry of the name leads to (the owner's raw view); the daemon tells
// it of the other view's (an UNLINK tells every node of the object but the one the kernel's
// dentry is known to lead to: KernelsNodeOf in daemon/ops/ops_namespace.cc). An owner's own
// descriptor of the raw view sees it too.
TEST_P(UserCacheMountTest, AnUnlinkShowsInEveryViewsOpenFileAtOnce) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower(kText, "x", kNotes));
  Pipe opened, go, done;
  pid_t holder = StartAs(
      kFiles,
      [&] {
        int fd = open(kText, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 100 + errno;
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_nlink != 1) return 1;  // its attributes, now cached
        if (write(opened.w, "O", 1) != 1) return 2;
        char c;
        if (read(go.r, &c, 1) != 1) return 3;
        if (fstat(fd, &st) != 0) return 100 + errno;
        close(fd);
        return st.st_nlink == 0 ? 0 : 10 + static_cast<int>(st.st_nlink);
      },
      storage_.mountpoint());
  close(opened.w);  // a holder that dies early ends the wait for its "opened"
  opened.w = -1;
  char c;
  bool is_open = read(opened.r, &c, 1) == 1;
  AppResult unlinked = As(kNotes).Run("open, unlink, fstat", [] {
    AppResult r;
    int fd = open(kText, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return r.err = errno, r;
    if (unlink(kText) != 0) r.err = errno;
    if (r.err == 0 && fstat(fd, &st) != 0) r.err = errno;
    r.value = static_cast<int64_t>(st.st_nlink);
    close(fd);
    return r;
  });
  EXPECT_EQ(write(go.w, "G", 1), 1);
  int exit = WaitChild(holder);
  EXPECT_TRUE(is_open);
  ASSERT_TRUE(Succeeds(unlinked));
  EXPECT_EQ(unlinked.value, 0) << "the owner's own descriptor shows a stale link count";
  EXPECT_EQ(exit, 0) << (exit > 100  ? ErrnoName(exit - 100)
                         : exit > 10 ? "the redacted view's descriptor shows a stale link count"
                                     : "the holder failed before");
  absl::StatusOr<DaemonStats> stats = storage_.Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ((*stats)["open_mediated"], 1) << "not through the redacted view";
}

TEST_P(UserCacheMountTest, OwnerSeesATruncateThroughTheRedactedViewAtOnce) {
  AppResult after =
      OwnersStatAfterChangeThroughRedactedView([](int fd) { return ftruncate(fd, 0); });
  ASSERT_TRUE(Succeeds(after));
  EXPECT_EQ(after.value, 0) << "the owner's cached attributes are stale";
}

// Under Android semantics a chmod succeeds and changes nothing (as MediaProvider's pf_setattr):
// through the redacted view too, and the owner sees the mode the file has.
TEST_P(UserCacheMountTest, AChmodThroughTheRedactedViewChangesNothing) {
  AppResult after =
      OwnersStatAfterChangeThroughRedactedView([](int fd) { return fchmod(fd, 0600); });
  ASSERT_TRUE(Succeeds(after));
  struct stat st;
  ASSERT_EQ(stat(storage_.Lower(kText).c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 07777, 0600u) << "the chmod changed the mode";
  EXPECT_EQ(after.mode & 07777, st.st_mode & 07777);
}

// A reload invalidates the cached attributes as it does the names: the next stat asks.
TEST_P(UserCacheMountTest, AReloadInvalidates) {
  ASSERT_EQ(SizeAs(kNotes, kDoc), static_cast<int64_t>(PdfBytes().size()));
  absl::StatusOr<std::string> reloaded =
      storage_.Ctl({"reload", "--policy=policy/configs/android.textproto",
                    "--apps=policy/configs/apps.textproto"});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_GE(AskedForThreeStats(kCamera, kDoc), 1);
}

// An app of another user is refused wherever it reaches the daemon: opens and listings. With the
// option (whose assertion this test breaks on purpose), its stat of a name an app of the user
// cached is answered by the kernel with the cached attributes; without it, refused.
TEST_P(UserCacheMountTest, AnotherUsersAppIsRefusedWhereItReachesTheDaemon) {
  ASSERT_EQ(SizeAs(kNotes, kDoc), static_cast<int64_t>(PdfBytes().size()));
  int64_t size = SizeAs(kOtherUsersFiles, kDoc);
  if (cached()) {
    EXPECT_EQ(size, static_cast<int64_t>(PdfBytes().size())) << "docs/visibility.md says so";
  } else {
    EXPECT_EQ(size, -ENOENT);
  }
  EXPECT_TRUE(FailsWith(As(kOtherUsersFiles).Read(kDoc), ENOENT));
  EXPECT_FALSE(Succeeds(As(kOtherUsersFiles).List("Download")));
  EXPECT_TRUE(FailsWith(As(kOtherUsersFiles).Unlink(kDoc), ENOENT));
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/unseen.pdf", PdfBytes(), kNotes));
  EXPECT_EQ(SizeAs(kOtherUsersFiles, "Download/unseen.pdf"), -ENOENT) << "no app looked it up";
}

}  // namespace
}  // namespace scopedfs::tests
