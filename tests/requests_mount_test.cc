// Requests the kernel no longer sends (docs/requests.md), counted by the daemon's request counters
// (scopedfsctl stats: requests_*), and the answers apps get instead: listings cached by the kernel
// under a caller-independent policy and invalidated when any caller changes the directory; xattr
// requests ended for the mount by ENOSYS under ANDROID semantics and --xattr=nosys, answered
// "none" by --xattr=noattr, served by default under POSIX semantics.
// Needs root and /dev/fuse (tags in tests/BUILD).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

class RequestsMountTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions o;
    o.policy = policy_;
    o.control_socket = true;
    o.extra_flags = extra_flags_;
    return o;
  }
  // The named request counter now.
  int64_t Count(const std::string& counter) {
    absl::StatusOr<DaemonStats> stats = storage_.Stats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (!stats.ok()) return -1;
    auto it = stats->find(counter);
    EXPECT_NE(it, stats->end()) << "no counter " << counter;
    return it == stats->end() ? -1 : it->second;
  }
  // How far `counter` moved while `body` ran.
  int64_t During(const std::string& counter, const std::function<void()>& body) {
    int64_t before = Count(counter);
    body();
    return Count(counter) - before;
  }

  std::string policy_ = "policy/configs/permissive.textproto";
  std::vector<std::string> extra_flags_;
};

// --- Listings ----------------------------------------------------------------------------------

constexpr int kFiles = 30;

class ListingCacheTest : public RequestsMountTest {
 protected:
  void SetUp() override {
    RequestsMountTest::SetUp();
    for (int i = 0; i < kFiles; ++i) {
      SCOPEDFS_ASSERT_OK(storage_.WriteLower(absl::StrCat("Documents/l/f", i), "x", kNotes));
    }
    // POSIX semantics check mode bits: let every app change these directories.
    for (const char* dir : {"Documents", "Documents/l"}) {
      ASSERT_EQ(chmod(storage_.Lower(dir).c_str(), 0777), 0) << strerror(errno);
    }
  }
};

// Under a caller-independent policy the kernel keeps a listing: a second listing of the directory,
// by another app, costs no READDIR(PLUS) and shows the same names.
TEST_F(ListingCacheTest, ASecondListingIsServedByTheKernel) {
  AppResult first = As(kNotes).List("Documents/l");
  ASSERT_TRUE(Succeeds(first));
  ASSERT_EQ(first.names.size(), static_cast<size_t>(kFiles));
  AppResult second;
  int64_t readdirs = During("requests_readdir", [&] { second = As(kSocial).List("Documents/l"); });
  ASSERT_TRUE(Succeeds(second));
  EXPECT_EQ(second.names, first.names);
  EXPECT_EQ(readdirs, 0) << "the listing was read from the daemon again";
}

// Any change to the directory through the mount, by any caller, drops the kernel's listing: the
// next listing, by another app, shows it at once.
TEST_F(ListingCacheTest, ChangesByAnyCallerShowInTheNextListing) {
  ASSERT_TRUE(Succeeds(As(kNotes).List("Documents/l")));  // cached now
  ASSERT_TRUE(Succeeds(As(kSocial).Create("Documents/l/new")));
  AppResult listed = As(kNotes).List("Documents/l");
  ASSERT_TRUE(Succeeds(listed));
  EXPECT_TRUE(Contains(listed.names, "new")) << listed;

  ASSERT_TRUE(Succeeds(As(kSocial).Unlink("Documents/l/f0")));
  listed = As(kNotes).List("Documents/l");
  ASSERT_TRUE(Succeeds(listed));
  EXPECT_FALSE(Contains(listed.names, "f0")) << listed;

  ASSERT_TRUE(Succeeds(As(kMusic).Rename("Documents/l/f1", "Documents/l/renamed")));
  listed = As(kNotes).List("Documents/l");
  ASSERT_TRUE(Succeeds(listed));
  EXPECT_FALSE(Contains(listed.names, "f1")) << listed;
  EXPECT_TRUE(Contains(listed.names, "renamed")) << listed;
  EXPECT_EQ(listed.names.size(), static_cast<size_t>(kFiles));  // +new -f0, f1 renamed

  ASSERT_TRUE(Succeeds(As(kMusic).Rename("Documents/l/renamed", "Documents/moved")));
  listed = As(kNotes).List("Documents/l");
  ASSERT_TRUE(Succeeds(listed));
  EXPECT_FALSE(Contains(listed.names, "renamed")) << listed;
}

// A listing's entries come with their attributes (READDIRPLUS), each looked up from the object
// the listing just opened (listing_entries_from_listing): a stat of every listed name then asks
// nothing, and finds the size its own file has (each name's differs).
TEST_F(ListingCacheTest, AListingsEntriesCarryEachNamesOwnAttributes) {
  for (int i = 0; i < kFiles; ++i) {
    SCOPEDFS_ASSERT_OK(
        storage_.WriteLower(absl::StrCat("Documents/s/f", i), std::string(i + 1, 'x'), kNotes));
  }
  int64_t from_listing = Count("listing_entries_from_listing");
  AppResult listed = As(kNotes).List("Documents/s");
  ASSERT_TRUE(Succeeds(listed));
  ASSERT_EQ(listed.names.size(), static_cast<size_t>(kFiles));
  EXPECT_EQ(Count("listing_entries_from_listing") - from_listing, kFiles);
  int64_t asked = Count("requests_lookup") + Count("requests_getattr");
  std::vector<std::string> names = listed.names;
  AppResult r = As(kNotes).Run("stat", [names] {
    AppResult out;
    for (const std::string& name : names) {
      struct stat st;
      if (stat(absl::StrCat("Documents/s/", name).c_str(), &st) != 0) {
        out.err = errno;
        return out;
      }
      // Each name's size against the one its name gives (fN holds N+1 bytes).
      if (!S_ISREG(st.st_mode) || st.st_size != std::stoll(name.substr(1)) + 1) {
        absl::StrAppend(&out.data, " ", name, ":", st.st_size);
      }
    }
    return out;
  });
  ASSERT_TRUE(Succeeds(r));
  EXPECT_EQ(r.data, "") << "names with another's attributes";
  EXPECT_EQ(Count("requests_lookup") + Count("requests_getattr") - asked, 0)
      << "a listed name was asked for again";
}

// A directory read in several chunks (names long enough that one READDIR cannot hold them all)
// lists every name once, with nothing kept per open.
TEST_F(ListingCacheTest, AListingInManyChunksHasEveryNameOnce) {
  std::vector<std::string> expected;
  for (int i = 0; i < 400; ++i) {
    std::string name = absl::StrCat(std::string(200, 'n'), i);
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/big/" + name, "", kNotes));
    expected.push_back(name);
  }
  std::sort(expected.begin(), expected.end());
  int64_t readdirs = 0;
  AppResult listed;
  readdirs = During("requests_readdir", [&] { listed = As(kNotes).List("Documents/big"); });
  ASSERT_TRUE(Succeeds(listed));
  EXPECT_EQ(listed.names, expected);
  EXPECT_GE(readdirs, 3) << "the listing fit fewer chunks than the test needs";
}

// Once a directory was opened under a caller-independent policy (OPENDIR answered ENOSYS, so the
// kernel caches every listing for all callers for good), a reload to a policy whose listings
// depend on the caller is refused with the reason, and the old policy keeps serving.
TEST_F(ListingCacheTest, AReloadToPerCallerListingsIsRefusedOnceADirectoryWasOpened) {
  EXPECT_EQ(Count("listings_pinned"), 0);
  ASSERT_TRUE(Succeeds(As(kSocial).List("Documents/l")));  // pinned now
  EXPECT_EQ(Count("listings_pinned"), 1);
  absl::StatusOr<std::string> reloaded =
      storage_.Ctl({"reload", absl::StrCat("--policy=", AndroidRulesUnderPosixSemantics()),
                    "--apps=policy/configs/apps.textproto"});
  ASSERT_FALSE(reloaded.ok()) << *reloaded;
  // The reason, as scopedfsctl printed it, in the daemon's log.
  std::string log = storage_.DaemonLog();
  EXPECT_NE(log.find("reload (control socket) rejected, previous policy stays in force:\npolicy "
                     "\"android-strict\" shows different callers different listings but this "
                     "mount is pinned to caller-independent listings"),
            std::string::npos)
      << log;
  // Still the permissive policy: social lists every name, fresh from the daemon or not.
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/l/later", "x", kNotes));
  ASSERT_TRUE(Succeeds(As(kNotes).Create("Documents/l/made")));
  AppResult social = As(kSocial).List("Documents/l");
  ASSERT_TRUE(Succeeds(social));
  EXPECT_EQ(social.names.size(), static_cast<size_t>(kFiles + 2)) << social;
  EXPECT_TRUE(Contains(social.names, "made")) << social;
  EXPECT_EQ(Count("listings_pinned"), 1);
  // Another caller-independent policy is still accepted.
  reloaded = storage_.Ctl({"reload", "--policy=policy/configs/permissive.textproto",
                           "--apps=policy/configs/apps.textproto"});
  EXPECT_TRUE(reloaded.ok()) << reloaded.status();
}

// Before any directory was opened the same reload is allowed, and each app then gets its own
// listing from the daemon (directory opens answered as under any per-caller policy).
TEST_F(ListingCacheTest, AReloadToPerCallerListingsBeforeAnyDirectoryOpenIsAllowed) {
  EXPECT_EQ(Count("requests_opendir"), 0);
  absl::StatusOr<std::string> reloaded =
      storage_.Ctl({"reload", absl::StrCat("--policy=", AndroidRulesUnderPosixSemantics()),
                    "--apps=policy/configs/apps.textproto"});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  // Under the Android rules social sees none of root's documents; root sees all of them.
  AppResult social = As(kSocial).List("Documents/l");
  ASSERT_TRUE(Succeeds(social));
  EXPECT_TRUE(social.names.empty()) << social;
  AppResult root = As(kRoot).List("Documents/l");
  ASSERT_TRUE(Succeeds(root));
  EXPECT_EQ(root.names.size(), static_cast<size_t>(kFiles));
  EXPECT_GT(During("requests_readdir", [&] { (void)As(kSocial).List("Documents/l"); }), 0);
  EXPECT_GT(During("requests_opendir", [&] { (void)As(kSocial).List("Documents/l"); }), 0);
  EXPECT_EQ(Count("listings_pinned"), 0);
}

// A directory held open across such a refused reload keeps listing under the policy in force.
TEST_F(ListingCacheTest, AListingHeldAcrossARefusedReloadKeepsListing) {
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  pid_t pid = StartAs(
      kSocial,
      [&] {
        close(ready[0]);
        close(go[1]);
        DIR* d = opendir("Documents/l");
        if (d == nullptr) return 1;
        int seen = 0;
        while (readdir(d) != nullptr) ++seen;
        if (seen != kFiles + 2) return 2;
        char c = 'r';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) return 3;
        rewinddir(d);
        errno = 0;
        seen = 0;
        while (readdir(d) != nullptr) ++seen;
        int err = errno;
        closedir(d);
        return err == 0 && seen == kFiles + 2 ? 0 : 10;
      },
      storage_.mountpoint());
  close(ready[1]);
  close(go[0]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1) << "the app could not list the directory";
  absl::StatusOr<std::string> reloaded =
      storage_.Ctl({"reload", absl::StrCat("--policy=", AndroidRulesUnderPosixSemantics()),
                    "--apps=policy/configs/apps.textproto"});
  EXPECT_FALSE(reloaded.ok());
  c = 'g';
  EXPECT_EQ(write(go[1], &c, 1), 1);
  close(go[1]);
  close(ready[0]);
  EXPECT_EQ(WaitChild(pid), 0) << "10: the held directory did not list every name again";
  AppResult fresh = As(kSocial).List("Documents/l");
  ASSERT_TRUE(Succeeds(fresh));
  EXPECT_EQ(fresh.names.size(), static_cast<size_t>(kFiles)) << fresh;
}

// A reload to another caller-independent policy is accepted on a pinned mount; the kernel's
// listings it keeps without asking (no OPENDIR after the pin) must go with it, also where the
// daemon no longer knows any name in the directory (the kernel forgot them, the directory stays
// in use): a listing cached before the reload must not show a name the new policy hides.
TEST_F(ListingCacheTest, AReloadDropsListingsWhoseNamesTheKernelForgot) {
  ASSERT_TRUE(Succeeds(As(kNotes).List("Documents/l")));  // pinned, and the kernel keeps it
  ASSERT_EQ(Count("listings_pinned"), 1);
  // Held open so that the directory's inode, and the kernel's listing in its pages, stay.
  int held = open((storage_.mountpoint() + "/Documents/l").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held, 0) << strerror(errno);
  // The kernel forgets the names (dentries and inodes, not the pages of inodes in use).
  FILE* drop = fopen("/proc/sys/vm/drop_caches", "w");
  ASSERT_NE(drop, nullptr) << "cannot write /proc/sys/vm/drop_caches: " << strerror(errno);
  fputs("2", drop);
  fclose(drop);
  absl::StatusOr<DaemonStats> forgot = storage_.StatsOnce(
      [](const DaemonStats& s) { return s.count("nodes") != 0 && s.at("nodes") <= 4; }, "nodes");
  ASSERT_TRUE(forgot.ok()) << "the daemon still knows the directory's names: " << forgot.status();
  std::string policy = ReadFileOrDie("policy/configs/permissive.textproto");
  const std::string kFirstRule = "rule {";
  size_t at = policy.find(kFirstRule);
  ASSERT_NE(at, std::string::npos);
  policy.insert(at,
                "rule { name: \"hide-f1\" path { glob: \"Documents/l/f1\" } "
                "action { outcome: OUTCOME_HIDE } }\n");
  std::string path = absl::StrCat(::testing::TempDir(), "/permissive_hiding_f1.textproto");
  std::ofstream(path) << policy;
  absl::StatusOr<std::string> reloaded = storage_.Ctl(
      {"reload", absl::StrCat("--policy=", path), "--apps=policy/configs/apps.textproto"});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  AppResult listed = As(kSocial).List("Documents/l");
  close(held);
  ASSERT_TRUE(Succeeds(listed));
  EXPECT_FALSE(Contains(listed.names, "f1"))
      << "the listing from before the reload was served: " << listed;
  EXPECT_TRUE(Contains(listed.names, "f2")) << listed;
  EXPECT_TRUE(FailsWith(As(kSocial).Stat("Documents/l/f1"), ENOENT));
}

// Walks the tree below `dir` as `app`, opening every directory (as find does): value is the number
// of entries seen.
AppResult Walk(const App& app, const std::string& dir) {
  return app.Run("walk " + dir, [dir] {
    AppResult out;
    std::vector<std::string> todo = {dir};
    while (!todo.empty()) {
      std::string at = todo.back();
      todo.pop_back();
      DIR* d = opendir(at.c_str());
      if (d == nullptr) {
        out.err = errno;
        out.data = at;
        return out;
      }
      errno = 0;
      while (dirent* ent = readdir(d)) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
        ++out.value;
        if (ent->d_type == DT_DIR) todo.push_back(at + "/" + ent->d_name);
      }
      if (errno != 0) out.err = errno;
      closedir(d);
      if (out.err != 0) return out;
    }
    return out;
  });
}

// Under a caller-independent policy the first directory open is answered ENOSYS: the kernel sends
// no OPENDIR or RELEASEDIR after it, for any directory or caller, and lists from its cache.
TEST_F(ListingCacheTest, AWarmWalkSendsNoDirectoryOpens) {
  for (int d = 0; d < 10; ++d) {
    for (int f = 0; f < 5; ++f) {
      SCOPEDFS_ASSERT_OK(
          storage_.WriteLower(absl::StrCat("Documents/t/d", d, "/f", f), "", kNotes));
    }
  }
  AppResult cold = Walk(As(kNotes), "Documents/t");
  ASSERT_TRUE(Succeeds(cold));
  EXPECT_EQ(cold.value, 60);
  EXPECT_EQ(Count("requests_opendir"), 1) << "only the first directory open reaches the daemon";
  int64_t opens = 0, releases = 0, readdirs = 0;
  AppResult warm;
  releases = During("requests_releasedir", [&] {
    opens = During("requests_opendir", [&] {
      readdirs = During("requests_readdir", [&] { warm = Walk(As(kSocial), "Documents/t"); });
    });
  });
  ASSERT_TRUE(Succeeds(warm));
  EXPECT_EQ(warm.value, 60);
  EXPECT_EQ(opens, 0);
  EXPECT_EQ(releases, 0);
  EXPECT_EQ(readdirs, 0);
  EXPECT_EQ(Count("requests_releasedir"), 0);
}

// Directories opened without OPENDIR (fh 0) list what the lower tree holds after changes through
// the mount and, once cached attributes expire, after changes made below it; fsync works on them.
class ShortCacheListingTest : public ListingCacheTest {
 protected:
  ShortCacheListingTest() { extra_flags_ = {"--entry_cache_seconds=1"}; }
};

TEST_F(ShortCacheListingTest, ListingsWithoutDirectoryOpensFollowEveryChange) {
  ASSERT_TRUE(Succeeds(As(kNotes).List("Documents/l")));  // the one OPENDIR, cached now
  int64_t opens = During("requests_opendir", [&] {
    ASSERT_TRUE(Succeeds(As(kSocial).Create("Documents/l/new")));
    ASSERT_TRUE(Succeeds(As(kSocial).Unlink("Documents/l/f0")));
    ASSERT_TRUE(Succeeds(As(kMusic).Rename("Documents/l/f1", "Documents/l/renamed")));
    ASSERT_TRUE(Succeeds(As(kMusic).Mkdir("Documents/l/sub")));
    ASSERT_TRUE(Succeeds(As(kMusic).Rename("Documents/l/f2", "Documents/moved")));
    AppResult listed = As(kNotes).List("Documents/l");
    ASSERT_TRUE(Succeeds(listed));
    EXPECT_TRUE(Contains(listed.names, "new")) << listed;
    EXPECT_TRUE(Contains(listed.names, "renamed")) << listed;
    EXPECT_TRUE(Contains(listed.names, "sub")) << listed;
    for (const char* gone : {"f0", "f1", "f2"})
      EXPECT_FALSE(Contains(listed.names, gone)) << listed;
    EXPECT_EQ(listed.names.size(), static_cast<size_t>(kFiles));  // +new +sub -f0 -f2

    // Behind the daemon's back: seen once the directory's cached attributes expire.
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/l/below", "x", kNotes));
    ASSERT_EQ(unlink(storage_.Lower("Documents/l/f3").c_str()), 0) << strerror(errno);
    usleep(2'200'000);
    listed = As(kSocial).List("Documents/l");
    ASSERT_TRUE(Succeeds(listed));
    EXPECT_TRUE(Contains(listed.names, "below")) << listed;
    EXPECT_FALSE(Contains(listed.names, "f3")) << listed;

    AppResult synced = As(kNotes).Run("fsync Documents/l", [] {
      AppResult out;
      int fd = open("Documents/l", O_RDONLY | O_DIRECTORY);
      if (fd < 0 || fsync(fd) != 0 || fdatasync(fd) != 0) out.err = errno;
      if (fd >= 0) close(fd);
      return out;
    });
    EXPECT_TRUE(Succeeds(synced));
  });
  EXPECT_EQ(opens, 0);
}

// Under Android's own policy a listing is the caller's: it is never cached by the kernel.
class AndroidListingTest : public ListingCacheTest {
 protected:
  AndroidListingTest() { policy_ = "policy/configs/android.textproto"; }
};

TEST_F(AndroidListingTest, ListingsArePerCallerAndNeverCached) {
  ASSERT_TRUE(Succeeds(As(kNotes).List("Documents/l")));
  AppResult social;
  int64_t readdirs = During("requests_readdir", [&] { social = As(kSocial).List("Documents/l"); });
  ASSERT_TRUE(Succeeds(social));
  EXPECT_TRUE(social.names.empty()) << social;
  EXPECT_GT(readdirs, 0);
}

// --- Extended attributes -------------------------------------------------------------------------

// Every xattr call of `app` on `path`, three times, each of which must fail with its errno (0:
// not made); data: the calls that did not. An ACL question is ENODATA in every mode that serves
// no attributes: the kernel answers it itself (no ACL) once xattrs are known unsupported.
AppResult XattrCalls(const App& app, const std::string& path, int get_err, int list_err,
                     int set_err) {
  return app.Run("xattr calls", [=] {
    AppResult out;
    char value[64];
    auto check = [&out](const char* what, bool failed, int want) {
      if (!failed) {
        out.data += absl::StrCat(what, " succeeded; ");
        out.err = EINVAL;
      } else if (errno != want) {
        out.data += absl::StrCat(what, ": ", ErrnoName(errno), "; ");
        out.err = EINVAL;
      }
    };
    for (int i = 0; i < 3; ++i) {
      check("getxattr user", getxattr(path.c_str(), "user.k", value, sizeof(value)) < 0, get_err);
      check("getxattr acl", getxattr(path.c_str(), "system.posix_acl_access", value, 0) < 0,
            ENODATA);
      check("lgetxattr selinux", lgetxattr(path.c_str(), "security.selinux", value, 0) < 0,
            get_err);
      if (list_err != 0) check("listxattr", listxattr(path.c_str(), value, 0) < 0, list_err);
      check("setxattr user", setxattr(path.c_str(), "user.k", "v", 1, 0) != 0, set_err);
    }
    return out;
  });
}

class AndroidXattrTest : public RequestsMountTest {
 protected:
  AndroidXattrTest() { policy_ = "policy/configs/android.textproto"; }
};

// Android's view has no extended attributes (as MediaProvider, which implements no xattr op):
// every app gets EOPNOTSUPP, and after the first answer of each kind the kernel asks no more.
TEST_F(AndroidXattrTest, NoneAreServedAndTheKernelStopsAsking) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/a.txt", "x", kNotes));
  ASSERT_TRUE(
      Succeeds(XattrCalls(As(kNotes), "Documents/a.txt", EOPNOTSUPP, EOPNOTSUPP, EOPNOTSUPP)));
  int64_t later = During("requests_xattr", [&] {
    EXPECT_TRUE(Succeeds(XattrCalls(As(kSocial), "Documents", EOPNOTSUPP, EOPNOTSUPP, EOPNOTSUPP)));
    EXPECT_TRUE(
        Succeeds(XattrCalls(As(kRoot), "Documents/a.txt", EOPNOTSUPP, EOPNOTSUPP, EOPNOTSUPP)));
  });
  EXPECT_EQ(later, 0);
}

// POSIX semantics keep the lower tree's attributes by default.
TEST_F(RequestsMountTest, PosixServesXattrsByDefault) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/a.txt", "x", kNotes));
  ASSERT_EQ(chmod(storage_.Lower("Documents/a.txt").c_str(), 0666), 0) << strerror(errno);
  ASSERT_TRUE(Succeeds(As(kNotes).SetXattr("Documents/a.txt", "user.k", "v1")));
  AppResult got = As(kNotes).GetXattr("Documents/a.txt", "user.k");
  ASSERT_TRUE(Succeeds(got));
  EXPECT_EQ(got.data, "v1");
  EXPECT_TRUE(Contains(As(kNotes).ListXattr("Documents/a.txt").names, "user.k"));
  EXPECT_GT(
      During("requests_xattr", [&] { (void)As(kNotes).GetXattr("Documents/a.txt", "user.k"); }), 0);
}

class NoattrTest : public RequestsMountTest {
 protected:
  NoattrTest() { extra_flags_ = {"--xattr=noattr"}; }
};

// --xattr=noattr: no attribute exists (get ENODATA, list empty, set EOPNOTSUPP), the lower tree's
// are neither shown nor changed, and every question still reaches the daemon.
TEST_F(NoattrTest, NoAttributeExists) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/a.txt", "x", kNotes));
  ASSERT_EQ(chmod(storage_.Lower("Documents/a.txt").c_str(), 0666), 0) << strerror(errno);
  std::string lower = storage_.Lower("Documents/a.txt");
  ASSERT_EQ(setxattr(lower.c_str(), "user.k", "lower", 5, 0), 0) << strerror(errno);
  ASSERT_TRUE(Succeeds(XattrCalls(As(kNotes), "Documents/a.txt", ENODATA, 0, EOPNOTSUPP)));
  AppResult names = As(kNotes).ListXattr("Documents/a.txt");
  ASSERT_TRUE(Succeeds(names));
  EXPECT_TRUE(names.names.empty()) << names;
  char value[16];
  EXPECT_EQ(getxattr(lower.c_str(), "user.k", value, sizeof(value)), 5);
  EXPECT_GT(
      During("requests_xattr", [&] { (void)As(kNotes).GetXattr("Documents/a.txt", "user.k"); }), 0);
}

class NosysTest : public RequestsMountTest {
 protected:
  NosysTest() { extra_flags_ = {"--xattr=nosys"}; }
};

// --xattr=nosys: not supported (EOPNOTSUPP from the kernel), and the kernel stops asking.
TEST_F(NosysTest, NotSupportedAndTheKernelStopsAsking) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/a.txt", "x", kNotes));
  ASSERT_EQ(chmod(storage_.Lower("Documents/a.txt").c_str(), 0666), 0) << strerror(errno);
  ASSERT_TRUE(
      Succeeds(XattrCalls(As(kNotes), "Documents/a.txt", EOPNOTSUPP, EOPNOTSUPP, EOPNOTSUPP)));
  EXPECT_EQ(During("requests_xattr",
                   [&] {
                     EXPECT_TRUE(Succeeds(XattrCalls(As(kSocial), "Documents/a.txt", EOPNOTSUPP,
                                                     EOPNOTSUPP, EOPNOTSUPP)));
                   }),
            0);
}

// scopedfsd with `args` (its stderr discarded); its exit code, or 128 + the signal that ended it
// (a daemon that wrongly started serving is ended by SIGALRM after 10 s).
int RunDaemon(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    alarm(10);
    std::vector<char*> argv = {const_cast<char*>("daemon/scopedfsd")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// --xattr takes the three modes only (64: a bad command line), and ANDROID semantics only nosys
// (78: the configuration cannot be served as asked).
TEST_F(RequestsMountTest, XattrFlagIsChecked) {
  std::string mnt = absl::StrCat(::testing::TempDir(), "/xattr_flag_mnt");
  mkdir(mnt.c_str(), 0755);
  std::vector<std::string> base = {"--source=" + storage_.Lower(""), "--mountpoint=" + mnt,
                                   "--apps=policy/configs/apps.textproto"};
  auto with = [&](const std::string& policy, const std::string& xattr) {
    std::vector<std::string> args = base;
    args.push_back("--policy=" + policy);
    args.push_back("--xattr=" + xattr);
    return args;
  };
  EXPECT_EQ(RunDaemon(with("policy/configs/permissive.textproto", "sometimes")), 64);
  EXPECT_EQ(RunDaemon(with("policy/configs/android.textproto", "passthrough")), 78);
  EXPECT_EQ(RunDaemon(with("policy/configs/android.textproto", "noattr")), 78);
}

// --- FLUSH -------------------------------------------------------------------------------------

// The daemon serves POSIX record locks (it tells the kernel so at INIT), and releases a closing
// owner's locks at FLUSH: so every close sends FLUSH (an ENOSYS answer would have ended them).
TEST_F(RequestsMountTest, FlushIsSentWhileTheDaemonServesLocks) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/a.txt", "x", kNotes));
  EXPECT_GE(During("requests_flush",
                   [&] {
                     for (int i = 0; i < 3; ++i) (void)As(kNotes).Read("Documents/a.txt");
                   }),
            3);
}

}  // namespace
}  // namespace scopedfs::tests
