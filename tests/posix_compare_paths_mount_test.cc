// POSIX conformance of the permissive mount (issue 11): how each path-taking call treats its
// path. Components of NAME_MAX (255) bytes and one more, whole paths of PATH_MAX - 1 (4095) bytes
// and one more, search permission denied on a prefix (after a walk that was allowed), write
// permission denied on the parent, a non-directory or a symlink loop in the prefix or at the end,
// and missing names; each op on its own, as root and as other uids. The framework is in
// posix_compare.h.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/posix_compare.h"

namespace scopedfs::tests::posix_compare {
namespace {

const Cred kRoot0{"root umask 0", 0, 0, {}, 0};

// One path-taking call; `p` is the path under test, the other names (if any) are fixed: "src"
// (an existing file), "new" (a free name).
struct PathOp {
  std::string name;
  std::function<long(const char* p)> call;
};

long CloseIfFd(long fd) {
  if (fd >= 0) close(static_cast<int>(fd));
  return fd < 0 ? -1 : 0;
}

const std::vector<PathOp>& PathOps() {
  static const auto* ops = new std::vector<PathOp>{
      {"open O_RDONLY", [](const char* p) { return CloseIfFd(open(p, O_RDONLY | O_CLOEXEC)); }},
      {"open O_CREAT|O_EXCL",
       [](const char* p) {
         return CloseIfFd(open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
       }},
      {"mkdir", [](const char* p) { return static_cast<long>(mkdir(p, 0755)); }},
      {"mkfifo", [](const char* p) { return static_cast<long>(mkfifo(p, 0644)); }},
      {"mknod S_IFIFO",
       [](const char* p) { return static_cast<long>(mknod(p, S_IFIFO | 0644, 0)); }},
      {"symlink to p", [](const char* p) { return static_cast<long>(symlink("src", p)); }},
      {"chmod", [](const char* p) { return static_cast<long>(chmod(p, 0600)); }},
      {"chown -1:-1", [](const char* p) { return static_cast<long>(chown(p, -1, -1)); }},
      {"lchown -1:-1", [](const char* p) { return static_cast<long>(lchown(p, -1, -1)); }},
      {"truncate", [](const char* p) { return static_cast<long>(truncate(p, 1)); }},
      {"lstat",
       [](const char* p) {
         struct stat st;
         return static_cast<long>(lstat(p, &st));
       }},
      {"utimensat NULL",
       [](const char* p) { return static_cast<long>(utimensat(AT_FDCWD, p, nullptr, 0)); }},
      {"readlink",
       [](const char* p) {
         char buf[8];
         return static_cast<long>(readlink(p, buf, sizeof(buf)));
       }},
      {"unlink", [](const char* p) { return static_cast<long>(unlink(p)); }},
      {"rmdir", [](const char* p) { return static_cast<long>(rmdir(p)); }},
      {"link p new", [](const char* p) { return static_cast<long>(link(p, "new")); }},
      {"link src p", [](const char* p) { return static_cast<long>(link("src", p)); }},
      {"rename p new", [](const char* p) { return static_cast<long>(rename(p, "new")); }},
      {"rename src p", [](const char* p) { return static_cast<long>(rename("src", p)); }},
  };
  return *ops;
}

// Every op on `path`, one after the other (for paths where each fails the same way).
Body AllOps(std::string path) {
  return [path](Ctx& c) {
    for (const PathOp& op : PathOps()) c.Do(op.name, op.call(path.c_str()));
  };
}

// The same, each in a grandchild as `who` (the act runs as root between them).
void AllOpsAs(Ctx& c, const Cred& who, const std::string& path, const std::string& label) {
  for (const PathOp& op : PathOps()) {
    c.InChild(absl::StrCat(label, ": ", op.name), [&who, &op, path] {
      if (int err = BecomeCred(who)) return err;
      return op.call(path.c_str()) == 0 ? 0 : errno;
    });
  }
}

TEST_F(PosixCompareTest, NameMax) {
  std::string n255(255, 'm');
  std::string n256(256, 'n');
  std::vector<Case> cases;
  for (const Cred& who : {kRoot0, kNobody000}) {
    for (const PathOp& op : PathOps()) {
      // The object the op acts on exists under a 255-byte name (a file, or a dir for rmdir).
      std::vector<Obj> setup = {F("src", 0666, who.uid, who.gid)};
      bool makes = op.name.rfind("open O_CREAT", 0) == 0 || op.name == "mkdir" ||
                   op.name == "mkfifo" || op.name == "mknod S_IFIFO" || op.name == "symlink to p" ||
                   op.name == "link src p" || op.name == "rename src p";
      if (!makes) {
        setup.push_back(op.name == "rmdir" ? D(n255, 0755, who.uid, who.gid)
                                           : F(n255, 0666, who.uid, who.gid));
      }
      cases.push_back({who.name + ": " + op.name + " of a 255-byte name",
                       setup,
                       who,
                       [op, n255](Ctx& c) { c.Do(op.name, op.call(n255.c_str())); },
                       {n255, "src", "."}});
      cases.push_back({who.name + ": " + op.name + " of a 256-byte name",
                       setup,
                       who,
                       [op, n256](Ctx& c) { c.Do(op.name, op.call(n256.c_str())); },
                       {"src", "."}});
    }
    cases.push_back({who.name + ": every op below a 256-byte component",
                     {F("src", 0666)},
                     who,
                     AllOps(n256 + "/x"),
                     {"src", "."}});
    cases.push_back({who.name + ": a symlink to a 256-byte name, and a 255-byte symlink target",
                     {},
                     who,
                     [n255, n256](Ctx& c) {
                       c.Do("symlink n256 s", symlink(n256.c_str(), "s"));
                       c.Do("open s", CloseIfFd(open("s", O_RDONLY | O_CLOEXEC)));
                       c.Do("symlink n255 t", symlink(n255.c_str(), "t"));
                       c.Open(n255, O_CREAT | O_WRONLY, 0644);
                       c.Read("t");
                     },
                     {"s", "t"}});
  }
  RunGroup("NameMax", cases);
}

// A relative path of PATH_MAX - 1 (4095) bytes, as a conformance suite builds it: 31
// directories of 127 bytes, then a 127-byte name. Below the case directory, so the path from the
// mount's root is longer than PATH_MAX, which the kernel allows.
std::string LongPath() {
  std::string path;
  for (int i = 0; i < 32; ++i) {
    if (i > 0) path += '/';
    path += std::string(127, static_cast<char>('a' + i % 26));
  }
  return path;
}

TEST_F(PosixCompareTest, PathMax) {
  std::string nx = LongPath();
  std::string nxx = nx + "x";
  std::string dir = nx.substr(0, nx.rfind('/'));
  ASSERT_EQ(nx.size(), 4095u);
  std::vector<Obj> dirs;
  for (size_t slash = nx.find('/'); slash != std::string::npos; slash = nx.find('/', slash + 1)) {
    dirs.push_back(D(nx.substr(0, slash), 0777));
  }
  std::vector<Case> cases;
  for (const Cred& who : {kRoot0, kNobody000}) {
    for (const PathOp& op : PathOps()) {
      std::vector<Obj> setup = dirs;
      setup.push_back(F("src", 0666, who.uid, who.gid));
      bool makes = op.name.rfind("open O_CREAT", 0) == 0 || op.name == "mkdir" ||
                   op.name == "mkfifo" || op.name == "mknod S_IFIFO" || op.name == "symlink to p" ||
                   op.name == "link src p" || op.name == "rename src p";
      if (!makes) {
        setup.push_back(op.name == "rmdir" ? D(nx, 0755, who.uid, who.gid)
                                           : F(nx, 0666, who.uid, who.gid));
      }
      cases.push_back({who.name + ": " + op.name + " of a 4095-byte path",
                       setup,
                       who,
                       [op, nx](Ctx& c) {
                         c.Do(op.name, op.call(nx.c_str()));
                         c.Stat(nx);
                       },
                       {"src", "."}});
      cases.push_back({who.name + ": " + op.name + " of a 4096-byte path",
                       setup,
                       who,
                       [op, nxx](Ctx& c) { c.Do(op.name, op.call(nxx.c_str())); },
                       {"src", "."}});
    }
    std::vector<Obj> setup = dirs;
    setup.push_back(F(nx, 0666, who.uid, who.gid));
    cases.push_back({who.name + ": symlinks to and at 4095-byte paths, and to a 4096-byte one",
                     setup,
                     who,
                     [nx, nxx](Ctx& c) {
                       c.Do("symlink nx s", symlink(nx.c_str(), "s"));
                       c.Stat("s");
                       c.Read("s");
                       std::string buf(5000, '\0');
                       long n = c.Do("readlink s", readlink("s", buf.data(), buf.size()));
                       c.Log("readlink s is nx", n > 0 && buf.substr(0, n) == nx ? "yes" : "no");
                       c.Do("symlink nxx t", symlink(nxx.c_str(), "t"));
                       c.Do("unlink nx", unlink(nx.c_str()));
                       c.Do("symlink s nx", symlink("s", nx.c_str()));
                       c.Stat(nx);
                       c.Do("symlink s nxx", symlink("s", nxx.c_str()));
                     },
                     {"s", "t"}});
    cases.push_back({who.name + ": a file at a 4095-byte path: hard links, renames, chdir",
                     setup,
                     who,
                     [nx, dir](Ctx& c) {
                       c.Do("link nx l", link(nx.c_str(), "l"));
                       c.Stat("l");
                       c.Do("unlink nx", unlink(nx.c_str()));
                       c.Do("link l nx", link("l", nx.c_str()));
                       c.Do("rename nx r", rename(nx.c_str(), "r"));
                       c.Do("rename r nx", rename("r", nx.c_str()));
                       c.Stat("l");
                       c.Do("chdir dir", chdir(dir.c_str()));
                       c.Stat(nx.substr(dir.size() + 1));
                     },
                     {"l", "."}});
  }
  // Twice as deep: each call's path stays short (the walk goes by chdir), the tree does not.
  cases.push_back({"a tree 8 KiB deep, made and used a level at a time",
                   {},
                   kNobody000,
                   [](Ctx& c) {
                     std::string level(200, 'L');
                     int made = 0;
                     for (int i = 0; i < 45; ++i) {
                       if (mkdir(level.c_str(), 0755) != 0 || chdir(level.c_str()) != 0) break;
                       ++made;
                     }
                     c.Log("levels made", absl::StrCat(made));
                     c.Open("f", O_CREAT | O_WRONLY, 0644);
                     c.Do("chmod f", chmod("f", 0600));
                     c.Do("link f g", link("f", "g"));
                     c.Do("rename g h", rename("g", "h"));
                     c.Do("symlink f s", symlink("f", "s"));
                     c.Read("s");
                     c.Do("truncate h", truncate("h", 1));
                     c.Stat("h");
                     c.Do("unlink f", unlink("f"));
                     c.Do("mkdir d", mkdir("d", 0755));
                     c.Do("rmdir d", rmdir("d"));
                     c.Do("chdir ../..", chdir("../.."));
                     c.Stat(level + "/" + level + "/h");
                   },
                   {"."}});
  RunGroup("PathMax", cases);
}

TEST_F(PosixCompareTest, SearchAndWritePermission) {
  // d and e belong to 65534; root flips d's mode between the walks.
  std::vector<Obj> tree = {D("d", 0755, 65534, 65534),
                           D("e", 0755, 65534, 65534),
                           F("d/f", 0644, 65534, 65534),
                           D("d/sub", 0755, 65534, 65534),
                           L("d/s", "f"),
                           F("src", 0644, 65534, 65534),
                           F("d/src", 0644, 65534, 65534)};
  std::vector<Case> cases;
  cases.push_back({"65534 walks d 0755, then 0644, then 0755 again",
                   tree,
                   kRoot0,
                   [](Ctx& c) {
                     c.InChild("65534 lstat d/f", [] {
                       if (int err = BecomeCred(kNobody000)) return err;
                       struct stat st;
                       return lstat("d/f", &st) == 0 ? 0 : errno;
                     });
                     c.Do("chmod d 0644", chmod("d", 0644));
                     AllOpsAs(c, kNobody000, "d/f", "d 0644, d/f");
                     AllOpsAs(c, kNobody000, "d/sub", "d 0644, d/sub");
                     AllOpsAs(c, kNobody000, "d/x", "d 0644, d/x");
                     c.Do("chmod d 0755", chmod("d", 0755));
                     c.InChild("65534 chmod d/f 0600 again", [] {
                       if (int err = BecomeCred(kNobody000)) return err;
                       return chmod("d/f", 0600) == 0 ? 0 : errno;
                     });
                   },
                   {"d", "d/f", "d/sub", "d/s"}});
  cases.push_back({"65534 links and renames across a dir without search",
                   tree,
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("chmod d 0644", chmod("d", 0644));
                     c.InChild("65534 link d/f e/g", [] {
                       if (int err = BecomeCred(kNobody000)) return err;
                       return link("d/f", "e/g") == 0 ? 0 : errno;
                     });
                     c.InChild("65534 link src d/g", [] {
                       if (int err = BecomeCred(kNobody000)) return err;
                       return link("src", "d/g") == 0 ? 0 : errno;
                     });
                     c.InChild("65534 rename src d/g", [] {
                       if (int err = BecomeCred(kNobody000)) return err;
                       return rename("src", "d/g") == 0 ? 0 : errno;
                     });
                     c.InChild("65534 rename d/f e/g", [] {
                       if (int err = BecomeCred(kNobody000)) return err;
                       return rename("d/f", "e/g") == 0 ? 0 : errno;
                     });
                   },
                   {"d", "d/f", "e", "src"}});
  for (mode_t mode : {0555, 0355, 0655}) {
    cases.push_back({absl::StrCat("65534 changes entries of its own 0", mode & 0777, " dir"),
                     tree,
                     kNobody000,
                     [mode](Ctx& c) {
                       c.Do("chmod d", chmod("d", mode));
                       c.Do("link d/f d/g", link("d/f", "d/g"));
                       c.Do("link src d/g", link("src", "d/g"));
                       c.Do("link d/f e/g", link("d/f", "e/g"));
                       c.Do("rename d/f d/g", rename("d/f", "d/g"));
                       c.Do("rename d/src e/g", rename("d/src", "e/g"));
                       c.Do("rename src d/h", rename("src", "d/h"));
                       c.Do("unlink d/f", unlink("d/f"));
                       c.Do("rmdir d/sub", rmdir("d/sub"));
                       c.Do("mkdir d/x", mkdir("d/x", 0755));
                       c.Do("symlink d/y", symlink("f", "d/y"));
                       c.Do("mkfifo d/z", mkfifo("d/z", 0644));
                       c.Open("d/w", O_CREAT | O_RDONLY, 0644);
                       c.Open("d/f", O_CREAT | O_RDONLY, 0644);
                       c.Do("chmod d/f", chmod("d/f", 0600));
                     },
                     {"d", "d/f", "e", "src"}});
  }
  cases.push_back({"65534 creates with O_CREAT|O_RDONLY in root's 0755 dir",
                   {D("d", 0755)},
                   kNobody000,
                   [](Ctx& c) { c.Open("d/n", O_CREAT | O_RDONLY, 0644); },
                   {"d"}});
  RunGroup("SearchWrite", cases);
}

TEST_F(PosixCompareTest, PrefixErrors) {
  std::vector<Obj> tree = {F("src", 0666), F("f", 0666),        D("d", 0777),
                           P("p", 0666),   L("loop1", "loop2"), L("loop2", "loop1"),
                           L("sf", "f"),   L("sd", "d"),        L("dangling", "missing/x")};
  std::vector<Case> cases;
  for (const Cred& who : {kRoot0, kNobody000}) {
    cases.push_back({who.name + ": a file in the prefix", tree, who, AllOps("f/x"), {"f", "."}});
    cases.push_back({who.name + ": a fifo in the prefix", tree, who, AllOps("p/x"), {"p", "."}});
    cases.push_back(
        {who.name + ": a symlink to a file in the prefix", tree, who, AllOps("sf/x"), {"f", "."}});
    cases.push_back(
        {who.name + ": a trailing slash on a file", tree, who, AllOps("f/"), {"f", "."}});
    cases.push_back({who.name + ": a loop in the prefix", tree, who, AllOps("loop1/x"), {"."}});
    cases.push_back({who.name + ": a loop at the end", tree, who, AllOps("loop1"), {"loop1", "."}});
    cases.push_back(
        {who.name + ": a missing dir in the prefix", tree, who, AllOps("missing/x"), {"."}});
    cases.push_back(
        {who.name + ": a dangling symlink in the prefix", tree, who, AllOps("dangling/x"), {"."}});
    cases.push_back({who.name + ": a symlink to a dir with a trailing slash",
                     tree,
                     who,
                     AllOps("sd/"),
                     {"d", "sd", "."}});
    cases.push_back({who.name + ": missing names", tree, who, AllOps("missing"), {"."}});
    cases.push_back({who.name + ": the empty path", tree, who, AllOps(""), {"."}});
    cases.push_back({who.name + ": a loop of symlinks through a dir",
                     tree,
                     who,
                     [](Ctx& c) {
                       c.Do("symlink d/up", symlink("..", "d/up"));
                       c.Do("symlink d/self", symlink("self", "d/self"));
                       c.Stat("d/up/d/up/d/up/f");
                       c.Open("d/self/x", O_RDONLY);
                       c.Open("d/self", O_RDONLY | O_NOFOLLOW);
                       c.Open("d/up/sd/up/loop2", O_CREAT | O_WRONLY, 0644);
                       c.Open("d/up/sd/up/dangling", O_CREAT | O_WRONLY, 0644);
                     },
                     {"d", "."}});
  }
  RunGroup("PrefixErrors", cases);
}

// Names are bytes: a name that differs from an existing one only in letter case is another name,
// at any depth (the case directory is one level below the mount's root).
TEST_F(PosixCompareTest, CaseSensitiveNames) {
  std::vector<Case> cases;
  for (std::string dir : {".", "d", "d/e"}) {
    std::vector<Obj> tree = {D("d", 0777), D("d/e", 0777)};
    for (const char* n : {"f", "g", "x"}) tree.push_back(F(dir + "/" + n, 0666));
    tree.push_back(D(dir + "/sub", 0777));
    tree.push_back(P(dir + "/p", 0666));
    tree.push_back(L(dir + "/s", "f"));
    for (const Cred& who : {kRoot0, kNobody000}) {
      cases.push_back({who.name + ": case twins in " + dir,
                       tree,
                       who,
                       [dir](Ctx& c) {
                         auto at = [&dir](const char* n) { return dir + "/" + n; };
                         c.Stat(at("F"));
                         c.Open(at("F"), O_CREAT | O_EXCL | O_WRONLY, 0644);
                         c.Do("mkdir SUB", mkdir(at("SUB").c_str(), 0755));
                         c.Do("mkdir Sub", mkdir(at("Sub").c_str(), 0755));
                         c.Do("mkfifo P", mkfifo(at("P").c_str(), 0644));
                         c.Do("symlink S", symlink("f", at("S").c_str()));
                         c.Do("link f G", link(at("f").c_str(), at("G").c_str()));
                         c.Do("rename x X", rename(at("x").c_str(), at("X").c_str()));
                         c.Do("rename g Sub", rename(at("g").c_str(), at("Sub").c_str()));
                         c.Stat(at("F"));
                         c.Stat(at("f"));
                         c.Stat(at("X"));
                         c.Stat(at("x"));
                       },
                       {dir, dir + "/f", dir + "/F", dir + "/SUB", dir + "/X"}});
    }
  }
  RunGroup("CaseNames", cases);
}

// In the mount's root itself, as a suite started there works: every kind made, changed, moved
// and removed at the top level, names the Android layout gives meaning to, case twins.
TEST_F(PosixCompareTest, AtTheRoot) {
  std::vector<Case> cases;
  auto at_root = [&cases](std::string name, std::vector<Obj> setup, Cred who, Body act,
                          std::vector<std::string> observe) {
    Case k{std::move(name), std::move(setup), std::move(who), std::move(act), std::move(observe)};
    k.at_root = true;
    cases.push_back(std::move(k));
  };
  at_root("the root as root sees it", {}, kRoot0,
          [](Ctx& c) {
            c.Stat(".");
            c.Open(".", O_RDONLY | O_DIRECTORY);
          },
          {});
  int n = 0;
  for (Obj::Kind kind : AllKinds()) {
    std::string o = absl::StrCat("top", n++);
    at_root("make, chmod, chown, link, rename, remove a " + KindName(kind) + " at the top",
            {Any(kind, o, 0644)}, kRoot0,
            [o, kind](Ctx& c) {
              if (kind != Obj::kSymlink) c.Do("chmod", chmod(o.c_str(), 0600));
              c.Do("lchown", lchown(o.c_str(), 65534, 65533));
              if (kind != Obj::kDir) c.Do("link", link(o.c_str(), (o + "l").c_str()));
              c.Do("rename", rename(o.c_str(), (o + "r").c_str()));
              c.Stat(o + "r");
              c.Do("remove",
                   kind == Obj::kDir ? rmdir((o + "r").c_str()) : unlink((o + "r").c_str()));
              c.Stat(o + "l");
              unlink((o + "l").c_str());
            },
            {});
  }
  at_root("65534 makes at the top and in its own top-level dir", {D("own", 0755, 65534, 65534)},
          kNobody000,
          [](Ctx& c) {
            c.Open("nobody-file", O_CREAT | O_WRONLY, 0644);
            c.Do("mkdir nobody-dir", mkdir("nobody-dir", 0755));
            c.Open("own/f", O_CREAT | O_WRONLY, 0640);
            c.Do("mkdir own/d", mkdir("own/d", 0700));
            c.Do("rename own/f own/d/g", rename("own/f", "own/d/g"));
            c.Stat("own/d/g");
          },
          {"own", "own/d"});
  at_root("the Android layout's names mean nothing here",
          {D("Android", 0777), D("Android/data", 0777), D("DCIM", 0777)}, kNobody000,
          [](Ctx& c) {
            c.Do("mkdir Android/data/com.example.x", mkdir("Android/data/com.example.x", 0700));
            c.Open("Android/data/com.example.x/f", O_CREAT | O_WRONLY, 0600);
            c.Do("mkdir Android/obb", mkdir("Android/obb", 0755));
            c.Open("DCIM/notes.txt", O_CREAT | O_WRONLY, 0644);
            c.Write("DCIM/photo.jpg", "not a jpeg", O_CREAT | O_WRONLY);
            c.Do("mkdir dcim", mkdir("dcim", 0755));
            c.Do("mkdir Music2", mkdir("Music2", 0755));
            c.Do("rename DCIM/notes.txt Android/data/com.example.x/n",
                 rename("DCIM/notes.txt", "Android/data/com.example.x/n"));
            c.Stat("Android/data/com.example.x/n");
            c.Stat("Android/data/com.example.x");
          },
          {"Android", "Android/data", "DCIM", "dcim"});
  RunGroup("AtTheRoot", cases);
}

}  // namespace
}  // namespace scopedfs::tests::posix_compare
