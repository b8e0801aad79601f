// Two users at once, as Android mounts them: one scopedfsd per user (--user_id=0 and 10), each over
// its own lower tree, with apps of both users (uid = user * 100000 + app id). Each user's apps are
// served by their own daemon; an app of one user sees nothing of the other user's storage, not
// even with all-files access, because each daemon refuses callers of the other user (the policy's
// other-users-hidden rule). Needs root and /dev/fuse; skips, saying so, without them.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr uid_t kPerUser = 100000;
uid_t InUser(uid_t user, uid_t app_uid) { return user * kPerUser + app_uid; }

class MultiUserMountTest : public testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    for (uid_t user : {0u, 10u}) {
      ScopedStorage& s = Storage(user);
      SCOPEDFS_ASSERT_OK(s.Prepare());
      SCOPEDFS_ASSERT_OK(s.CreateDefaultLayout());
      std::string tag = absl::StrCat("u", user);
      SCOPEDFS_ASSERT_OK(s.WriteLower(absl::StrCat("DCIM/Camera/", tag, ".jpg"), JpegBytes(),
                                      InUser(user, kCamera)));
      SCOPEDFS_ASSERT_OK(
          s.WriteLower(absl::StrCat("Download/", tag, ".txt"), tag, InUser(user, kNotes)));
      DaemonOptions options;
      options.extra_flags = {absl::StrCat("--user_id=", user)};
      SCOPEDFS_ASSERT_OK(s.StartDaemon(options));
    }
  }

  void TearDown() override {
    for (uid_t user : {0u, 10u}) {
      ScopedStorage& s = Storage(user);
      if (HasFailure()) std::cerr << "user " << user << "'s scopedfsd log:\n" << s.DaemonLog();
      if (s.daemon_started()) {
        DaemonExit e = s.StopDaemon();
        EXPECT_TRUE(e.clean()) << "user " << user << ": " << e.ToString();
      }
      s.Teardown();
    }
  }

  ScopedStorage& Storage(uid_t user) { return user == 0 ? user0_ : user10_; }
  // The app `app_uid` of user `app_user`, acting on user `storage_user`'s mount.
  App AppOf(uid_t app_user, uid_t app_uid, uid_t storage_user) {
    return Storage(storage_user).As(InUser(app_user, app_uid));
  }

  ScopedStorage user0_;
  ScopedStorage user10_;
};

TEST_F(MultiUserMountTest, EachUsersAppsAreServedByTheirOwnDaemon) {
  for (uid_t user : {0u, 10u}) {
    std::string tag = absl::StrCat("u", user);
    AppResult photo = AppOf(user, kGallery, user).Read(absl::StrCat("DCIM/Camera/", tag, ".jpg"));
    ASSERT_TRUE(Succeeds(photo)) << "user " << user;
    EXPECT_TRUE(SameBytes(photo.data, JpegBytes()));
    AppResult own = AppOf(user, kNotes, user).Read(absl::StrCat("Download/", tag, ".txt"));
    ASSERT_TRUE(Succeeds(own)) << "user " << user;
    EXPECT_EQ(own.data, tag);
    AppResult created = AppOf(user, kNotes, user).Create(absl::StrCat("Download/new_", tag));
    ASSERT_TRUE(Succeeds(created)) << "user " << user;
    EXPECT_EQ(Storage(user).LowerOwner(absl::StrCat("Download/new_", tag)),
              absl::StrCat(InUser(user, kNotes)))
        << "the creator is recorded with its user's uid";
  }
}

TEST_F(MultiUserMountTest, AUser10AppCannotSeeUser0sStorage) {
  for (uid_t app : {kGallery, kFiles, kNotes, kCamera}) {
    SCOPED_TRACE(absl::StrCat("uid ", InUser(10, app), " on user 0's mount"));
    App intruder = AppOf(10, app, 0);
    EXPECT_TRUE(FailsWith(intruder.Read("DCIM/Camera/u0.jpg"), ENOENT));
    EXPECT_TRUE(FailsWith(intruder.Stat("Download/u0.txt"), ENOENT));
    EXPECT_TRUE(FailsWith(intruder.Stat("DCIM"), ENOENT));
    AppResult root = intruder.List(".");
    EXPECT_TRUE(root.ok() ? root.names.empty() : root.err == ENOENT)
        << root << ": " << absl::StrJoin(root.names, " ");
    EXPECT_FALSE(intruder.Create("Download/planted.txt").ok());
    EXPECT_FALSE(Storage(0).LowerExists("Download/planted.txt"));
  }
  // The same app ids of user 0 see it all, so it is the user that is refused.
  EXPECT_TRUE(Succeeds(AppOf(0, kGallery, 0).Read("DCIM/Camera/u0.jpg")));
  EXPECT_TRUE(Succeeds(AppOf(0, kFiles, 0).Read("Download/u0.txt")));
}

TEST_F(MultiUserMountTest, User10sDaemonRefusesUser0sApps) {
  for (uid_t app : {kGallery, kFiles, kNotes, kCamera}) {
    SCOPED_TRACE(absl::StrCat("uid ", InUser(0, app), " on user 10's mount"));
    App intruder = AppOf(0, app, 10);
    EXPECT_TRUE(FailsWith(intruder.Read("DCIM/Camera/u10.jpg"), ENOENT));
    EXPECT_TRUE(FailsWith(intruder.Stat("Download/u10.txt"), ENOENT));
    EXPECT_TRUE(FailsWith(intruder.Stat("DCIM"), ENOENT));
    AppResult root = intruder.List(".");
    EXPECT_TRUE(root.ok() ? root.names.empty() : root.err == ENOENT)
        << root << ": " << absl::StrJoin(root.names, " ");
    EXPECT_FALSE(intruder.Create("Download/planted.txt").ok());
    EXPECT_FALSE(Storage(10).LowerExists("Download/planted.txt"));
  }
  EXPECT_TRUE(Succeeds(AppOf(10, kFiles, 10).Read("Download/u10.txt")));
}

}  // namespace
}  // namespace scopedfs::tests
