// Conformance for bypass uids: root runs the same syscall sequence on the mount and on a plain
// directory of the same tmpfs, and every result (errno, size, mode, bytes, listing) must match,
// but a directory's size.
#include <fcntl.h>
#include <sys/stat.h>

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

struct Step {
  const char* what;
  std::function<AppResult(const App&, const std::string&)> run;  // (app, base dir)
};

// The same sequence a filesystem conformance suite would use: creation, collisions, links, the
// rename variants, removal errors, xattrs and attribute changes.
std::vector<Step> Sequence() {
  auto p = [](const std::string& base, const char* rel) { return base + "/" + rel; };
  return {
      {"mkdir a", [&](const App& a, const std::string& b) { return a.Mkdir(p(b, "a")); }},
      {"mkdir a again", [&](const App& a, const std::string& b) { return a.Mkdir(p(b, "a")); }},
      {"create a/f",
       [&](const App& a, const std::string& b) { return a.Create(p(b, "a/f"), "hello world"); }},
      {"create a/f O_EXCL again",
       [&](const App& a, const std::string& b) { return a.Create(p(b, "a/f"), "x"); }},
      {"read a/f", [&](const App& a, const std::string& b) { return a.Read(p(b, "a/f")); }},
      {"stat a/f", [&](const App& a, const std::string& b) { return a.Stat(p(b, "a/f")); }},
      {"truncate a/f to 5",
       [&](const App& a, const std::string& b) { return a.Truncate(p(b, "a/f"), 5); }},
      {"read truncated", [&](const App& a, const std::string& b) { return a.Read(p(b, "a/f")); }},
      {"overwrite a/f",
       [&](const App& a, const std::string& b) { return a.Write(p(b, "a/f"), "second"); }},
      {"append a/f",
       [&](const App& a, const std::string& b) {
         return a.Write(p(b, "a/f"), "+more", O_WRONLY | O_APPEND);
       }},
      {"read appended", [&](const App& a, const std::string& b) { return a.Read(p(b, "a/f")); }},
      {"chmod a/f 0600",
       [&](const App& a, const std::string& b) { return a.Chmod(p(b, "a/f"), 0600); }},
      {"stat mode", [&](const App& a, const std::string& b) { return a.Stat(p(b, "a/f")); }},
      {"chown a/f",
       [&](const App& a, const std::string& b) { return a.Chown(p(b, "a/f"), 1234, 1234); }},
      {"link a/f a/g",
       [&](const App& a, const std::string& b) { return a.Link(p(b, "a/f"), p(b, "a/g")); }},
      {"link onto existing",
       [&](const App& a, const std::string& b) { return a.Link(p(b, "a/f"), p(b, "a/g")); }},
      {"symlink a/s -> f",
       [&](const App& a, const std::string& b) { return a.Symlink("f", p(b, "a/s")); }},
      {"readlink a/s", [&](const App& a, const std::string& b) { return a.Readlink(p(b, "a/s")); }},
      {"lstat a/s", [&](const App& a, const std::string& b) { return a.Lstat(p(b, "a/s")); }},
      {"read through a/s", [&](const App& a, const std::string& b) { return a.Read(p(b, "a/s")); }},
      {"list a", [&](const App& a, const std::string& b) { return a.List(p(b, "a")); }},
      {"rename a/g a/h",
       [&](const App& a, const std::string& b) { return a.Rename(p(b, "a/g"), p(b, "a/h")); }},
      {"rename noreplace onto a/f",
       [&](const App& a, const std::string& b) {
         return a.Rename(p(b, "a/h"), p(b, "a/f"), RENAME_NOREPLACE);
       }},
      {"create a/e",
       [&](const App& a, const std::string& b) { return a.Create(p(b, "a/e"), "other"); }},
      {"rename exchange a/e a/h",
       [&](const App& a, const std::string& b) {
         return a.Rename(p(b, "a/e"), p(b, "a/h"), RENAME_EXCHANGE);
       }},
      {"read exchanged a/e",
       [&](const App& a, const std::string& b) { return a.Read(p(b, "a/e")); }},
      {"rename exchange with missing",
       [&](const App& a, const std::string& b) {
         return a.Rename(p(b, "a/e"), p(b, "a/nope"), RENAME_EXCHANGE);
       }},
      {"rename replacing a/f",
       [&](const App& a, const std::string& b) { return a.Rename(p(b, "a/e"), p(b, "a/f")); }},
      {"read replaced a/f",
       [&](const App& a, const std::string& b) { return a.Read(p(b, "a/f")); }},
      {"setxattr user.k",
       [&](const App& a, const std::string& b) { return a.SetXattr(p(b, "a/f"), "user.k", "v1"); }},
      {"getxattr user.k",
       [&](const App& a, const std::string& b) { return a.GetXattr(p(b, "a/f"), "user.k"); }},
      {"getxattr missing",
       [&](const App& a, const std::string& b) { return a.GetXattr(p(b, "a/f"), "user.none"); }},
      {"listxattr", [&](const App& a, const std::string& b) { return a.ListXattr(p(b, "a/f")); }},
      {"mkdir a/d", [&](const App& a, const std::string& b) { return a.Mkdir(p(b, "a/d")); }},
      {"rename dir onto non-empty",
       [&](const App& a, const std::string& b) { return a.Rename(p(b, "a/d"), p(b, "a")); }},
      {"unlink a dir", [&](const App& a, const std::string& b) { return a.Unlink(p(b, "a/d")); }},
      {"rmdir a file", [&](const App& a, const std::string& b) { return a.Rmdir(p(b, "a/f")); }},
      {"rmdir non-empty", [&](const App& a, const std::string& b) { return a.Rmdir(p(b, "a")); }},
      {"open dir for writing",
       [&](const App& a, const std::string& b) { return a.Open(p(b, "a/d"), O_WRONLY); }},
      {"create under a file",
       [&](const App& a, const std::string& b) { return a.Create(p(b, "a/f/x")); }},
      {"create in missing dir",
       [&](const App& a, const std::string& b) { return a.Create(p(b, "nope/x")); }},
      {"name of 256 bytes",
       [&](const App& a, const std::string& b) {
         return a.Create(p(b, "a/") + std::string(256, 'n'));
       }},
      {"name of 255 bytes",
       [&](const App& a, const std::string& b) {
         return a.Create(p(b, "a/") + std::string(255, 'n'));
       }},
      {"unlink missing",
       [&](const App& a, const std::string& b) { return a.Unlink(p(b, "a/missing")); }},
      {"stat missing",
       [&](const App& a, const std::string& b) { return a.Stat(p(b, "a/missing")); }},
      {"list a at the end", [&](const App& a, const std::string& b) { return a.List(p(b, "a")); }},
      {"unlink everything",
       [&](const App& a, const std::string& b) {
         for (const char* f : {"a/f", "a/h", "a/s"}) {
           AppResult r = a.Unlink(p(b, f));
           if (!r.ok()) return r;
         }
         AppResult r = a.Unlink(p(b, "a/") + std::string(255, 'n'));
         if (!r.ok()) return r;
         r = a.Rmdir(p(b, "a/d"));
         return r.ok() ? a.Rmdir(p(b, "a")) : r;
       }},
      {"stat removed dir", [&](const App& a, const std::string& b) { return a.Stat(p(b, "a")); }},
  };
}

// Under the Android rules with POSIX semantics: under ANDROID semantics there are no links, as on a
// device (namespace_security_mount_test), so the sequence's links would differ by design.
TEST(NativeCompareTest, RootSeesExactlyWhatTheLowerFilesystemDoes) {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  ScopedStorage storage;
  SCOPEDFS_ASSERT_OK(storage.Prepare());
  SCOPEDFS_ASSERT_OK(storage.CreateDefaultLayout());
  // Both trees sit on the same tmpfs: "Download/cmp" reached through the mount, "native" directly.
  SCOPEDFS_ASSERT_OK(storage.MkdirLower("Download/cmp"));
  DaemonOptions options;
  options.policy = AndroidRulesUnderPosixSemantics();
  ASSERT_FALSE(options.policy.empty());
  SCOPEDFS_ASSERT_OK(storage.StartDaemon(options));
  ASSERT_EQ(mkdir(storage.Lower("native").c_str(), 0755), 0);

  App on_mount(storage.mountpoint(), kRoot);
  App native(storage.lower(), kRoot);
  int compared = 0;
  for (const Step& step : Sequence()) {
    AppResult m = step.run(on_mount, "Download/cmp");
    AppResult n = step.run(native, "native");
    SCOPED_TRACE(step.what);
    EXPECT_EQ(ErrnoName(m.err), ErrnoName(n.err)) << "mount: " << m << "\nnative: " << n;
    // A directory's size is 4096 for every caller under rules that hide names from some (the
    // kernel keeps one set of attributes per inode, which any caller reads: views.cc).
    if (!S_ISDIR(m.mode)) {
      EXPECT_EQ(m.value, n.value);
    }
    EXPECT_EQ(m.mode, n.mode);
    EXPECT_EQ(m.data, n.data);
    EXPECT_EQ(m.names, n.names);
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(Sequence().size()));
  EXPECT_TRUE(storage.StopDaemon().clean()) << storage.DaemonLog();
}

// The comparison must be able to fail: a plain user (not a bypass uid) gets different answers.
TEST(NativeCompareTest, AnAppDoesNotMatchNative) {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  ScopedStorage storage;
  SCOPEDFS_ASSERT_OK(storage.Prepare());
  SCOPEDFS_ASSERT_OK(storage.CreateDefaultLayout());
  SCOPEDFS_ASSERT_OK(storage.StartDaemon());
  ASSERT_EQ(mkdir(storage.Lower("native").c_str(), 0777), 0);
  ASSERT_EQ(chmod(storage.Lower("native").c_str(), 0777), 0);  // past the umask
  App on_mount(storage.mountpoint(), kCamera);
  App native(storage.lower(), kCamera);
  // Creating a top-level directory: allowed natively (0777 dir), EPERM for an app on the mount.
  AppResult m = on_mount.Mkdir("MyApp");
  AppResult n = native.Mkdir("native/MyApp");
  EXPECT_TRUE(n.ok()) << n;
  EXPECT_TRUE(FailsWith(m, EPERM));
  EXPECT_TRUE(storage.StopDaemon().clean()) << storage.DaemonLog();
}

}  // namespace
}  // namespace scopedfs::tests
