// POSIX conformance of the permissive mount (issue 11): who may do what. Sticky directories as a
// matrix (owner of the directory x owner of the object x type, for unlink, rmdir and rename out
// of and into them), open's access modes against every permission class of regular files, FIFOs
// and directories, open's flag combinations, truncate, and mkdir and symlink with their modes,
// owners and times. Callers act with umask 0, as conformance suites do. The framework is in
// posix_compare.h.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/posix_compare.h"

namespace scopedfs::tests::posix_compare {
namespace {

const Cred kRoot0{"root umask 0", 0, 0, {}, 0};
const Cred k65533{"65533", 65533, 65533, {}, 0};
// In the group of 65534's files without being their owner.
const Cred k65533In65534{"65533 g65534", 65533, 65534, {65534}, 0};
const Cred k65534As65533{"65534 gid 65533", 65534, 65533, {65533}, 0};

std::string Id(uid_t id) { return id == 0 ? "root" : absl::StrCat(id); }

TEST_F(PosixCompareTest, StickyMatrix) {
  std::vector<Case> cases;
  const std::vector<uid_t> owners = {65534, 0, 65533};
  for (uid_t dir_owner : owners) {
    for (uid_t obj_owner : owners) {
      std::string who = absl::StrCat("dir of ", Id(dir_owner), ", object of ", Id(obj_owner));
      for (Obj::Kind kind : NonDirKinds()) {
        std::string k = KindName(kind);
        std::vector<Obj> tree = {D("t", 01777, dir_owner, dir_owner),
                                 Any(kind, "t/o", 0644, obj_owner, obj_owner),
                                 D("n1", 0755, 65534, 65534)};
        cases.push_back({who + ": unlink a " + k,
                         tree,
                         kNobody000,
                         [](Ctx& c) { c.Do("unlink t/o", unlink("t/o")); },
                         {"t/o", "t"}});
        cases.push_back({who + ": rename a " + k + " out",
                         tree,
                         kNobody000,
                         [](Ctx& c) { c.Do("rename t/o n1/x", rename("t/o", "n1/x")); },
                         {"t/o", "n1/x", "t"}});
        std::vector<Obj> onto = tree;
        onto.push_back(Any(kind, "n1/x", 0644, 65534, 65534));
        cases.push_back({who + ": rename a " + k + " out over one of 65534's",
                         onto,
                         kNobody000,
                         [](Ctx& c) { c.Do("rename t/o n1/x", rename("t/o", "n1/x")); },
                         {"t/o", "n1/x", "t"}});
        // Into the sticky dir, over an object of obj_owner's.
        std::vector<Obj> into = {
            D("t", 01777, dir_owner, dir_owner), Any(kind, "t/o", 0644, obj_owner, obj_owner),
            D("n0", 0755, 65534, 65534), Any(kind, "n0/s", 0644, 65534, 65534)};
        cases.push_back({who + ": rename 65534's " + k + " in over the object",
                         into,
                         kNobody000,
                         [](Ctx& c) { c.Do("rename n0/s t/o", rename("n0/s", "t/o")); },
                         {"t/o", "n0/s", "t"}});
        cases.push_back({who + ": exchange 65534's " + k + " with the object",
                         into,
                         kNobody000,
                         [](Ctx& c) {
                           c.Do("exchange n0/s t/o",
                                renameat2(AT_FDCWD, "n0/s", AT_FDCWD, "t/o", RENAME_EXCHANGE));
                         },
                         {"t/o", "n0/s", "t"}});
      }
      std::vector<Obj> dirs = {D("t", 01777, dir_owner, dir_owner),
                               D("t/d", 0755, obj_owner, obj_owner), D("n1", 0755, 65534, 65534),
                               D("n1/e", 0755, 65534, 65534), D("t/e", 0755, 65534, 65534)};
      cases.push_back({who + ": rmdir a dir",
                       dirs,
                       kNobody000,
                       [](Ctx& c) { c.Do("rmdir t/d", rmdir("t/d")); },
                       {"t/d", "t"}});
      cases.push_back({who + ": rename a dir to another parent",
                       dirs,
                       kNobody000,
                       [](Ctx& c) { c.Do("rename t/d n1/x", rename("t/d", "n1/x")); },
                       {"t/d", "n1/x", "t"}});
      cases.push_back({who + ": rename a dir to another parent over an empty dir",
                       dirs,
                       kNobody000,
                       [](Ctx& c) { c.Do("rename t/d n1/e", rename("t/d", "n1/e")); },
                       {"t/d", "n1/e", "t"}});
      cases.push_back({who + ": rename a dir within",
                       dirs,
                       kNobody000,
                       [](Ctx& c) { c.Do("rename t/d t/x", rename("t/d", "t/x")); },
                       {"t/d", "t/x", "t"}});
      cases.push_back({who + ": rename a dir within over 65534's empty dir",
                       dirs,
                       kNobody000,
                       [](Ctx& c) { c.Do("rename t/d t/e", rename("t/d", "t/e")); },
                       {"t/d", "t/e", "t"}});
      cases.push_back({who + ": rename 65534's dir in over the dir",
                       dirs,
                       kNobody000,
                       [](Ctx& c) { c.Do("rename n1/e t/d", rename("n1/e", "t/d")); },
                       {"t/d", "n1/e", "t"}});
    }
  }
  RunGroup("StickyMatrix", cases);
}

TEST_F(PosixCompareTest, OpenAccessModes) {
  const std::vector<mode_t> modes = {0600, 0060, 0006, 0477, 0747, 0774, 0277, 0727,
                                     0772, 0177, 0717, 0771, 0077, 0707, 0770};
  struct Kind {
    std::string name;
    Obj::Kind kind;
    std::vector<int> flags;
  };
  const std::vector<Kind> kinds = {
      {"file", Obj::kFile, {O_RDONLY, O_WRONLY, O_RDWR, O_RDONLY | O_TRUNC}},
      {"fifo", Obj::kFifo, {O_RDONLY | O_NONBLOCK, O_WRONLY | O_NONBLOCK, O_RDWR}},
      {"dir", Obj::kDir, {O_RDONLY, O_RDONLY | O_DIRECTORY, O_PATH}},
  };
  std::vector<Case> cases;
  for (const Kind& kind : kinds) {
    for (mode_t mode : modes) {
      for (const Cred& who : {kNobody000, k65533In65534, k65533}) {
        cases.push_back(
            {absl::StrFormat("%s %04o of 65534:65534, %s opens", kind.name, mode, who.name),
             {D("n0", 0755, 65534, 65534), Any(kind.kind, "n0/o", mode, 65534, 65534)},
             who,
             [flags = kind.flags](Ctx& c) {
               for (int f : flags) c.Open("n0/o", f, 0644);
             },
             {"n0/o"}});
      }
    }
  }
  RunGroup("OpenModes", cases);
}

TEST_F(PosixCompareTest, OpenFlags) {
  std::vector<Case> cases;
  for (Obj::Kind kind : AllKinds()) {
    cases.push_back({"EEXIST: O_CREAT|O_EXCL on a " + KindName(kind),
                     {Any(kind, "o", 0644)},
                     kRoot0,
                     [](Ctx& c) {
                       c.Open("o", O_CREAT | O_EXCL | O_RDONLY, 0644);
                       c.Open("o", O_CREAT | O_EXCL | O_WRONLY, 0644);
                     },
                     {"o", "."}});
  }
  for (const Cred& who : {kRoot0, kNobody000}) {
    for (int acc : {O_WRONLY, O_RDWR, O_RDONLY}) {
      cases.push_back({who.name + ": create with mode 0000, " + FlagNames(acc),
                       {D("d", 0777)},
                       who,
                       [acc](Ctx& c) {
                         int fd = c.OpenFd("d/f", O_CREAT | acc, 0000);
                         if (fd >= 0) {
                           if (acc != O_RDONLY) c.Do("write", write(fd, "x", 1));
                           c.Fstat(fd, "d/f");
                           close(fd);
                         }
                         c.Open("d/f", acc);
                       },
                       {"d/f", "d"}});
    }
    for (auto [mode, mask] : std::vector<std::pair<mode_t, mode_t>>{
             {0755, 0}, {0151, 0}, {0151, 077}, {0345, 070}, {0345, 0501}, {07777, 0}}) {
      Cred masked = who;
      masked.umask = mask;
      masked.name = absl::StrFormat("%s umask %04o", who.name, mask);
      cases.push_back({absl::StrFormat("%s: O_CREAT %04o", masked.name, mode),
                       {D("d", 0777)},
                       masked,
                       [mode = mode](Ctx& c) {
                         c.Open("d/f", O_CREAT | O_WRONLY, mode);
                         c.Do("mkdir d/e", mkdir("d/e", mode));
                         c.Do("mkfifo d/p", mkfifo("d/p", mode));
                         c.Do("mknod d/r", mknod("d/r", S_IFREG | mode, 0));
                       },
                       {"d/f", "d/e", "d/p", "d/r"}});
    }
  }
  cases.push_back({"owner of the dir creates as another gid",
                   {D("d", 0755, 65534, 65534)},
                   k65534As65533,
                   [](Ctx& c) {
                     c.Open("d/f", O_CREAT | O_WRONLY, 0644);
                     c.Do("mkdir d/e", mkdir("d/e", 0755));
                   },
                   {"d/f", "d/e"}});
  cases.push_back({"65533 creates in root's 0777 dir",
                   {D("d", 0777)},
                   k65533In65534,
                   [](Ctx& c) {
                     c.Open("d/f", O_CREAT | O_WRONLY, 0644);
                     c.Do("mkdir d/e", mkdir("d/e", 0755));
                   },
                   {"d/f", "d/e"}});
  cases.push_back({"create moves the dir's times, opening an existing file does not",
                   {D("d", 0755), F("d/g", 0644)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Times("d", "d", [&c] { c.Open("d/g", O_CREAT | O_RDONLY, 0644); });
                     c.Times("d", "d", [&c] { c.Open("d/f", O_CREAT | O_WRONLY, 0644); });
                   },
                   {"d", "d/g"}});
  cases.push_back({"O_TRUNC of a written file by root",
                   {F("f", 0644)},
                   kRoot0,
                   [](Ctx& c) { c.Open("f", O_WRONLY | O_TRUNC); },
                   {"f"}});
  cases.push_back({"O_TRUNC|O_RDWR by a group member",
                   {F("f", 0664, 1234, 65534)},
                   k65533In65534,
                   [](Ctx& c) { c.Open("f", O_RDWR | O_TRUNC); },
                   {"f"}});
  cases.push_back({"ELOOP: O_NOFOLLOW on a symlink",
                   {F("f", 0644), L("s", "f"), L("dangling", "nowhere")},
                   kRoot0,
                   [](Ctx& c) {
                     c.Open("s", O_RDONLY | O_CREAT | O_NOFOLLOW, 0644);
                     c.Open("s", O_RDONLY | O_NOFOLLOW);
                     c.Open("s", O_WRONLY | O_NOFOLLOW);
                     c.Open("s", O_RDWR | O_NOFOLLOW);
                     c.Open("dangling", O_RDWR | O_CREAT | O_NOFOLLOW, 0644);
                     c.Open("s", O_PATH | O_NOFOLLOW);
                     c.Open("dangling", O_WRONLY | O_CREAT, 0644);
                     c.Open("dangling", O_WRONLY | O_CREAT | O_EXCL, 0644);
                   },
                   {"f", "dangling", "nowhere"}});
  cases.push_back({"EISDIR: a dir opened for writing or truncation",
                   {D("d", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     for (int f : {O_RDONLY, O_WRONLY, O_RDWR, O_RDONLY | O_TRUNC,
                                   O_WRONLY | O_TRUNC, O_RDWR | O_TRUNC, O_CREAT | O_RDONLY,
                                   O_CREAT | O_WRONLY, O_DIRECTORY | O_RDWR}) {
                       c.Open("d", f, 0644);
                     }
                   },
                   {"d"}});
  cases.push_back({"ENOTDIR and EINVAL: O_DIRECTORY on a file, O_CREAT|O_DIRECTORY",
                   {F("f", 0644), D("d", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Open("f", O_RDONLY | O_DIRECTORY);
                     c.Open("g", O_RDONLY | O_CREAT | O_DIRECTORY, 0644);
                     c.Open("d", O_RDONLY | O_CREAT | O_DIRECTORY, 0644);
                   },
                   {"."}});
  cases.push_back({"ENXIO: a socket opened, and a FIFO for writing without a reader",
                   {Any(Obj::kSocket, "sock", 0666), P("p", 0666)},
                   kNobody000,
                   [](Ctx& c) {
                     c.Open("sock", O_RDONLY);
                     c.Open("sock", O_WRONLY);
                     c.Open("sock", O_RDWR);
                     c.Open("sock", O_PATH);
                     c.Open("p", O_WRONLY | O_NONBLOCK);
                   },
                   {"sock", "p"}});
  cases.push_back({"device nodes opened on a nodev lower tree",
                   {D("d", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("mknod d/null", mknod("d/null", S_IFCHR | 0666, makedev(1, 3)));
                     c.Do("mknod d/zero", mknod("d/zero", S_IFCHR | 0666, makedev(1, 5)));
                     c.Open("d/null", O_RDWR);
                     c.Read("d/zero");
                     c.Open("d/zero", O_PATH);
                     c.InChild("65534 opens d/null", [] {
                       if (int err = Become(65534, 0)) return err;
                       int fd = open("d/null", O_WRONLY);
                       if (fd < 0) return errno;
                       close(fd);
                       return 0;
                     });
                   },
                   {"d/null", "d/zero"}});
  cases.push_back({"access mode 3 (read and write, no data)",
                   {F("f", 0644), F("g", 0444)},
                   kNobody000,
                   [](Ctx& c) {
                     c.Open("f", O_ACCMODE);
                     c.Open("g", O_ACCMODE);
                   },
                   {"f"}});
  cases.push_back({"a file past 2 GiB: pwrite, size, pread",
                   {},
                   kRoot0,
                   [](Ctx& c) {
                     int fd = c.OpenFd("f", O_CREAT | O_WRONLY, 0755);
                     if (fd < 0) return;
                     off_t off = (2LL << 30) + 1;
                     c.Do("pwrite at 2 GiB + 1", pwrite(fd, "a", 1, off));
                     close(fd);
                     c.Stat("f");
                     fd = c.OpenFd("f", O_RDONLY);
                     char b = 0;
                     c.Do("pread at 2 GiB + 1", pread(fd, &b, 1, off));
                     c.Log("byte", std::string(1, b));
                     close(fd);
                   },
                   {"f"}});
  cases.push_back({"a write through the fd, then fstat",
                   {D("d", 0755, 65534, 65534), F("d/f", 0644, 65534, 65534)},
                   kNobody000,
                   [](Ctx& c) {
                     int fd = c.OpenFd("d/f", O_WRONLY | O_TRUNC);
                     if (fd < 0) return;
                     c.Do("write", write(fd, "x", 1));
                     c.Fstat(fd, "d/f");
                     close(fd);
                     fd = c.OpenFd("d/f", O_WRONLY | O_APPEND);
                     c.Do("append", write(fd, "yz", 2));
                     c.Fstat(fd, "d/f");
                     close(fd);
                     c.Read("d/f");
                   },
                   {"d/f"}});
  RunGroup("OpenFlags", cases);
}

TEST_F(PosixCompareTest, Truncate) {
  std::vector<Case> cases;
  std::vector<std::string> f = {"f"};
  auto trunc = [](off_t len) {
    return [len](Ctx& c) { c.Do(absl::StrCat("truncate f ", len), truncate("f", len)); };
  };
  cases.push_back({"grow to 1234567, shrink to 567",
                   {E("f", 0644)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("truncate 1234567", truncate("f", 1234567));
                     c.Stat("f");
                     c.Do("truncate 567", truncate("f", 567));
                   },
                   f});
  cases.push_back({"grow a written file, read the hole",
                   {F("f", 0644)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("truncate 23456", truncate("f", 23456));
                     int fd = c.OpenFd("f", O_RDONLY);
                     char buf[8] = {1, 1, 1, 1, 1, 1, 1, 1};
                     c.Do("pread at 4", pread(fd, buf, sizeof(buf), 4));
                     c.Log("hole is zeros",
                           std::string(buf, 8) == std::string(8, '\0') ? "yes" : "no");
                     close(fd);
                     c.Do("truncate 1", truncate("f", 1));
                     c.Read("f");
                   },
                   f});
  cases.push_back({"truncate moves ctime and mtime", {E("f", 0644)}, kRoot0, trunc(123), f});
  cases.push_back(
      {"EACCES: 65534 truncates root's 0644 file", {E("f", 0644)}, kNobody000, trunc(123), f});
  cases.push_back({"EACCES: owner truncates its 0444 file",
                   {F("f", 0444, 65534, 65534)},
                   kNobody000,
                   trunc(123),
                   f});
  cases.push_back(
      {"root truncates a 0000 file", {F("f", 0000, 65534, 65534)}, kRoot0, trunc(2), f});
  cases.push_back({"a huge length: 999999999999999",
                   {E("f", 0644)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("truncate 999999999999999", truncate("f", 999999999999999LL));
                     c.Stat("f");
                     c.Do("truncate 0", truncate("f", 0));
                   },
                   f});
  cases.push_back({"EINVAL: negative lengths",
                   {F("f", 0644)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("truncate -1", truncate("f", -1));
                     c.Do("truncate -999999", truncate("f", -999999));
                     int fd = c.OpenFd("f", O_WRONLY);
                     c.Do("ftruncate -1", ftruncate(fd, -1));
                     close(fd);
                   },
                   f});
  cases.push_back({"truncate of a dir, a FIFO, a socket, a device, and through a symlink",
                   {D("d", 0755), P("p", 0666), Any(Obj::kSocket, "sock", 0666),
                    Any(Obj::kChar, "chr", 0666), F("f", 0666), L("s", "f")},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("truncate d", truncate("d", 0));
                     c.Do("truncate p", truncate("p", 0));
                     c.Do("truncate sock", truncate("sock", 0));
                     c.Do("truncate chr", truncate("chr", 0));
                     c.Do("truncate s", truncate("s", 2));
                   },
                   {"d", "p", "sock", "chr", "f", "s"}});
  cases.push_back({"ftruncate: through O_RDONLY and O_WRONLY fds",
                   {F("f", 0666, 65534, 65534)},
                   kNobody000,
                   [](Ctx& c) {
                     int fd = c.OpenFd("f", O_RDONLY);
                     c.Do("ftruncate O_RDONLY", ftruncate(fd, 1));
                     close(fd);
                     fd = c.OpenFd("f", O_WRONLY);
                     c.Do("ftruncate O_WRONLY grow", ftruncate(fd, 100000));
                     c.Fstat(fd, "f");
                     c.Do("ftruncate O_WRONLY shrink", ftruncate(fd, 3));
                     close(fd);
                   },
                   f});
  cases.push_back({"EFBIG: truncate and write past RLIMIT_FSIZE",
                   {E("f", 0666)},
                   kNobody000,
                   [](Ctx& c) {
                     signal(SIGXFSZ, SIG_IGN);
                     struct rlimit rl = {1000, 1000};
                     c.Do("setrlimit FSIZE 1000", setrlimit(RLIMIT_FSIZE, &rl));
                     c.Do("truncate 2000", truncate("f", 2000));
                     c.Do("truncate 1000", truncate("f", 1000));
                     int fd = c.OpenFd("f", O_WRONLY);
                     c.Do("pwrite at 1000", pwrite(fd, "x", 1, 1000));
                     c.Do("pwrite at 999", pwrite(fd, "xy", 2, 999));
                     close(fd);
                   },
                   f});
  RunGroup("Truncate", cases);
}

TEST_F(PosixCompareTest, MkdirAndSymlink) {
  std::vector<Case> cases;
  cases.push_back({"mkdir by the dir's owner, gid as its own or another",
                   {D("p", 0755, 65535, 65535)},
                   Cred{"65535 gid 65534", 65535, 65534, {65534}, 0},
                   [](Ctx& c) {
                     c.Do("mkdir p/d", mkdir("p/d", 0755));
                     c.Stat("p/d");
                   },
                   {"p", "p/d"}});
  cases.push_back(
      {"mkdir moves the parent's times; the new dir's",
       {D("p", 0755)},
       kRoot0,
       [](Ctx& c) { c.Times("p", "p/d", [&c] { c.Do("mkdir p/d", mkdir("p/d", 0755)); }); },
       {"p"}});
  for (Obj::Kind kind : AllKinds()) {
    cases.push_back({"EEXIST: mkdir and symlink onto a " + KindName(kind),
                     {Any(kind, "o", 0644)},
                     kRoot0,
                     [](Ctx& c) {
                       c.Do("mkdir o", mkdir("o", 0755));
                       c.Do("symlink x o", symlink("x", "o"));
                       c.Do("mkdir o/", mkdir("o/", 0755));
                     },
                     {"o", "."}});
  }
  cases.push_back({"mkdir with a trailing slash, EACCES without write, ENOENT without parent",
                   {D("ro", 0555, 65534, 65534)},
                   kNobody000,
                   [](Ctx& c) {
                     c.Do("mkdir d/", mkdir("d/", 0755));
                     c.Do("mkdir d//e//", mkdir("d//e//", 0755));
                     c.Do("mkdir ro/x", mkdir("ro/x", 0755));
                     c.Do("mkdir missing/x", mkdir("missing/x", 0755));
                   },
                   {"d", "d/e", "ro"}});
  cases.push_back({"symlink, follow it, remove its target",
                   {F("f", 0644)},
                   kNobody000,
                   [](Ctx& c) {
                     c.Do("symlink f s", symlink("f", "s"));
                     c.Stat("s");
                     c.Do("stat s", [] {
                       struct stat st;
                       return stat("s", &st);
                     }());
                     c.InChild("root unlinks f", [] { return unlink("f") == 0 ? 0 : errno; });
                     c.Do("stat s without target", [] {
                       struct stat st;
                       return stat("s", &st);
                     }());
                     char buf[16] = {};
                     c.Do("readlink s", readlink("s", buf, sizeof(buf)));
                     c.Log("target", buf);
                   },
                   {"s", "."}});
  cases.push_back({"symlink moves the parent's times",
                   {D("p", 0755)},
                   kRoot0,
                   [](Ctx& c) { c.Do("symlink p/s", symlink("test", "p/s")); },
                   {"p"}});
  cases.push_back({"symlink to the empty string, and symlinks of odd targets",
                   {},
                   kNobody000,
                   [](Ctx& c) {
                     c.Do("symlink '' s", symlink("", "s"));
                     c.Do("symlink / r", symlink("/", "r"));
                     c.Do("symlink ../../.. u", symlink("../../..", "u"));
                     std::string newline = "a\nb";
                     c.Do("symlink a\\nb n", symlink(newline.c_str(), "n"));
                     c.Stat("r");
                     c.Stat("u");
                     c.Stat("n");
                   },
                   {"."}});
  cases.push_back({"EACCES: symlink in root's 0755 dir",
                   {D("p", 0755)},
                   kNobody000,
                   [](Ctx& c) { c.Do("symlink p/s", symlink("test", "p/s")); },
                   {"p"}});
  RunGroup("MkdirSymlink", cases);
}

// Set-id bits after a write by a caller without CAP_FSETID, looked at through the writing fd.
TEST_F(PosixCompareTest, SetIdOnWrite) {
  std::vector<Case> cases;
  const Cred effective{"e65534 g65534", 65534, 65534, {65534}, 0, true};
  for (mode_t mode : {04777, 02777, 06777, 02767, 06755}) {
    for (int acc : {O_WRONLY, O_RDWR}) {
      for (const Cred& who : {kNobody000, effective, kRoot0}) {
        cases.push_back({absl::StrFormat("%s writes a %04o root file through %s", who.name, mode,
                                         FlagNames(acc)),
                         {F("f", mode)},
                         who,
                         [acc](Ctx& c) {
                           int fd = c.OpenFd("f", acc);
                           if (fd < 0) return;
                           c.Do("write", write(fd, "x", 1));
                           c.Fstat(fd, "f");
                           close(fd);
                           c.Stat("f");
                         },
                         {"f"}});
      }
    }
  }
  RunGroup("SetIdOnWrite", cases);
}

// Callers who changed only their effective ids (the real and saved ones stay root's), with root's
// group, their own, or several: what they make, and what they are refused.
TEST_F(PosixCompareTest, EffectiveIds) {
  const std::vector<Cred> callers = {
      {"e65534 g0", 65534, 0, {0}, 0, true},
      {"e65534 g65534", 65534, 65534, {65534}, 0, true},
      {"e65534 g65532,65531", 65534, 65532, {65532, 65531}, 0, true},
  };
  std::vector<Case> cases;
  for (const Cred& who : callers) {
    cases.push_back({who.name + ": creates every kind in root's 0777 dir",
                     {D("d", 0777)},
                     who,
                     [](Ctx& c) {
                       c.Open("d/f", O_CREAT | O_EXCL | O_WRONLY, 0644);
                       c.Do("mkdir d/e", mkdir("d/e", 0755));
                       c.Do("mkfifo d/p", mkfifo("d/p", 0644));
                       c.Do("symlink d/s", symlink("f", "d/s"));
                       c.Do("mknod d/k", mknod("d/k", S_IFSOCK | 0644, 0));
                       c.Do("mknod d/b", mknod("d/b", S_IFBLK | 0644, makedev(1, 2)));
                     },
                     {"d/f", "d/e", "d/p", "d/s", "d/k", "d"}});
    cases.push_back({who.name + ": creates 02777 objects in a set-gid dir of group 65531",
                     {D("g", 02777, 0, 65531)},
                     who,
                     [](Ctx& c) {
                       c.Open("g/f", O_CREAT | O_WRONLY, 02777);
                       c.Do("mkdir g/e", mkdir("g/e", 02777));
                       c.Do("mknod g/p", mknod("g/p", S_IFIFO | 02777, 0));
                     },
                     {"g/f", "g/e", "g/p"}});
    cases.push_back({who.name + ": chgrps and chmods its own file",
                     {F("f", 0755, 65534, 65533)},
                     who,
                     [](Ctx& c) {
                       c.Do("chown f -1:65532", chown("f", -1, 65532));
                       c.Do("chown f -1:0", chown("f", -1, 0));
                       c.Stat("f");
                       c.Do("chmod f 02755", chmod("f", 02755));
                       c.Stat("f");
                       c.Do("chown f 65534:65531", chown("f", 65534, 65531));
                     },
                     {"f"}});
    cases.push_back({who.name + ": refused on root's objects",
                     {D("d", 0755), F("d/f", 0640), D("t", 01777), F("t/g", 0666, 65533, 65533)},
                     who,
                     [](Ctx& c) {
                       c.Do("chmod d/f", chmod("d/f", 0600));
                       c.Do("chown d/f", chown("d/f", 65534, -1));
                       c.Open("d/f", O_RDONLY);
                       c.Open("d/f", O_WRONLY);
                       c.Do("unlink d/f", unlink("d/f"));
                       c.Do("rename d/f x", rename("d/f", "x"));
                       c.Do("link d/f x", link("d/f", "x"));
                       c.Do("unlink t/g", unlink("t/g"));
                       c.Do("rename t/g x", rename("t/g", "x"));
                       c.Do("truncate d/f", truncate("d/f", 0));
                       c.Do("mkdir d/x", mkdir("d/x", 0755));
                     },
                     {"d", "d/f", "t/g"}});
    cases.push_back({who.name + ": writes and truncates a 06777 file of root's",
                     {F("f", 06777), F("g", 06777)},
                     who,
                     [](Ctx& c) {
                       c.Write("f", "x", O_WRONLY | O_APPEND);
                       c.Do("truncate g", truncate("g", 1));
                     },
                     {"f", "g"}});
  }
  RunGroup("EffectiveIds", cases);
}

}  // namespace
}  // namespace scopedfs::tests::posix_compare
