// POSIX conformance of the permissive mount (issue 11): the error codes of path walks and
// namespace ops (ENAMETOOLONG, ELOOP, ENOTDIR, EISDIR, EEXIST, ENOTEMPTY, EXDEV, EINVAL, ENOENT),
// and FIFOs, sockets and device nodes. The framework is in posix_compare.h.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/posix_compare.h"

namespace scopedfs::tests::posix_compare {
namespace {

// --- Errors -----------------------------------------------------------------------------------

TEST_F(PosixCompareTest, Errors) {
  std::string long_name(256, 'n');
  std::string max_name(255, 'm');
  std::vector<Obj> tree = {F("f", 0666, 1234, 1234),
                           D("d", 0777, 1234, 1234),
                           D("e", 0777, 1234, 1234),
                           F("e/x", 0666, 1234, 1234),
                           L("loop1", "loop2"),
                           L("loop2", "loop1"),
                           L("sf", "f"),
                           L("sd", "d")};
  std::vector<Case> cases;
  for (const Cred& who : {kRootCred, kUser}) {
    auto add = [&](std::string name, Body act) {
      cases.push_back({who.name + ": " + name, tree, who, std::move(act), {"f", "d", "e"}});
    };
    add("ENAMETOOLONG", [long_name, max_name](Ctx& c) {
      c.Open(long_name, O_CREAT | O_WRONLY);
      c.Stat(long_name);
      c.Do("mkdir long", mkdir(long_name.c_str(), 0777));
      c.Do("symlink long", symlink("f", long_name.c_str()));
      c.Do("rename f long", rename("f", long_name.c_str()));
      c.Do("link f long", link("f", long_name.c_str()));
      c.Do("mkfifo long", mkfifo(long_name.c_str(), 0666));
      c.Open(max_name, O_CREAT | O_WRONLY);
      c.Stat(max_name);
    });
    add("ELOOP", [](Ctx& c) {
      c.Open("loop1", O_RDONLY);
      c.Open("loop1", O_CREAT | O_WRONLY);
      c.Open("sf", O_RDONLY | O_NOFOLLOW);
      c.Open("sf", O_PATH | O_NOFOLLOW);
      c.Stat("loop1");
      c.Do("stat loop1 (follow)", [] {
        struct stat st;
        return stat("loop1", &st);
      }());
      c.Do("chdir loop1/x", access("loop1/x", F_OK));
    });
    add("ELOOP: a chain of 41 symlinks", [](Ctx& c) {
      c.Do("symlink l0", symlink("f", "l0"));
      for (int i = 1; i <= 41; ++i) {
        symlink(absl::StrCat("l", i - 1).c_str(), absl::StrCat("l", i).c_str());
      }
      c.Open("l39", O_RDONLY);  // 40 links: the most a walk follows
      c.Open("l41", O_RDONLY);
    });
    add("ENOTDIR", [](Ctx& c) {
      c.Open("f/x", O_RDONLY);
      c.Open("f/x", O_CREAT | O_WRONLY);
      c.Stat("f/");
      c.Do("rmdir f", rmdir("f"));
      c.Do("rename d f", rename("d", "f"));
      c.Open("f", O_RDONLY | O_DIRECTORY);
      c.Open("sf", O_RDONLY | O_DIRECTORY);
      c.Do("mkdir f/x", mkdir("f/x", 0777));
      c.Do("rename f e/x/", rename("f", "e/x/"));
    });
    add("EISDIR", [](Ctx& c) {
      c.Open("d", O_WRONLY);
      c.Open("d", O_RDWR);
      c.Open("d", O_CREAT | O_WRONLY);
      c.Open("sd", O_WRONLY);
      c.Do("unlink d", unlink("d"));
      c.Do("rename f d", rename("f", "d"));
      c.Do("truncate d", truncate("d", 0));
      c.Open("d", O_RDONLY | O_TRUNC);
    });
    add("EEXIST", [](Ctx& c) {
      c.Do("mkdir d", mkdir("d", 0777));
      c.Do("mkdir f", mkdir("f", 0777));
      c.Open("f", O_CREAT | O_EXCL | O_WRONLY);
      c.Open("sf", O_CREAT | O_EXCL | O_WRONLY);
      c.Do("symlink onto f", symlink("x", "f"));
      c.Do("link onto d", link("f", "d"));
      c.Do("mkfifo onto f", mkfifo("f", 0666));
      c.Do("mknod onto sd", mknod("sd", S_IFIFO | 0666, 0));
      c.Do("mkdir onto dangling symlink", mkdir("loop1", 0777));
      c.Do("rename NOREPLACE", renameat2(AT_FDCWD, "f", AT_FDCWD, "e/x", RENAME_NOREPLACE));
    });
    add("ENOTEMPTY", [](Ctx& c) {
      c.Do("rmdir e", rmdir("e"));
      c.Do("rename d e", rename("d", "e"));
      c.Do("rmdir e/..", rmdir("e/.."));
    });
    add("EXDEV", [](Ctx& c) {
      std::string there = c.unique;
      c.Do("rename f to other fs", renameat(AT_FDCWD, "f", c.other, there.c_str()));
      c.Do("rename d to other fs", renameat(AT_FDCWD, "d", c.other, there.c_str()));
      c.Do("link f to other fs", linkat(AT_FDCWD, "f", c.other, there.c_str(), 0));
      int fd = openat(c.other, there.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
      c.Do("create on other fs", fd);
      if (fd >= 0) close(fd);
      c.Do("rename from other fs", renameat(c.other, there.c_str(), AT_FDCWD, "g"));
      c.Do("link from other fs", linkat(c.other, there.c_str(), AT_FDCWD, "h", 0));
      c.Do("exchange with other fs",
           renameat2(AT_FDCWD, "f", c.other, there.c_str(), RENAME_EXCHANGE));
      c.Do("unlink on other fs", unlinkat(c.other, there.c_str(), 0));
    });
    add("EINVAL", [](Ctx& c) {
      c.Do("rename d into d/sub", rename("d", "d/sub"));
      c.Do("rename e into e/x/y", rename("e", "e/x/y"));
      c.Do("rename . x", rename(".", "x"));
      c.Do("rename d/. x", rename("d/.", "x"));
      c.Do("rmdir d/.", rmdir("d/."));
      c.Do("rename EXCHANGE|NOREPLACE",
           renameat2(AT_FDCWD, "f", AT_FDCWD, "e/x", RENAME_EXCHANGE | RENAME_NOREPLACE));
      c.Do("rename bad flag", renameat2(AT_FDCWD, "f", AT_FDCWD, "g", 1u << 7));
      char buf[8];
      c.Do("readlink of a file", readlink("f", buf, sizeof(buf)));
      c.Do("readlink with size 0", readlink("sf", buf, 0));
    });
    add("ENOENT", [](Ctx& c) {
      c.Open("missing", O_RDONLY);
      c.Open("", O_RDONLY);
      c.Open("missing/x", O_CREAT | O_WRONLY);
      c.Do("unlink missing", unlink("missing"));
      c.Do("rename missing", rename("missing", "x"));
      c.Do("link missing", link("missing", "x"));
      c.Do("exchange with missing", renameat2(AT_FDCWD, "f", AT_FDCWD, "nope", RENAME_EXCHANGE));
      c.Open("loop1/../f", O_RDONLY);
    });
    add("rename to itself and hard links of one inode", [](Ctx& c) {
      c.Do("rename f f", rename("f", "f"));
      c.Do("link f g", link("f", "g"));
      c.Do("rename f g (same inode)", rename("f", "g"));
      c.Stat("f");
      c.Stat("g");
      c.Do("rename d d", rename("d", "d"));
    });
  }
  RunGroup("Errors", cases);
}

// --- FIFOs, sockets and device nodes ----------------------------------------------------------

int BindAt(const char* path) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
  if (bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(s, 4) != 0) {
    int err = errno;
    close(s);
    errno = err;
    return -1;
  }
  return s;
}

int ConnectTo(const char* path) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path, sizeof(addr.sun_path) - 1);
  int rc = connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = errno;
  close(s);
  errno = err;
  return rc;
}

TEST_F(PosixCompareTest, FifosSocketsAndDevices) {
  // clang-format off
  std::vector<Case> cases = {
    {"mkfifo by 1234", {}, kUser, [](Ctx& c) { c.Do("mkfifo p 0640", mkfifo("p", 0640)); }, {"p", "."}},
    {"mknod S_IFIFO by 65534", {}, kNobody, [](Ctx& c) { c.Do("mknod p", mknod("p", S_IFIFO | 0666, 0)); }, {"p"}},
    {"mknod S_IFSOCK by 1234", {}, kUser, [](Ctx& c) { c.Do("mknod s", mknod("s", S_IFSOCK | 0755, 0)); }, {"s"}},
    {"mknod S_IFREG by 1234", {}, kUser, [](Ctx& c) { c.Do("mknod r", mknod("r", S_IFREG | 0644, 0)); }, {"r"}},
    {"mknod with type 0 (regular) by 1234", {}, kUser, [](Ctx& c) { c.Do("mknod r", mknod("r", 0644, 0)); }, {"r"}},
    {"mknod S_IFDIR", {}, kRootCred, [](Ctx& c) { c.Do("mknod d", mknod("d", S_IFDIR | 0755, 0)); }, {"d"}},
    {"mknod S_IFCHR 1:3 by root", {}, kRootCred,
     [](Ctx& c) { c.Do("mknod null", mknod("null", S_IFCHR | 0666, makedev(1, 3))); }, {"null"}},
    {"mknod S_IFBLK 7:0 by root", {}, kRootCred,
     [](Ctx& c) { c.Do("mknod loop", mknod("loop", S_IFBLK | 0600, makedev(7, 0))); }, {"loop"}},
    {"mknod S_IFCHR by 1234", {}, kUser,
     [](Ctx& c) { c.Do("mknod null", mknod("null", S_IFCHR | 0666, makedev(1, 3))); }, {"null"}},
    {"mknod S_IFBLK by 65534", {}, kNobody,
     [](Ctx& c) { c.Do("mknod loop", mknod("loop", S_IFBLK | 0666, makedev(7, 0))); }, {"loop"}},
    {"mknod with a bad type", {}, kUser, [](Ctx& c) { c.Do("mknod bad", mknod("bad", 0170000 | 0644, 0)); }},
    {"mkfifo in a 0755 root dir by 65534", {D("d", 0755)}, kNobody,
     [](Ctx& c) { c.Do("mkfifo d/p", mkfifo("d/p", 0666)); }},
    {"mkfifo in a set-gid dir", {D("g", 02777, 0, kShared)}, kUser,
     [](Ctx& c) { c.Do("mkfifo g/p", mkfifo("g/p", 0666)); }, {"g/p"}},
    {"chmod and chown of a fifo", {P("p", 0644, 1234, 1234)}, kUserG, [](Ctx& c) {
       c.Do("chmod p 0600", chmod("p", 0600)); c.Do("chgrp p 2000", chown("p", -1, kShared));
     }, {"p"}},
    {"open a fifo O_RDONLY|O_NONBLOCK", {P("p", 0666, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Open("p", O_RDONLY | O_NONBLOCK); }, {"p"}},
    {"open a fifo O_WRONLY|O_NONBLOCK without a reader", {P("p", 0666, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Open("p", O_WRONLY | O_NONBLOCK); }},
    {"data through a fifo", {P("p", 0666, 1234, 1234)}, kNobody, [](Ctx& c) {
       int r = c.OpenFd("p", O_RDONLY | O_NONBLOCK);
       int w = c.OpenFd("p", O_WRONLY | O_NONBLOCK);
       c.Do("write", write(w, "hi", 2));
       char buf[4] = {};
       long n = c.Do("read", read(r, buf, sizeof(buf)));
       c.Log("bytes", std::string(buf, n > 0 ? n : 0));
       close(r); close(w);
     }, {"p"}},
    {"fifo 0600 root: 65534 opens", {P("p", 0600)}, kNobody,
     [](Ctx& c) { c.Open("p", O_RDONLY | O_NONBLOCK); }},
    {"bind, connect and rebind a unix socket", {}, kUser, [](Ctx& c) {
       int s = static_cast<int>(c.Do("bind sock", BindAt("sock")));
       c.Stat("sock");
       c.Do("connect sock", ConnectTo("sock"));
       c.Do("bind sock again", BindAt("sock"));
       if (s >= 0) close(s);
       c.Do("connect after close", ConnectTo("sock"));
       c.Do("unlink sock", unlink("sock"));
     }, {"sock", "."}},
    {"bind a socket that stays", {}, kNobody000, [](Ctx& c) {
       int s = static_cast<int>(c.Do("bind sock", BindAt("sock")));
       if (s >= 0) close(s);
     }, {"sock"}},
    {"bind in a 0755 root dir by 65534", {D("d", 0755)}, kNobody,
     [](Ctx& c) { c.Do("bind d/sock", BindAt("d/sock")); }},
    {"connect to a socket without write permission", {D("d", 0777)}, kRootCred, [](Ctx& c) {
       int s = static_cast<int>(c.Do("bind d/sock", BindAt("d/sock")));
       c.Do("chmod 0700", chmod("d/sock", 0700));
       c.InChild("65534 connects", [] {
         if (int err = Become(65534, 022)) return err;
         return ConnectTo("d/sock") == 0 ? 0 : errno;
       });
       c.InChild("root connects", [] { return ConnectTo("d/sock") == 0 ? 0 : errno; });
       if (s >= 0) close(s);
     }},
    {"open a socket file", {}, kRootCred, [](Ctx& c) {
       int s = static_cast<int>(c.Do("bind sock", BindAt("sock")));
       c.Open("sock", O_RDONLY);
       if (s >= 0) close(s);
     }},
  };
  // clang-format on
  RunGroup("SpecialFiles", cases);
}

}  // namespace
}  // namespace scopedfs::tests::posix_compare
