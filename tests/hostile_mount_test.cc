// Hostile inputs against a real scopedfsd mount: symlinks that point out of the lower tree or into
// private areas, awkward names, and link/rename/create tricks that would reveal a hidden file.
//
// Symlinks: the kernel, not the daemon, follows a symlink found on a FUSE mount (LOOKUP returns a
// symlink node, the kernel asks READLINK and walks the target in the calling app's own namespace
// with the app's own credentials). So an app reaching /etc through Download/escape is no breach:
// it could open /etc itself. What must hold is that the daemon never follows one: a symlink is
// reported as a symlink (lstat), anything reached through it is not served by the mount (its
// st_dev is not the mount's), the daemon's root privileges are never lent (a root-only target
// stays unreadable), and a symlink into the tree does not get around the policy.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

std::string NativeRead(const std::string& path) {
  std::string data;
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return data;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
  fclose(f);
  return data;
}

class HostileMountTest : public MountTest {
 protected:
  // A root-only directory outside the lower tree, with a secret in it.
  std::string MakeOutsideSecret() {
    std::string dir = storage_.work_dir() + "/outside";
    EXPECT_EQ(mkdir(dir.c_str(), 0700), 0);
    std::string secret = dir + "/secret";
    FILE* f = fopen(secret.c_str(), "w");
    EXPECT_NE(f, nullptr);
    if (f != nullptr) {
      fputs("root only\n", f);
      fclose(f);
    }
    EXPECT_EQ(chmod(secret.c_str(), 0600), 0);
    return secret;
  }
};

// --- Symlinks out of the tree -----------------------------------------------------------------

TEST_F(HostileMountTest, SymlinkToOutsideDirectoryIsReportedAsASymlink) {
  SCOPEDFS_ASSERT_OK(storage_.SymlinkLower("/etc", "Download/escape"));
  AppResult l = As(kFiles).Lstat("Download/escape");
  ASSERT_TRUE(Succeeds(l));
  EXPECT_TRUE(S_ISLNK(l.mode)) << "mode 0" << std::oct << l.mode;
  AppResult target = As(kFiles).Readlink("Download/escape");
  ASSERT_TRUE(Succeeds(target));
  EXPECT_EQ(target.data, "/etc");
}

TEST_F(HostileMountTest, FilesReachedThroughAnEscapingSymlinkAreNotServedByTheMount) {
  SCOPEDFS_ASSERT_OK(storage_.SymlinkLower("/etc", "Download/escape"));
  AppResult mount_dev = As(kFiles).Stat("Download");
  ASSERT_TRUE(Succeeds(mount_dev));
  AppResult through = As(kFiles).Stat("Download/escape/passwd");
  ASSERT_TRUE(Succeeds(through));  // the kernel walked to the real /etc, in the app's namespace
  EXPECT_NE(through.dev, mount_dev.dev) << "/etc/passwd was served by the FUSE mount";
  AppResult read = As(kFiles).Read("Download/escape/passwd");
  ASSERT_TRUE(Succeeds(read));
  EXPECT_EQ(read.data, NativeRead("/etc/passwd"));  // exactly what the app may read anyway
}

TEST_F(HostileMountTest, SymlinkToRootOnlyFileDoesNotLendTheDaemonsPrivileges) {
  std::string secret = MakeOutsideSecret();
  SCOPEDFS_ASSERT_OK(storage_.SymlinkLower(secret, "Download/secret_link"));
  ASSERT_TRUE(Succeeds(As(kFiles).Lstat("Download/secret_link")));
  AppResult app = As(kFiles).Read("Download/secret_link");
  EXPECT_TRUE(FailsWith(app, EACCES));
  EXPECT_EQ(app.data, "");
  // Root follows the same link with its own privileges: the link itself works.
  AppResult root = As(kRoot).Read("Download/secret_link");
  ASSERT_TRUE(Succeeds(root));
  EXPECT_EQ(root.data, "root only\n");
}

TEST_F(HostileMountTest, CreatingThroughAnEscapingSymlinkWritesNothingOutside) {
  std::string secret = MakeOutsideSecret();
  std::string outside = secret.substr(0, secret.rfind('/'));
  SCOPEDFS_ASSERT_OK(storage_.SymlinkLower(outside, "Download/out"));
  SCOPEDFS_ASSERT_OK(storage_.SymlinkLower("/etc", "Download/escape"));
  std::string probe = absl::StrCat("scopedfs_escape_probe_", getpid());
  EXPECT_FALSE(As(kFiles).Create("Download/out/planted", "x").ok());
  EXPECT_FALSE(As(kFiles).Create("Download/escape/" + probe, "x").ok());
  EXPECT_FALSE(As(kFiles).Mkdir("Download/escape/" + probe).ok());
  struct stat st;
  EXPECT_NE(lstat((outside + "/planted").c_str(), &st), 0);
  EXPECT_NE(lstat(("/etc/" + probe).c_str(), &st), 0);
}

TEST_F(HostileMountTest, SymlinkIntoAnotherAppsPrivateDirectoryDoesNotBypassThePolicy) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Android/data/com.example.notes/db", "sqlite", kNotes));
  SCOPEDFS_ASSERT_OK(storage_.SymlinkLower("../Android/data/com.example.notes", "Download/peek"));
  // The kernel walks the target back into the mount, where the daemon hides it again.
  EXPECT_TRUE(Succeeds(As(kFiles).Lstat("Download/peek")));
  EXPECT_TRUE(FailsWith(As(kFiles).Stat("Download/peek/db"), ENOENT));
  EXPECT_TRUE(FailsWith(As(kFiles).Read("Download/peek/db"), ENOENT));
  AppResult own = As(kNotes).Read("Android/data/com.example.notes/db");
  ASSERT_TRUE(Succeeds(own));
  EXPECT_EQ(own.data, "sqlite");
}

TEST_F(HostileMountTest, ForeignSymlinkIsHiddenFromAppsWithoutAllFilesAccess) {
  SCOPEDFS_ASSERT_OK(storage_.SymlinkLower("/etc", "Download/escape"));
  EXPECT_TRUE(FailsWith(As(kSocial).Lstat("Download/escape"), ENOENT));
  AppResult listing = As(kSocial).List("Download");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_FALSE(Contains(listing.names, "escape")) << listing;
}

// Apps make no symlinks on Android's emulated storage (MediaProvider implements no SYMLINK), so
// the only symlinks an app meets are those planted in the lower tree, judged as above.
TEST_F(HostileMountTest, AppsMakeNoSymlinks) {
  EXPECT_TRUE(FailsWith(As(kNotes).Symlink("todo.txt", "Download/shortcut"), ENOSYS));
  EXPECT_FALSE(storage_.LowerExists("Download/shortcut"));
  EXPECT_TRUE(FailsWith(As(kNotes).Lstat("Download/shortcut"), ENOENT));
}

// --- Names ------------------------------------------------------------------------------------

void ExpectOwnerRoundTrip(ScopedStorage& storage, const std::string& name) {
  const std::string path = "Download/" + name;
  const App notes = storage.As(kNotes);
  ASSERT_TRUE(Succeeds(notes.Create(path, "payload")));
  AppResult read = notes.Read(path);
  ASSERT_TRUE(Succeeds(read));
  EXPECT_EQ(read.data, "payload");
  AppResult listing = notes.List("Download");
  ASSERT_TRUE(Succeeds(listing));
  EXPECT_TRUE(Contains(listing.names, name));
  EXPECT_EQ(storage.LowerOwner(path), std::optional<std::string>("10067"));
  EXPECT_TRUE(FailsWith(storage.As(kSocial).Stat(path), ENOENT));
  EXPECT_TRUE(Succeeds(notes.Unlink(path)));
  EXPECT_FALSE(storage.LowerExists(path));
}

TEST_F(HostileMountTest, NameWithNewlineWorksForItsOwner) {
  ExpectOwnerRoundTrip(storage_, "line\nbreak.txt");
}

TEST_F(HostileMountTest, NameWithInvalidUtf8WorksForItsOwner) {
  ExpectOwnerRoundTrip(storage_, "\xff\xfe\xc3( broken.txt");
}

TEST_F(HostileMountTest, NameOf255BytesWorksForItsOwner) {
  std::string name = std::string(251, 'n') + ".txt";
  ASSERT_EQ(name.size(), 255u);
  ExpectOwnerRoundTrip(storage_, name);
}

TEST_F(HostileMountTest, NameOf256BytesIsEnametoolong) {
  std::string path = "Download/" + std::string(252, 'n') + ".txt";
  const App notes = As(kNotes);
  EXPECT_TRUE(FailsWith(notes.Create(path, "x"), ENAMETOOLONG));
  EXPECT_TRUE(FailsWith(notes.Stat(path), ENAMETOOLONG));
  EXPECT_TRUE(FailsWith(notes.Mkdir(path), ENAMETOOLONG));
  ASSERT_TRUE(Succeeds(notes.Create("Download/short.txt", "x")));
  EXPECT_TRUE(FailsWith(notes.Rename("Download/short.txt", path), ENAMETOOLONG));
  EXPECT_TRUE(storage_.LowerExists("Download/short.txt"));
}

// --- A hidden name must not be reachable or revealed ------------------------------------------

class HiddenNameTest : public HostileMountTest {
 protected:
  // notes' files: hidden from social, which holds only media permissions.
  static constexpr char kTheirs[] = "Download/theirs.txt";
  static constexpr char kTheirContent[] = "notes' private download\n";

  void SetUp() override {
    HostileMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(kTheirs, kTheirContent, kNotes));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower("Documents/hidden.txt", "secret", kNotes));
    ASSERT_TRUE(FailsWith(As(kSocial).Stat(kTheirs), ENOENT));
  }

  void ExpectTheirsUntouched() {
    absl::StatusOr<std::string> data = storage_.ReadLower(kTheirs);
    ASSERT_TRUE(data.ok()) << data.status();
    EXPECT_EQ(*data, kTheirContent);
    EXPECT_EQ(storage_.LowerOwner(kTheirs), std::optional<std::string>("10067"));
  }
};

TEST_F(HiddenNameTest, HardLinkToAHiddenFileIsEnoent) {
  EXPECT_TRUE(FailsWith(As(kSocial).Link("Documents/hidden.txt", "Download/x"), ENOENT));
  EXPECT_FALSE(storage_.LowerExists("Download/x"));
}

// There are no links (as on a device): onto a hidden name and onto a free one, the same EPERM.
TEST_F(HiddenNameTest, HardLinkOntoAHiddenNameIsNotEexist) {
  ASSERT_TRUE(Succeeds(As(kSocial).Create("Download/mine.txt", "mine")));
  AppResult r = As(kSocial).Link("Download/mine.txt", kTheirs);
  EXPECT_TRUE(FailsWith(r, EPERM));
  EXPECT_TRUE(FailsWith(As(kSocial).Link("Download/mine.txt", "Download/free.txt"), EPERM));
  ExpectTheirsUntouched();
}

TEST_F(HiddenNameTest, RenameOntoAHiddenNameIsEaccesNotEexist) {
  ASSERT_TRUE(Succeeds(As(kSocial).Create("Download/mine.txt", "mine")));
  EXPECT_TRUE(FailsWith(As(kSocial).Rename("Download/mine.txt", kTheirs), EACCES));
  EXPECT_TRUE(
      FailsWith(As(kSocial).Rename("Download/mine.txt", kTheirs, RENAME_NOREPLACE), EACCES));
  ExpectTheirsUntouched();
  EXPECT_TRUE(storage_.LowerExists("Download/mine.txt"));
}

TEST_F(HiddenNameTest, ExchangeWithAHiddenNameIsAsWithAMissingOne) {
  ASSERT_TRUE(Succeeds(As(kSocial).Create("Download/mine.txt", "mine")));
  EXPECT_TRUE(FailsWith(
      As(kSocial).Rename("Download/mine.txt", "Download/missing.txt", RENAME_EXCHANGE), ENOENT));
  EXPECT_TRUE(FailsWith(As(kSocial).Rename("Download/mine.txt", kTheirs, RENAME_EXCHANGE), ENOENT));
  ExpectTheirsUntouched();
  EXPECT_TRUE(storage_.LowerExists("Download/mine.txt"));
}

TEST_F(HiddenNameTest, ExclusiveCreateOverAHiddenNameIsNotEexist) {
  AppResult r = As(kSocial).Open(kTheirs, O_WRONLY | O_CREAT | O_EXCL);
  EXPECT_FALSE(r.ok()) << r;
  EXPECT_NE(r.err, EEXIST) << r;
  ExpectTheirsUntouched();
}

TEST_F(HiddenNameTest, TruncatingCreateOverAHiddenNameLeavesItIntact) {
  AppResult r = As(kSocial).Write(kTheirs, "clobbered", O_WRONLY | O_CREAT | O_TRUNC);
  EXPECT_FALSE(r.ok()) << r;
  EXPECT_NE(r.err, EEXIST) << r;
  ExpectTheirsUntouched();
}

TEST_F(HiddenNameTest, MkdirAndSymlinkOverAHiddenNameAreNotEexist) {
  AppResult mkdir = As(kSocial).Mkdir(kTheirs);
  EXPECT_FALSE(mkdir.ok()) << mkdir;
  EXPECT_NE(mkdir.err, EEXIST) << mkdir;
  AppResult symlink = As(kSocial).Symlink("x", kTheirs);
  EXPECT_FALSE(symlink.ok()) << symlink;
  EXPECT_NE(symlink.err, EEXIST) << symlink;
  ExpectTheirsUntouched();
}

}  // namespace
}  // namespace scopedfs::tests
