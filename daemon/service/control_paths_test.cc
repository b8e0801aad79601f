// The default control socket and pid file names: the stem the CLI and the daemon both derive,
// long mount points kept apart and within a socket address, the flags' none and explicit forms,
// and which sockets in a directory answer. Needs no root (the directory is the test's own).
#include "daemon/service/control_paths.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

TEST(MountPointStemTest, NamesTheMountPointWithoutItsSlashes) {
  EXPECT_EQ(MountPointStem("/storage/emulated/0"), "storage-emulated-0");
  EXPECT_EQ(MountPointStem("/mnt/my photos"), "mnt-my-photos");
  EXPECT_EQ(MountPointStem("/"), "-");
  EXPECT_EQ(MountPointStem("/.."), "-..");
  EXPECT_EQ(DefaultControlSocket("/storage/emulated/0"), "/run/scopedfs/storage-emulated-0.sock");
  EXPECT_EQ(DefaultPidFile("/storage/emulated/0"), "/run/scopedfs/storage-emulated-0.pid");
}

TEST(MountPointStemTest, LongMountPointsFitAndStayApart) {
  std::string base = "/" + std::string(150, 'a');
  std::string one = DefaultControlSocket(base + "/1");
  std::string two = DefaultControlSocket(base + "/2");
  EXPECT_NE(one, two);
  EXPECT_LE(one.size(), sizeof(sockaddr_un{}.sun_path) - 1);
  EXPECT_EQ(one.size(), sizeof(sockaddr_un{}.sun_path) - 1) << "cut to the room there is";
  EXPECT_TRUE(absl::EndsWith(one, ".sock")) << one;
  EXPECT_EQ(one, DefaultControlSocket(base + "/1")) << "the same name every time";
}

TEST(ResolveControlPathsTest, FlagsNameNoneOrAPath) {
  absl::StatusOr<ControlPaths> none = ResolveControlPaths("none", "", "/storage/emulated/0");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->socket, "");
  EXPECT_EQ(none->pid_file, "");
  absl::StatusOr<ControlPaths> named =
      ResolveControlPaths("/tmp/x.sock", "", "/storage/emulated/0");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->socket, "/tmp/x.sock");
  EXPECT_EQ(named->pid_file, "") << "no pid file beside a socket the flag names";
  absl::StatusOr<ControlPaths> both = ResolveControlPaths("/tmp/x.sock", "/tmp/x.pid", "/m");
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->pid_file, "/tmp/x.pid");
  absl::StatusOr<ControlPaths> adopted = ResolveControlPaths("", "", "");
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_EQ(adopted->socket, "") << "no mount point, nothing to name it after";
}

TEST(WritePidFileTest, WritesThisProcessAndReplacesAStaleFile) {
  std::string path = absl::StrCat(::testing::TempDir(), "/d.pid");
  std::ofstream(path) << "999999999\nstale\n";
  ASSERT_TRUE(WritePidFile(path).ok());
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, absl::StrCat(getpid(), "\n"));
}

TEST(RemovePidFileTest, RemovesOnlyThisProcesssFile) {
  std::string path = absl::StrCat(::testing::TempDir(), "/r.pid");
  std::ofstream(path) << getpid() + 1 << "\n";  // a successor's
  RemovePidFile(path);
  EXPECT_EQ(access(path.c_str(), F_OK), 0) << "another process's pid file was removed";
  ASSERT_TRUE(WritePidFile(path).ok());
  RemovePidFile(path);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "this process's pid file was left";
}

TEST(LiveControlSocketsTest, OnlySocketsSomeoneListensOn) {
  // Bazel's TEST_TMPDIR is too long for a socket address: a short directory in /tmp.
  char made[] = "/tmp/scopedfs-paths-XXXXXX";
  ASSERT_NE(mkdtemp(made), nullptr) << std::strerror(errno);
  std::string dir = made;
  auto bind_at = [&](const std::string& name, bool listening) {
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::string path = absl::StrCat(dir, "/", name);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    base::UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    if (listening) {
      EXPECT_EQ(listen(fd.get(), 1), 0);
    }
    return fd;
  };
  base::UniqueFd live = bind_at("a.sock", true);
  { base::UniqueFd gone = bind_at("b.sock", true); }  // closed: a killed daemon's leftover
  base::UniqueFd other = bind_at("c.other", true);
  std::ofstream(absl::StrCat(dir, "/d.sock")) << "not a socket";
  std::vector<std::string> found = LiveControlSockets(dir);
  EXPECT_EQ(found, std::vector<std::string>{absl::StrCat(dir, "/a.sock")});
  for (const char* name : {"a.sock", "b.sock", "c.other", "d.sock"}) {
    unlink(absl::StrCat(dir, "/", name).c_str());
  }
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace scopedfs::daemon
