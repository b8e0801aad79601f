// The device's layout (--device_layout): a mount made as vold makes /mnt/user/<u>/emulated, over
// a lower tree laid out as Android's /data/media (0/, 10/ and obb/), serves each user's storage
// in its <user>/ directory. Apps of user 0 and of user 10 act on it as real uids: each works in
// its own user's storage under the Android policy, finds nothing of the other's, lists only its
// own user's directory at the mount root and creates nothing there; nobody renames from one
// user's storage to another's (EXDEV); root sees everything. Below <user>/ every answer equals
// that of a mount of /data/media/<user> alone, as docs/android.md served it before.
// Needs root and /dev/fuse; skips, saying so, without them.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr char kAndroidPolicy[] = "policy/configs/android.textproto";
constexpr char kStrictPolicy[] = "policy/configs/android-strict.textproto";
constexpr uid_t kPerUser = 100000;
uid_t InUser(uid_t user, uid_t app_uid) { return user * kPerUser + app_uid; }

// <user>/`rel`, as the device layout's mount names it.
std::string U(uid_t user, absl::string_view rel = "") {
  return rel.empty() ? absl::StrCat(user) : absl::StrCat(user, "/", rel);
}

// The same files in each user's storage, made by that user's apps.
absl::Status PopulateUser(ScopedStorage& s, uid_t user) {
  for (const std::string& dir : DefaultTopLevelDirs()) {
    if (absl::Status st = s.MkdirLower(U(user, dir)); !st.ok()) return st;
  }
  for (const char* dir : {"Android/data", "Android/obb", "Android/media", "DCIM/Camera",
                          "Android/data/com.example.camera", "Pictures/Trips"}) {
    if (absl::Status st = s.MkdirLower(U(user, dir)); !st.ok()) return st;
  }
  struct File {
    const char* rel;
    std::string content;
    std::optional<uid_t> owner;
  };
  const std::vector<File> files = {
      {"DCIM/Camera/IMG_1.jpg", JpegBytes(), InUser(user, kCamera)},
      {"Pictures/Trips/p.jpg", JpegBytes(8192), std::nullopt},
      {"Music/song.mp3", Mp3Bytes(), InUser(user, kMusic)},
      {"Download/notes.txt", absl::StrCat("user ", user), InUser(user, kNotes)},
      {"Documents/todo.txt", "buy milk\n", InUser(user, kNotes)},
      {"Download/report.pdf", PdfBytes(), InUser(user, kFiles)},
      {"Android/data/com.example.camera/cache.bin", "private", InUser(user, kCamera)},
  };
  for (const File& f : files) {
    if (absl::Status st = s.WriteLower(U(user, f.rel), f.content, f.owner); !st.ok()) return st;
  }
  return absl::OkStatus();
}

DaemonOptions DeviceLayoutOptions(const std::string& policy) {
  DaemonOptions options;
  options.policy = policy;
  options.vold_mount = true;
  options.extra_flags = {"--device_layout"};
  return options;
}

class DeviceLayoutMountTest : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(device_.Prepare());
    for (uid_t user : {0u, 10u}) SCOPEDFS_ASSERT_OK(PopulateUser(device_, user));
    // /data/media holds more than users' storages: obb/ (shared OBBs) is no user's.
    SCOPEDFS_ASSERT_OK(device_.WriteLower("obb/com.example.game/main.obb", "obb"));
    SCOPEDFS_ASSERT_OK(device_.StartDaemon(DeviceLayoutOptions(GetParam())));
  }

  void TearDown() override {
    for (ScopedStorage* s : {&device_, &per_user_[0], &per_user_[1]}) {
      if (HasFailure() && s->daemon_started()) std::cerr << "scopedfsd log:\n" << s->DaemonLog();
      if (s->daemon_started()) {
        DaemonExit e = s->StopDaemon();
        EXPECT_TRUE(e.clean()) << e.ToString();
      }
      s->Teardown();
    }
  }

  App As(uid_t uid) const { return device_.As(uid); }

  ScopedStorage device_;
  ScopedStorage per_user_[2];  // mounts of user 0's and user 10's storage alone, to compare with
};

INSTANTIATE_TEST_SUITE_P(Visibilities, DeviceLayoutMountTest,
                         testing::Values(kAndroidPolicy, kStrictPolicy),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param == kAndroidPolicy ? "Listing" : "Strict");
                         });

TEST_P(DeviceLayoutMountTest, EachUsersAppsWorkInTheirOwnStorage) {
  for (uid_t user : {0u, 10u}) {
    SCOPED_TRACE(absl::StrCat("user ", user));
    App notes = As(InUser(user, kNotes));
    // Anything in Download, recorded as the creator's, in the lower <user>/ tree.
    EXPECT_TRUE(Succeeds(notes.Create(U(user, "Download/z.txt"), "z")));
    EXPECT_EQ(device_.LowerOwner(U(user, "Download/z.txt")), absl::StrCat(InUser(user, kNotes)));
    EXPECT_EQ(device_.ReadLower(U(user, "Download/z.txt")).value_or(""), "z");
    // The layout's rules apply below <user>/: no text among photos, no custom top directory.
    EXPECT_TRUE(FailsWith(notes.Create(U(user, "DCIM/z.txt"), "z"), EPERM));
    EXPECT_TRUE(FailsWith(notes.Mkdir(U(user, "MyStuff")), EPERM));
    EXPECT_TRUE(FailsWith(notes.Create(U(user, "z.txt"), "z"), EPERM));
    // The storage's root and its default directories are there.
    EXPECT_TRUE(Succeeds(notes.Stat(U(user))));
    EXPECT_TRUE(Succeeds(notes.Stat(U(user, "DCIM"))));
    AppResult top = notes.List(U(user));
    ASSERT_TRUE(Succeeds(top));
    EXPECT_TRUE(Contains(top.names, "DCIM"));
    EXPECT_TRUE(Contains(top.names, "Download"));
    // Own files read back; another app's document is not listed to the camera app.
    AppResult own = notes.Read(U(user, "Download/notes.txt"));
    ASSERT_TRUE(Succeeds(own));
    EXPECT_EQ(own.data, absl::StrCat("user ", user));
    AppResult camera_docs = As(InUser(user, kCamera)).List(U(user, "Documents"));
    ASSERT_TRUE(Succeeds(camera_docs));
    EXPECT_FALSE(Contains(camera_docs.names, "todo.txt"));
    // The gallery reads the camera's photo; the camera's private area is its own.
    EXPECT_TRUE(Succeeds(As(InUser(user, kGallery)).Read(U(user, "DCIM/Camera/IMG_1.jpg"))));
    EXPECT_TRUE(Succeeds(
        As(InUser(user, kCamera)).Read(U(user, "Android/data/com.example.camera/cache.bin"))));
    EXPECT_TRUE(FailsWith(
        As(InUser(user, kGallery)).Stat(U(user, "Android/data/com.example.camera/cache.bin")),
        ENOENT));
    // A photo moved within the user's storage by its owner.
    EXPECT_TRUE(
        Succeeds(As(InUser(user, kCamera))
                     .Rename(U(user, "DCIM/Camera/IMG_1.jpg"), U(user, "Pictures/IMG_1.jpg"))));
  }
}

TEST_P(DeviceLayoutMountTest, NoAppReachesAnotherUsersStorage) {
  for (auto [user, other] : {std::pair<uid_t, uid_t>{0, 10}, {10, 0}}) {
    SCOPED_TRACE(absl::StrCat("user ", user, "'s apps, user ", other, "'s storage"));
    // Not even with all-files access.
    for (uid_t app : {kNotes, kFiles, kGallery}) {
      App a = As(InUser(user, app));
      EXPECT_TRUE(FailsWith(a.Stat(U(other)), ENOENT));
      EXPECT_TRUE(FailsWith(a.Stat(U(other, "DCIM")), ENOENT));
      EXPECT_TRUE(FailsWith(a.List(U(other)), ENOENT));
      EXPECT_TRUE(FailsWith(a.Read(U(other, "Download/notes.txt")), ENOENT));
      EXPECT_TRUE(FailsWith(a.Create(U(other, "Download/x.txt"), "x"), ENOENT));
    }
  }
  EXPECT_FALSE(device_.LowerExists(U(0, "Download/x.txt")));
  EXPECT_FALSE(device_.LowerExists(U(10, "Download/x.txt")));
}

TEST_P(DeviceLayoutMountTest, TheMountRootShowsEachAppOnlyItsUsersStorage) {
  for (uid_t user : {0u, 10u}) {
    SCOPED_TRACE(absl::StrCat("user ", user));
    for (uid_t app : {kNotes, kFiles}) {
      App a = As(InUser(user, app));
      AppResult root = a.List(".");
      ASSERT_TRUE(Succeeds(root));
      EXPECT_EQ(root.names, std::vector<std::string>{U(user)});
      EXPECT_TRUE(Succeeds(a.Stat(".")));
      // /data/media's own names are no app's.
      EXPECT_TRUE(FailsWith(a.Stat("obb"), ENOENT));
      EXPECT_TRUE(FailsWith(a.Read("obb/com.example.game/main.obb"), ENOENT));
      // Nothing is created, removed or renamed in the mount root: one answer, whether the name
      // is free, another user's storage or a hidden name.
      for (const char* name : {"x.txt", "obb", "10", "0", "11", "DCIM"}) {
        SCOPED_TRACE(name);
        AppResult created = a.Create(name, "x");
        if (std::string(name) == U(user)) {
          EXPECT_TRUE(FailsWith(created, EEXIST));
        } else {
          EXPECT_TRUE(FailsWith(created, EACCES));
        }
      }
      EXPECT_TRUE(FailsWith(a.Mkdir("11"), EACCES));
      EXPECT_TRUE(FailsWith(a.Mkdir("Music"), EACCES));
      EXPECT_TRUE(FailsWith(a.Rmdir(U(user)), EACCES));
      // A user's storage does not move (as between users: EXDEV).
      EXPECT_TRUE(FailsWith(a.Rename(U(user), "12"), EXDEV));
      // A user's Android is renamed by no one (do_rename: EACCES), as a storage root's Android.
      EXPECT_TRUE(FailsWith(a.Rename(U(user, "Android"), U(user, "Download/A")), EACCES));
      EXPECT_TRUE(FailsWith(a.Rename(U(user, "android"), U(user, "Download/A")), EACCES));
      EXPECT_TRUE(FailsWith(a.Chmod(".", 0777), EACCES));
    }
  }
  for (const char* name : {"x.txt", "11", "12", "DCIM", "Music"}) {
    EXPECT_FALSE(device_.LowerExists(name)) << name;
  }
  EXPECT_TRUE(device_.LowerExists("0"));
  EXPECT_TRUE(device_.LowerExists("10"));
}

TEST_P(DeviceLayoutMountTest, RootSeesEverythingAndNothingMovesBetweenUsers) {
  App root = As(kRoot);
  AppResult top = root.List(".");
  ASSERT_TRUE(Succeeds(top));
  for (const char* name : {"0", "10", "obb"}) EXPECT_TRUE(Contains(top.names, name)) << name;
  AppResult obb = root.Read("obb/com.example.game/main.obb");
  ASSERT_TRUE(Succeeds(obb));
  EXPECT_EQ(obb.data, "obb");
  for (uid_t user : {0u, 10u}) {
    AppResult notes = root.Read(U(user, "Download/notes.txt"));
    ASSERT_TRUE(Succeeds(notes));
    EXPECT_EQ(notes.data, absl::StrCat("user ", user));
    EXPECT_TRUE(Succeeds(root.Stat(U(user, "Android/data/com.example.camera/cache.bin"))));
  }
  // From one user's storage to another's, a file or a directory: EXDEV, so
  // a mover copies. A user's storage itself does not move, nor does anything out of obb/.
  EXPECT_TRUE(
      FailsWith(root.Rename(U(0, "Download/notes.txt"), U(10, "Download/moved.txt")), EXDEV));
  EXPECT_TRUE(FailsWith(root.Rename(U(10, "Pictures/Trips"), U(0, "Pictures/Trips2")), EXDEV));
  EXPECT_TRUE(FailsWith(
      root.Rename(U(0, "Download/notes.txt"), U(10, "Download/notes2.txt"), RENAME_NOREPLACE),
      EXDEV));
  // An exchange is refused before anything is looked at, as on a device (EINVAL under Android
  // semantics, android_answers_mount_test), across users too: nothing is swapped.
  EXPECT_TRUE(FailsWith(
      root.Rename(U(0, "Download/notes.txt"), U(10, "Download/notes.txt"), RENAME_EXCHANGE),
      EINVAL));
  EXPECT_TRUE(FailsWith(root.Rename(U(10), "11"), EXDEV));
  EXPECT_TRUE(
      FailsWith(root.Rename("obb/com.example.game/main.obb", U(0, "Download/m.obb")), EXDEV));
  EXPECT_EQ(device_.ReadLower(U(0, "Download/notes.txt")).value_or(""), "user 0");
  EXPECT_EQ(device_.ReadLower(U(10, "Download/notes.txt")).value_or(""), "user 10");
  EXPECT_FALSE(device_.LowerExists(U(10, "Download/moved.txt")));
  EXPECT_FALSE(device_.LowerExists("11"));
  // Within one user's storage root moves as it likes.
  EXPECT_TRUE(Succeeds(root.Rename(U(10, "Download/notes.txt"), U(10, "Documents/notes.txt"))));
  // An app's own file stays in its storage: the other user's directory is not even found.
  EXPECT_TRUE(FailsWith(
      As(InUser(0, kNotes)).Rename(U(0, "Documents/todo.txt"), U(10, "Documents/todo.txt")),
      ENOENT));
  EXPECT_TRUE(device_.LowerExists(U(0, "Documents/todo.txt")));
}

// What one app gets for one request, reduced to what must match: the errno and, for a read or
// a listing, what it returned.
std::string Answer(const AppResult& r) {
  std::string out = ErrnoName(r.err);
  if (r.ok()) {
    absl::StrAppend(&out, " ", r.data.size(), "B#", std::hash<std::string>{}(r.data));
    for (const std::string& n : r.names) absl::StrAppend(&out, " ", n);
  }
  return out;
}

TEST_P(DeviceLayoutMountTest, BelowEachUsersDirectoryAnswersAsAMountOfThatStorageAlone) {
  const std::vector<std::string> files = {"DCIM/Camera/IMG_1.jpg",
                                          "Pictures/Trips/p.jpg",
                                          "Music/song.mp3",
                                          "Download/notes.txt",
                                          "Documents/todo.txt",
                                          "Download/report.pdf",
                                          "Android/data/com.example.camera/cache.bin"};
  const std::vector<std::string> dirs = {
      "",          "DCIM",  "DCIM/Camera", "Pictures/Trips", "Download",
      "Documents", "Music", "Android",     "Android/data",   "Android/data/com.example.camera"};
  // New names, made once through each mount (the two share the lower tree): a suffix apart.
  const std::vector<std::string> creates = {"Download/c.txt",
                                            "DCIM/c.txt",
                                            "DCIM/c.jpg",
                                            "Music/c.mp3",
                                            "Documents/c.pdf",
                                            "c.txt",
                                            "Android/data/com.example.camera/c.txt"};
  const std::vector<std::string> mkdirs = {"Download/d", "NewTop", "Android/data/com.example.x",
                                           "Android/data/com.example.camera/d"};
  const std::vector<uid_t> apps = {kGallery, kSocial, kMusic, kFiles,
                                   kCamera,  kLegacy, kNotes, kSuite};
  for (uid_t user : {0u, 10u}) {
    SCOPED_TRACE(absl::StrCat("user ", user));
    ScopedStorage& per_user = per_user_[user == 0 ? 0 : 1];
    SCOPEDFS_ASSERT_OK(per_user.Prepare());
    DaemonOptions options;
    options.policy = GetParam();
    options.vold_mount = true;
    options.source = device_.Lower(U(user));
    options.extra_flags = {absl::StrCat("--user_id=", user)};
    SCOPEDFS_ASSERT_OK(per_user.StartDaemon(options));
    int compared = 0;
    auto compare = [&](const std::string& what, const AppResult& device, const AppResult& alone) {
      ++compared;
      EXPECT_EQ(Answer(device), Answer(alone)) << what;
    };
    for (uid_t app : apps) {
      App on_device = device_.As(InUser(user, app));
      App alone = per_user.As(InUser(user, app));
      std::string who = absl::StrCat("uid ", InUser(user, app), ": ");
      for (const std::string& f : files) {
        compare(who + "stat " + f, on_device.Stat(U(user, f)), alone.Stat(f));
        compare(who + "read " + f, on_device.Read(U(user, f)), alone.Read(f));
        compare(who + "open for writing " + f, on_device.Open(U(user, f), O_WRONLY),
                alone.Open(f, O_WRONLY));
        compare(who + "chmod " + f, on_device.Chmod(U(user, f), 0640), alone.Chmod(f, 0640));
      }
      for (const std::string& d : dirs) {
        std::string in_alone = d.empty() ? "." : d;
        compare(who + "stat " + in_alone, on_device.Stat(U(user, d)), alone.Stat(in_alone));
        compare(who + "list " + in_alone, on_device.List(U(user, d)), alone.List(in_alone));
      }
      std::string tag = absl::StrCat(".", app);
      for (const std::string& c : creates) {
        compare(who + "create " + c, on_device.Create(U(user, c + tag + "d"), "x"),
                alone.Create(c + tag + "a", "x"));
      }
      for (const std::string& m : mkdirs) {
        compare(who + "mkdir " + m, on_device.Mkdir(U(user, m + tag + "d")),
                alone.Mkdir(m + tag + "a"));
      }
      // Moves inside the storage: a file for each mount, made anew for each app.
      for (const auto& [from, to, owner, bytes] :
           {std::tuple<std::string, std::string, uid_t, std::string>{"Download/mv", "Documents/mv",
                                                                     kNotes, "text"},
            {"DCIM/Camera/mv", "Pictures/mv", kCamera, JpegBytes()},
            {"DCIM/Camera/mv", "Music/mv", kCamera, JpegBytes()},
            {"Download/mv", "Android/data/com.example.camera/mv", kNotes, "text"}}) {
        for (const char* side : {"d", "a"}) {
          SCOPEDFS_ASSERT_OK(device_.WriteLower(U(user, from + side), bytes, InUser(user, owner)));
        }
        compare(who + "rename " + from + " to " + to,
                on_device.Rename(U(user, from + "d"), U(user, to + "d")),
                alone.Rename(from + "a", to + "a"));
      }
    }
    std::cerr << "user " << user << ": " << compared << " answers compared\n";
    EXPECT_GT(compared, 400);
  }
}

// A device mounts the layout once per user (vold's /mnt/user/<u>/emulated), reached by that
// user's apps alone: with --mount_reached_by_one_user the kernel caches the attributes of names in
// <user_id>/ that every app of the user finds, as on a mount of that user's storage alone, and
// nothing in another user's directory: an app of the user walking there after root (who reaches
// every user's storage) asks LOOKUP at <user>/ and is refused, also for a statx that takes
// whatever the kernel holds (AT_STATX_DONT_SYNC). Without the assertion every stat asks.
class DeviceLayoutOneUserTest : public testing::TestWithParam<bool> {
 protected:
  bool asserted() const { return GetParam(); }
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    SCOPEDFS_ASSERT_OK(device_.Prepare());
    for (uid_t user : {0u, 10u}) SCOPEDFS_ASSERT_OK(PopulateUser(device_, user));
    DaemonOptions options = DeviceLayoutOptions(kAndroidPolicy);
    options.control_socket = true;
    options.extra_flags.push_back("--user_id=0");
    options.extra_flags.push_back(
        absl::StrCat("--mount_reached_by_one_user=", asserted() ? "true" : "false"));
    SCOPEDFS_ASSERT_OK(device_.StartDaemon(options));
  }
  void TearDown() override {
    if (HasFailure() && device_.daemon_started()) std::cerr << device_.DaemonLog();
    if (device_.daemon_started()) {
      DaemonExit e = device_.StopDaemon();
      EXPECT_TRUE(e.clean()) << e.ToString();
    }
    device_.Teardown();
  }
  // LOOKUPs and GETATTRs the daemon served.
  int64_t Asked() {
    absl::StatusOr<int64_t> lookups = device_.OpCount("lookup");
    absl::StatusOr<int64_t> getattrs = device_.OpCount("getattr");
    EXPECT_TRUE(lookups.ok() && getattrs.ok());
    return lookups.value_or(-1000000) + getattrs.value_or(-1000000);
  }
  // What three stats of `path` by `uid`, in one process, cost the daemon.
  int64_t AskedForThreeStats(uid_t uid, const std::string& path) {
    int64_t before = Asked();
    AppResult r = device_.As(uid).StatRepeatedly(path, 3);
    EXPECT_TRUE(Succeeds(r)) << r.err;
    return Asked() - before;
  }
  // statx of `path` by `uid` taking whatever the kernel holds: its size, or -errno.
  int64_t CachedSize(uid_t uid, const std::string& path) {
    AppResult r = device_.As(uid).Run("statx DONT_SYNC", [&] {
      AppResult out;
      struct statx stx;
      if (statx(AT_FDCWD, path.c_str(), AT_STATX_DONT_SYNC, STATX_SIZE, &stx) != 0) {
        out.err = errno;
      } else {
        out.value = static_cast<int64_t>(stx.stx_size);
      }
      return out;
    });
    return r.err != 0 ? -r.err : r.value;
  }
  ScopedStorage device_;
};

INSTANTIATE_TEST_SUITE_P(Assertion, DeviceLayoutOneUserTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "OneUser" : "Default";
                         });

TEST_P(DeviceLayoutOneUserTest, CachesAttributesInTheUsersOwnStorageOnly) {
  const std::string report = U(0, "Download/report.pdf");
  ASSERT_TRUE(Succeeds(device_.As(InUser(0, kNotes)).Stat(report)));
  int64_t asked = AskedForThreeStats(InUser(0, kCamera), report);
  if (asserted()) {
    EXPECT_EQ(asked, 0) << "the attributes the notes app's stat left were not used";
  } else {
    EXPECT_GE(asked, 3) << "attributes are not cached without the assertion";
  }
  // Root walks into user 10's storage; user 0's apps still reach none of it.
  const std::string others = U(10, "Download/report.pdf");
  ASSERT_TRUE(Succeeds(device_.As(0).StatRepeatedly(others, 2)));
  EXPECT_EQ(CachedSize(InUser(0, kFiles), others), -ENOENT);
  EXPECT_TRUE(FailsWith(device_.As(InUser(0, kFiles)).Stat(others), ENOENT));
  EXPECT_EQ(CachedSize(InUser(0, kFiles), report), static_cast<int64_t>(PdfBytes().size()));
}

}  // namespace
}  // namespace scopedfs::tests
