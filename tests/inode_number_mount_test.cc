// The inode numbers apps see. Under ANDROID semantics they must say nothing about other objects:
// tmpfs numbers in sequence, so the lower numbers of two of an app's files would count what other
// apps (hidden files included) made in between. They must still be stable for an object and its
// hard links, and the same in stat, in a listing and right after a create. Under POSIX
// semantics they are the lower numbers.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

// st_ino of `path` as `uid` sees it (0 if the stat failed).
uint64_t InoAs(const App& app, const std::string& path) {
  AppResult r = app.Run(absl::StrCat("stat ", path), [path] {
    AppResult out;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      out.err = errno;
    } else {
      out.value = static_cast<int64_t>(st.st_ino);
    }
    return out;
  });
  EXPECT_TRUE(Succeeds(r));
  return static_cast<uint64_t>(r.value);
}

// st_ino of a file `app` creates at `path`, from fstat on the fd the create returned.
uint64_t CreateAs(const App& app, const std::string& path) {
  AppResult r = app.Run(absl::StrCat("create ", path), [path] {
    AppResult out;
    int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      out.err = errno;
    } else {
      out.value = static_cast<int64_t>(st.st_ino);
    }
    if (fd >= 0) close(fd);
    return out;
  });
  EXPECT_TRUE(Succeeds(r));
  return static_cast<uint64_t>(r.value);
}

// name -> d_ino of a listing of `dir` as `app` sees it.
std::map<std::string, uint64_t> DinosAs(const App& app, const std::string& dir) {
  AppResult r = app.Run(absl::StrCat("list ", dir), [dir] {
    AppResult out;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) {
      out.err = errno;
      return out;
    }
    while (dirent* ent = readdir(d)) {
      absl::StrAppend(&out.data, ent->d_name, "=", ent->d_ino, "\n");
    }
    closedir(d);
    return out;
  });
  EXPECT_TRUE(Succeeds(r));
  std::map<std::string, uint64_t> dinos;
  for (absl::string_view line : absl::StrSplit(r.data, '\n', absl::SkipEmpty())) {
    std::vector<std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    uint64_t ino;
    if (kv.size() == 2 && absl::SimpleAtoi(kv[1], &ino)) dinos[kv[0]] = ino;
  }
  return dinos;
}

uint64_t LowerIno(const ScopedStorage& storage, const std::string& rel) {
  struct stat st;
  EXPECT_EQ(lstat(storage.Lower(rel).c_str(), &st), 0) << rel;
  return st.st_ino;
}

class InodeNumberMountTest : public MountTest {};

// The attack: notes makes two files with camera making `hidden` files, which notes cannot see,
// in between; the gap between notes' numbers must not depend on `hidden`.
TEST_F(InodeNumberMountTest, GapBetweenOwnFilesRevealsNoHiddenCreations) {
  App notes = As(kNotes), camera = As(kCamera);
  auto gap = [&](const std::string& tag, int hidden) {
    uint64_t first = CreateAs(notes, absl::StrCat("Download/", tag, "_a.txt"));
    for (int i = 0; i < hidden; ++i) {
      EXPECT_TRUE(Succeeds(camera.Create(absl::StrCat("Download/", tag, "_hidden", i, ".txt"))));
    }
    uint64_t second = CreateAs(notes, absl::StrCat("Download/", tag, "_b.txt"));
    return second - first;  // modulo 2^64
  };
  uint64_t none = gap("x", 0);
  uint64_t twenty = gap("y", 20);
  // The lower numbers count them: twenty - none == 20 on tmpfs.
  EXPECT_NE(twenty - none, 20u) << "the gap grew by the number of hidden files";
  EXPECT_NE(none, 1u) << "own files are numbered in sequence";
  EXPECT_NE(InoAs(notes, "Download/x_a.txt"), LowerIno(storage_, "Download/x_a.txt"));
}

// Numbers of files created one after another are in no order (a sequence would be increasing:
// the chance that 20 hashed numbers come out increasing is 1 in 20!).
TEST_F(InodeNumberMountTest, OwnFilesAreNotNumberedInOrder) {
  std::vector<uint64_t> inos;
  for (int i = 0; i < 20; ++i) inos.push_back(CreateAs(As(kNotes), absl::StrCat("Download/", i)));
  EXPECT_FALSE(std::is_sorted(inos.begin(), inos.end()));
}

// Variant: still one number per object: stable across stats, shared by hard links (made in the
// lower tree, as a link through the mount may be refused), the same in the create reply, in
// stat and in a listing, for directories and "." too.
TEST_F(InodeNumberMountTest, NumbersAreStableSharedByLinksAndAgreeWithListings) {
  App notes = As(kNotes);
  uint64_t created = CreateAs(notes, "Download/f.txt");
  ASSERT_EQ(
      link(storage_.Lower("Download/f.txt").c_str(), storage_.Lower("Download/f_link.txt").c_str()),
      0);
  uint64_t stat1 = InoAs(notes, "Download/f.txt");
  EXPECT_EQ(created, stat1);
  EXPECT_EQ(InoAs(notes, "Download/f.txt"), stat1);
  EXPECT_EQ(InoAs(notes, "Download/f_link.txt"), stat1);
  EXPECT_EQ(InoAs(As(kFiles), "Download/f.txt"), stat1) << "numbers do not depend on the caller";
  std::map<std::string, uint64_t> dinos = DinosAs(notes, "Download");
  EXPECT_EQ(dinos["f.txt"], stat1);
  EXPECT_EQ(dinos["f_link.txt"], stat1);
  EXPECT_EQ(dinos["."], InoAs(notes, "Download"));
  EXPECT_TRUE(Succeeds(notes.Mkdir("Download/sub")));
  EXPECT_EQ(DinosAs(notes, "Download")["sub"], InoAs(notes, "Download/sub"));
  EXPECT_NE(InoAs(notes, "Download/sub"), LowerIno(storage_, "Download/sub"));
}

// A new key at each start: the same lower files get other numbers from the next daemon, so numbers
// seen before a restart say nothing about the hash after it (2^-64 per file to keep its number).
TEST_F(InodeNumberMountTest, ARestartNumbersEveryFileAfresh) {
  App notes = As(kNotes);
  std::vector<std::string> paths = {"Download", "Download/a.txt", "Download/b.txt"};
  CreateAs(notes, paths[1]);
  CreateAs(notes, paths[2]);
  std::vector<uint64_t> before;
  for (const std::string& p : paths) before.push_back(InoAs(notes, p));
  DaemonExit exit = storage_.StopDaemon();
  ASSERT_TRUE(exit.clean()) << exit.ToString();
  SCOPEDFS_ASSERT_OK(storage_.StartDaemon(Options()));
  for (size_t i = 0; i < paths.size(); ++i) {
    uint64_t after = InoAs(notes, paths[i]);
    EXPECT_NE(after, before[i]) << paths[i] << " kept its number across a restart";
    EXPECT_NE(after, LowerIno(storage_, paths[i])) << paths[i];
  }
  EXPECT_EQ(InoAs(notes, paths[1]), InoAs(notes, paths[1])) << "unstable within one run";
}

// POSIX semantics keep the lower numbers.
class PosixInodeNumberMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.policy = "policy/configs/permissive.textproto";
    return options;
  }
};

TEST_F(PosixInodeNumberMountTest, NumbersAreTheLowerOnes) {
  App notes = As(kRoot);  // the lower directories are root's, and POSIX checks their modes
  uint64_t created = CreateAs(notes, "Download/p.txt");
  EXPECT_EQ(created, LowerIno(storage_, "Download/p.txt"));
  EXPECT_EQ(InoAs(notes, "Download/p.txt"), LowerIno(storage_, "Download/p.txt"));
  EXPECT_EQ(DinosAs(notes, "Download")["p.txt"], LowerIno(storage_, "Download/p.txt"));
  EXPECT_EQ(InoAs(notes, "Download"), LowerIno(storage_, "Download"));
}

}  // namespace
}  // namespace scopedfs::tests
