// POSIX conformance of the permissive mount (issue 11), op by op over every file type: chmod,
// chown, link, rename, unlink and rmdir of regular files, directories, FIFOs, block and character
// devices, sockets and symlinks, directly and through a symlink, as root and as other uids (umask
// 0, as conformance suites run), with the ctime and mtime each success moves and each failure
// keeps. The framework is in posix_compare.h.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>
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
// Owner 65534 acting with primary group 65532 and supplementary groups 65532 and 65531.
const Cred k65534Groups{"65534 g65532,65531", 65534, 65532, {65532, 65531}, 0};
const Cred k65534In65533{"65534 g65533,65532", 65534, 65533, {65533, 65532}, 0};
const Cred k65534NotIn{"65534 g65533", 65534, 65533, {65533}, 0};

bool IsLink(Obj::Kind k) { return k == Obj::kSymlink; }

// lchown for a symlink itself, chown for everything else (which follows nothing then).
long ChownOf(Ctx& c, Obj::Kind k, const std::string& path, int uid, int gid) {
  return c.Do(absl::StrCat(IsLink(k) ? "lchown " : "chown ", path, " ", uid, ":", gid),
              IsLink(k) ? lchown(path.c_str(), uid, gid) : chown(path.c_str(), uid, gid));
}

long Remove(Ctx& c, Obj::Kind k, const std::string& path) {
  if (k == Obj::kDir) return c.Do(absl::StrCat("rmdir ", path), rmdir(path.c_str()));
  return c.Do(absl::StrCat("unlink ", path), unlink(path.c_str()));
}

TEST_F(PosixCompareTest, ChmodEveryType) {
  std::vector<Case> cases;
  for (Obj::Kind kind : AllKinds()) {
    if (IsLink(kind)) continue;  // Linux has no lchmod: covered in ChownChmod (EOPNOTSUPP)
    std::string k = KindName(kind);
    cases.push_back({"root chmods a " + k + " 0111",
                     {Any(kind, "o", 0644)},
                     kRoot0,
                     [](Ctx& c) {
                       c.Do("chmod o 0111", chmod("o", 0111));
                       c.Stat("o");
                     },
                     {"o", "."}});
    cases.push_back({"root chmods a " + k + " through a symlink",
                     {Any(kind, "o", 0644), L("s", "o")},
                     kRoot0,
                     [](Ctx& c) { c.Do("chmod s 0222", chmod("s", 0222)); },
                     {"o", "s"}});
    cases.push_back({"65534 chmods root's " + k + ": EPERM",
                     {Any(kind, "o", 0644)},
                     kNobody000,
                     [](Ctx& c) { c.Do("chmod o 0111", chmod("o", 0111)); },
                     {"o"}});
    cases.push_back({"owner sets the sticky bit on its " + k,
                     {Any(kind, "o", 0640, 65534, 65534), L("s", "o")},
                     kNobody000,
                     [](Ctx& c) {
                       c.Do("chmod o 01644", chmod("o", 01644));
                       c.Stat("o");
                       c.Do("chmod s 01640", chmod("s", 01640));
                     },
                     {"o"}});
    cases.push_back({"owner in the group sets set-gid on its " + k,
                     {Any(kind, "o", 0755, 65534, 65534)},
                     kNobody000,
                     [](Ctx& c) {
                       c.Do("chmod o 02755", chmod("o", 02755));
                       c.Stat("o");
                       c.Do("chmod o 0755", chmod("o", 0755));
                     },
                     {"o"}});
    cases.push_back({"owner outside the group sets set-gid on its " + k,
                     {Any(kind, "o", 0755, 65534, 65534)},
                     k65534NotIn,
                     [](Ctx& c) { c.Do("chmod o 02755", chmod("o", 02755)); },
                     {"o"}});
  }
  cases.push_back({"65533 chmods 65534's file, then root's",
                   {F("o", 0642, 65534, 65534)},
                   k65533,
                   [](Ctx& c) { c.Do("chmod o 0641", chmod("o", 0641)); },
                   {"o"}});
  RunGroup("ChmodTypes", cases);
}

TEST_F(PosixCompareTest, ChownEveryType) {
  std::vector<Case> cases;
  for (Obj::Kind kind : AllKinds()) {
    std::string k = KindName(kind);
    cases.push_back({"root chowns a " + k + " 123:456 and back",
                     {Any(kind, "o", 0644)},
                     kRoot0,
                     [kind](Ctx& c) {
                       ChownOf(c, kind, "o", 123, 456);
                       c.Stat("o");
                       ChownOf(c, kind, "o", 0, 0);
                     },
                     {"o"}});
    cases.push_back({"root lchowns a " + k,
                     {Any(kind, "o", 0644)},
                     kRoot0,
                     [](Ctx& c) { c.Do("lchown o 123:456", lchown("o", 123, 456)); },
                     {"o"}});
    cases.push_back({"owner with groups chgrps its " + k,
                     {Any(kind, "o", 0644, 65534, 65533)},
                     k65534Groups,
                     [kind](Ctx& c) {
                       ChownOf(c, kind, "o", -1, 65532);
                       c.Stat("o");
                       ChownOf(c, kind, "o", 65534, 65531);
                     },
                     {"o"}});
    cases.push_back({"non-owner chowns root's " + k + " -1:-1",
                     {Any(kind, "o", 0644)},
                     kNobody000,
                     [](Ctx& c) {
                       c.Do("lchown o -1:-1", lchown("o", -1, -1));
                       c.Stat("o");
                     },
                     {"o"}});
    cases.push_back({"root chowns -1:-1 a " + k,
                     {Any(kind, "o", 0644, 65534, 65534)},
                     kRoot0,
                     [](Ctx& c) { c.Do("lchown o -1:-1", lchown("o", -1, -1)); },
                     {"o"}});
    cases.push_back({"root chowns a 06555 " + k,
                     {Any(kind, "o", 06555, 65534, 65533)},
                     kRoot0,
                     [kind](Ctx& c) {
                       ChownOf(c, kind, "o", 65532, 65531);
                       c.Stat("o");
                       if (!IsLink(kind)) c.Do("chmod o 06555", chmod("o", 06555));
                       ChownOf(c, kind, "o", 0, 0);
                     },
                     {"o"}});
    cases.push_back({"owner chgrps a 06555 " + k,
                     {Any(kind, "o", 06555, 65534, 65533)},
                     k65534In65533,
                     [kind](Ctx& c) { ChownOf(c, kind, "o", 65534, 65532); },
                     {"o"}});
    cases.push_back({"owner chgrps -1:65533 a 06555 " + k,
                     {Any(kind, "o", 06555, 65534, 65532)},
                     k65534In65533,
                     [kind](Ctx& c) { ChownOf(c, kind, "o", -1, 65533); },
                     {"o"}});
    cases.push_back({"owner chowns -1:-1 a 06555 " + k,
                     {Any(kind, "o", 06555, 65534, 65533)},
                     k65534In65533,
                     [kind](Ctx& c) { ChownOf(c, kind, "o", -1, -1); },
                     {"o"}});
    cases.push_back({"EPERM: owner gives its " + k + " away or to a foreign group",
                     {Any(kind, "o", 0644, 65534, 65534)},
                     kNobody000,
                     [kind](Ctx& c) {
                       ChownOf(c, kind, "o", 65533, 65533);
                       ChownOf(c, kind, "o", -1, 65533);
                     },
                     {"o"}});
    cases.push_back({"EPERM: 65533 chowns 65534's " + k,
                     {Any(kind, "o", 0644, 65534, 65534)},
                     k65533,
                     [kind](Ctx& c) {
                       ChownOf(c, kind, "o", 65534, 65534);
                       ChownOf(c, kind, "o", 65533, 65533);
                     },
                     {"o"}});
    cases.push_back({"EPERM: 65534 chowns root's " + k,
                     {Any(kind, "o", 0644)},
                     kNobody000,
                     [kind](Ctx& c) {
                       ChownOf(c, kind, "o", 65534, -1);
                       ChownOf(c, kind, "o", -1, 65534);
                       ChownOf(c, kind, "o", 65534, 65534);
                     },
                     {"o"}});
    if (!IsLink(kind)) {
      cases.push_back({"root chowns a " + k + " through a symlink",
                       {Any(kind, "o", 0644), L("s", "o")},
                       kRoot0,
                       [](Ctx& c) { c.Do("chown s 123:456", chown("s", 123, 456)); },
                       {"o", "s"}});
      cases.push_back({"owner with groups chgrps its " + k + " through root's symlink",
                       {Any(kind, "o", 0644, 65534, 65533), L("s", "o")},
                       k65534Groups,
                       [](Ctx& c) {
                         c.Do("chown s -1:65532", chown("s", -1, 65532));
                         c.Do("chown s 65534:65531", chown("s", 65534, 65531));
                       },
                       {"o", "s"}});
      cases.push_back({"root chowns a 06555 " + k + " through a symlink",
                       {Any(kind, "o", 06555, 65534, 65533), L("s", "o")},
                       kRoot0,
                       [](Ctx& c) { c.Do("chown s 65532:65531", chown("s", 65532, 65531)); },
                       {"o", "s"}});
      cases.push_back({"non-owner chowns -1:-1 through a symlink to root's " + k,
                       {Any(kind, "o", 0644), L("s", "o")},
                       kNobody000,
                       [](Ctx& c) { c.Do("chown s -1:-1", chown("s", -1, -1)); },
                       {"o", "s"}});
      cases.push_back({"EPERM: 65534 chowns through a symlink to 65534's " + k,
                       {Any(kind, "o", 0644, 65534, 65534), L("s", "o")},
                       k65533,
                       [](Ctx& c) { c.Do("chown s 65533:65533", chown("s", 65533, 65533)); },
                       {"o", "s"}});
    }
  }
  RunGroup("ChownTypes", cases);
}

TEST_F(PosixCompareTest, LinkEveryType) {
  std::vector<Case> cases;
  for (Obj::Kind kind : {Obj::kFile, Obj::kFifo, Obj::kBlock, Obj::kChar, Obj::kSocket}) {
    std::string k = KindName(kind);
    cases.push_back({"links of a " + k + ": chmod, chown and unlink through them",
                     {Any(kind, "n0", 0644)},
                     kRoot0,
                     [](Ctx& c) {
                       c.Do("link n0 n1", link("n0", "n1"));
                       c.Do("link n1 n2", link("n1", "n2"));
                       c.Stat("n0");
                       c.Do("chmod n1 0201", chmod("n1", 0201));
                       c.Do("chown n1 65534:65533", chown("n1", 65534, 65533));
                       c.Stat("n0");
                       c.Stat("n2");
                       c.Do("unlink n0", unlink("n0"));
                       c.Stat("n0");
                       c.Stat("n1");
                       c.Do("unlink n2", unlink("n2"));
                       c.Stat("n1");
                       c.Do("unlink n1", unlink("n1"));
                       c.Stat("n1");
                     },
                     {"."}});
    cases.push_back({"link of a " + k + " moves its ctime and the dir's times",
                     {Any(kind, "n0", 0644)},
                     kRoot0,
                     [](Ctx& c) { c.Do("link n0 n1", link("n0", "n1")); },
                     {"n0", "."}});
    cases.push_back({"EACCES: 65534 links its " + k + " in root's dir",
                     {Any(kind, "n0", 0644, 65534, 0)},
                     kNobody000,
                     [](Ctx& c) { c.Do("link n0 n1", link("n0", "n1")); },
                     {"n0", "."}});
    cases.push_back({"link of a " + k + " into another dir",
                     {D("a", 0755, 65534, 65534), D("b", 0755, 65534, 65534),
                      Any(kind, "a/n0", 0644, 65534, 65534)},
                     kNobody000,
                     [](Ctx& c) { c.Do("link a/n0 b/n1", link("a/n0", "b/n1")); },
                     {"a/n0", "b/n1", "a", "b"}});
  }
  for (Obj::Kind kind : AllKinds()) {
    cases.push_back({"EEXIST: link onto a " + KindName(kind),
                     {F("n0", 0644), Any(kind, "n1", 0644)},
                     kRoot0,
                     [](Ctx& c) { c.Do("link n0 n1", link("n0", "n1")); },
                     {"n0", "n1"}});
  }
  cases.push_back({"EPERM: root links a dir",
                   {D("d", 0755)},
                   kRoot0,
                   [](Ctx& c) { c.Do("link d e", link("d", "e")); },
                   {"d"}});
  cases.push_back({"EPERM: 65534 links its own dir",
                   {D("d", 0755, 65534, 65534)},
                   kNobody000,
                   [](Ctx& c) { c.Do("link d e", link("d", "e")); },
                   {"d"}});
  cases.push_back({"ENOENT: link of a removed name",
                   {F("n0", 0644)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("link n0 n1", link("n0", "n1"));
                     c.Do("unlink n0", unlink("n0"));
                     c.Do("unlink n1", unlink("n1"));
                     c.Do("link n0 n1 again", link("n0", "n1"));
                   },
                   {"."}});
  cases.push_back({"linkat AT_SYMLINK_FOLLOW of a symlink",
                   {F("f", 0644), L("s", "f")},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("linkat s t FOLLOW",
                          linkat(AT_FDCWD, "s", AT_FDCWD, "t", AT_SYMLINK_FOLLOW));
                     c.SameInode("f", "t");
                   },
                   {"f", "s", "t"}});
  RunGroup("LinkTypes", cases);
}

TEST_F(PosixCompareTest, RenameEveryType) {
  std::vector<Case> cases;
  for (Obj::Kind kind : {Obj::kFile, Obj::kFifo, Obj::kBlock, Obj::kChar, Obj::kSocket}) {
    std::string k = KindName(kind);
    cases.push_back({"rename a " + k + ", link it back, rename the link",
                     {Any(kind, "n0", 0644)},
                     kRoot0,
                     [](Ctx& c) {
                       c.Do("rename n0 n1", rename("n0", "n1"));
                       c.Stat("n0");
                       c.Stat("n1");
                       c.Do("link n1 n0", link("n1", "n0"));
                       c.Do("rename n1 n2", rename("n1", "n2"));
                       c.Stat("n1");
                       c.Stat("n2");
                       c.SameInode("n0", "n2");
                     },
                     {"n0", "."}});
    cases.push_back({"rename a " + k + " over a target with another link",
                     {Any(kind, "src", 0644), Any(kind, "dst", 0644), H("dstlnk", "dst")},
                     kRoot0,
                     [](Ctx& c) { c.Do("rename src dst", rename("src", "dst")); },
                     {"dstlnk", "."}});
  }
  for (Obj::Kind kind : AllKinds()) {
    std::string k = KindName(kind);
    cases.push_back({"rename of a " + k + " moves its ctime",
                     {Any(kind, "src", 0644)},
                     kRoot0,
                     [](Ctx& c) {
                       c.Times("src", "dst",
                               [&c] { c.Do("rename src dst", rename("src", "dst")); });
                     },
                     {"."}});
    cases.push_back({"EACCES: 65534 renames root's " + k + " in root's dir",
                     {Any(kind, "n0", 0644)},
                     kNobody000,
                     [](Ctx& c) { c.Do("rename n0 n1", rename("n0", "n1")); },
                     {"n0", "."}});
    if (kind != Obj::kDir) {
      cases.push_back({"ENOTDIR: rename a dir onto a " + k,
                       {D("d", 0755), Any(kind, "n", 0644)},
                       kRoot0,
                       [](Ctx& c) { c.Do("rename d n", rename("d", "n")); },
                       {"d", "n"}});
      cases.push_back({"EISDIR: rename a " + k + " onto a dir",
                       {D("d", 0755), Any(kind, "n", 0644)},
                       kRoot0,
                       [](Ctx& c) { c.Do("rename n d", rename("n", "d")); },
                       {"d", "n"}});
      cases.push_back({"ENOTDIR: a " + k + " in the prefix of either name",
                       {D("d", 0755), Any(kind, "d/n1", 0644), F("d/n2", 0644)},
                       kRoot0,
                       [](Ctx& c) {
                         c.Do("rename d/n1/test d/n3", rename("d/n1/test", "d/n3"));
                         c.Do("rename d/n2 d/n1/test", rename("d/n2", "d/n1/test"));
                         c.Do("link d/n2 d/n1/test", link("d/n2", "d/n1/test"));
                       },
                       {"d/n1", "d/n2"}});
    }
    cases.push_back({"ENOTEMPTY: rename a dir onto a dir holding a " + k,
                     {D("a", 0755), D("b", 0755), Any(kind, "b/x", 0644)},
                     kRoot0,
                     [](Ctx& c) { c.Do("rename a b", rename("a", "b")); },
                     {"a", "b", "b/x"}});
  }
  cases.push_back({"rename a dir to another parent moves its .. link",
                   {D("sp", 0755), D("dp", 0755), D("sp/s", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     c.SameInode("sp/s/..", "sp");
                     c.Do("rename sp/s dp/d", rename("sp/s", "dp/d"));
                     c.SameInode("dp/d/..", "dp");
                     c.Stat("sp");
                     c.Stat("dp");
                   },
                   {"sp", "dp", "dp/d"}});
  cases.push_back({"rename a symlink: the target stays",
                   {F("n0", 0644), L("n1", "n0")},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("rename n1 n2", rename("n1", "n2"));
                     c.Stat("n2");
                     c.SameInode("n0", "n2");
                   },
                   {"n0", "n2"}});
  // Write permission on the parents is enough for a file; a dir moved to another parent also
  // needs write permission on itself (its .. changes), but not when it stays.
  cases.push_back({"65534 renames root's 0700 dir within and out of a 0777 dir",
                   {D("p", 0777), D("q", 0777), D("p/d", 0700)},
                   kNobody000,
                   [](Ctx& c) {
                     c.Do("rename p/d p/e", rename("p/d", "p/e"));
                     c.Do("rename p/e p/d", rename("p/e", "p/d"));
                     c.Do("rename p/d q/e", rename("p/d", "q/e"));
                   },
                   {"p/d", "q/e"}});
  cases.push_back({"65534 moves root's file out of a 0777 dir",
                   {D("p", 0777), D("q", 0777), F("p/f", 0644)},
                   kNobody000,
                   [](Ctx& c) { c.Do("rename p/f q/g", rename("p/f", "q/g")); },
                   {"p", "q", "q/g"}});
  cases.push_back({"EINVAL: rename a dir into its own subdir, and a dir onto its parent",
                   {D("a", 0755), D("a/b", 0755), D("a/b/c", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("rename a a/b/c/d", rename("a", "a/b/c/d"));
                     c.Do("rename a/b/c a", rename("a/b/c", "a"));
                     c.Do("rename a/b/c a/b", rename("a/b/c", "a/b"));
                     c.Do("rename a/b a/b/c", rename("a/b", "a/b/c"));
                   },
                   {"a", "a/b", "a/b/c"}});
  cases.push_back({"rename an empty dir over an empty dir",
                   {D("a", 0755), D("b", 0755, 65534)},
                   kRoot0,
                   [](Ctx& c) { c.Do("rename a b", rename("a", "b")); },
                   {".", "b"}});
  cases.push_back({"rename a dir holding 5,000 files, to another parent and back",
                   {D("a", 0755), D("b", 0755), D("a/big", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     int made = 0;
                     for (int i = 0; i < 5000; ++i) {
                       if (i < 50) mkdir(absl::StrCat("a/big/", i).c_str(), 0755);
                       std::string name = absl::StrCat("a/big/", i % 50, "/f", i);
                       int fd = open(name.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                       if (fd >= 0) {
                         ++made;
                         close(fd);
                       }
                     }
                     c.Log("files made", absl::StrCat(made));
                     c.Do("rename a/big b/big", rename("a/big", "b/big"));
                     c.Do("rename b/big a/big2", rename("b/big", "a/big2"));
                     c.Do("exchange a/big2 b",
                          renameat2(AT_FDCWD, "a/big2", AT_FDCWD, "b", RENAME_EXCHANGE));
                   },
                   {"a", "b"}});
  RunGroup("RenameTypes", cases);
}

TEST_F(PosixCompareTest, UnlinkAndRmdirEveryType) {
  std::vector<Case> cases;
  for (Obj::Kind kind : NonDirKinds()) {
    std::string k = KindName(kind);
    cases.push_back({"unlink a " + k,
                     {D("d", 0755), Any(kind, "d/o", 0644)},
                     kRoot0,
                     [](Ctx& c) {
                       c.Do("unlink d/o", unlink("d/o"));
                       c.Stat("d/o");
                     },
                     {"d"}});
    cases.push_back({"EACCES: 65534 unlinks root's " + k + " in root's dir",
                     {Any(kind, "o", 0644)},
                     kNobody000,
                     [](Ctx& c) { c.Do("unlink o", unlink("o")); },
                     {"o", "."}});
    cases.push_back({"ENOTDIR: rmdir a " + k,
                     {Any(kind, "o", 0644)},
                     kRoot0,
                     [](Ctx& c) { c.Do("rmdir o", rmdir("o")); },
                     {"o"}});
    cases.push_back({"ENOTDIR: rmdir below a " + k,
                     {Any(kind, "o", 0644)},
                     kRoot0,
                     [](Ctx& c) { c.Do("rmdir o/x", rmdir("o/x")); },
                     {"o"}});
  }
  for (Obj::Kind kind : {Obj::kFile, Obj::kFifo, Obj::kBlock, Obj::kChar, Obj::kSocket}) {
    cases.push_back({"unlink of one link of a " + KindName(kind) + " moves the other's ctime",
                     {Any(kind, "n0", 0644), H("n1", "n0")},
                     kRoot0,
                     [](Ctx& c) { c.Do("unlink n1", unlink("n1")); },
                     {"n0", "."}});
  }
  for (Obj::Kind kind : AllKinds()) {
    cases.push_back({"ENOTEMPTY: rmdir a dir holding a " + KindName(kind),
                     {D("d", 0755), Any(kind, "d/x", 0644)},
                     kRoot0,
                     [](Ctx& c) { c.Do("rmdir d", rmdir("d")); },
                     {"d", "."}});
  }
  cases.push_back({"EISDIR: unlink a dir, by root and by its owner",
                   {D("d", 0755, 65534, 65534), D("e", 0777, 65534, 65534)},
                   kNobody000,
                   [](Ctx& c) {
                     c.Do("unlink d", unlink("d"));
                     c.Do("unlinkat e AT_REMOVEDIR", unlinkat(AT_FDCWD, "e", AT_REMOVEDIR));
                   },
                   {"d", "."}});
  cases.push_back({"rmdir moves the parent's times",
                   {D("p", 0755), D("p/d", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("rmdir p/d", rmdir("p/d"));
                     c.Stat("p/d");
                   },
                   {"p"}});
  cases.push_back({"rmdir of . and ..",
                   {D("p", 0755), D("p/d", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("rmdir p/d/.", rmdir("p/d/."));
                     c.Do("rmdir p/d/..", rmdir("p/d/.."));
                   },
                   {"p", "p/d"}});
  cases.push_back(
      {"EACCES: rmdir in a 0555 dir, unlink in a 0555 dir",
       {D("p", 0555, 65534, 65534), D("p/d", 0755, 65534, 65534), F("p/f", 0644, 65534, 65534)},
       kNobody000,
       [](Ctx& c) {
         c.Do("rmdir p/d", rmdir("p/d"));
         c.Do("unlink p/f", unlink("p/f"));
       },
       {"p", "p/d", "p/f"}});
  cases.push_back({"ENOENT: rmdir and unlink of missing names",
                   {D("p", 0755)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Do("rmdir p/x", rmdir("p/x"));
                     c.Do("unlink p/x", unlink("p/x"));
                     c.Do("rmdir x/p", rmdir("x/p"));
                   },
                   {"p"}});
  // Remove each kind with the right call, as its owner, in a dir it owns.
  for (Obj::Kind kind : AllKinds()) {
    cases.push_back({"owner removes its " + KindName(kind),
                     {D("p", 0755, 65534, 65534), Any(kind, "p/o", 0600, 65534, 65534)},
                     kNobody000,
                     [kind](Ctx& c) { Remove(c, kind, "p/o"); },
                     {"p"}});
  }
  RunGroup("UnlinkRmdirTypes", cases);
}

// Objects whose name changed or went while the caller still holds them: an open fd of an
// unlinked file or removed dir, a second hard link after the first name went, names below a
// renamed or exchanged dir.
TEST_F(PosixCompareTest, LiveNames) {
  std::vector<Case> cases;
  auto fd_ops = [](Ctx& c, int fd, const std::string& label) {
    c.Do("fchmod " + label, fchmod(fd, 0640));
    c.Do("fchown " + label, fchown(fd, 65534, 65533));
    c.Do("futimens " + label, futimens(fd, nullptr));
    c.Fstat(fd, label);
  };
  cases.push_back({"fchmod, fchown, ftruncate, futimens of an open, unlinked file",
                   {F("f", 0644)},
                   kRoot0,
                   [fd_ops](Ctx& c) {
                     int fd = c.OpenFd("f", O_RDWR);
                     c.Do("unlink f", unlink("f"));
                     fd_ops(c, fd, "fd");
                     c.Do("ftruncate fd 10", ftruncate(fd, 10));
                     c.Do("fsetxattr fd", fsetxattr(fd, "user.k", "v", 1, 0));
                     c.Fstat(fd, "fd");
                     close(fd);
                   },
                   {"."}});
  // (Held by an O_PATH fd only, an unlinked file is gone below the mount: see docs/semantics.md.)
  cases.push_back({"reopen, chmod and truncate through /proc/self/fd of an open, unlinked file",
                   {F("f", 0644)},
                   kRoot0,
                   [](Ctx& c) {
                     int fd = c.OpenFd("f", O_RDWR);
                     c.Do("unlink f", unlink("f"));
                     std::string proc = absl::StrCat("/proc/self/fd/", fd);
                     c.Read(proc);
                     c.Do("chmod /proc/self/fd", chmod(proc.c_str(), 0600));
                     c.Do("chown /proc/self/fd", chown(proc.c_str(), 65534, -1));
                     c.Do("truncate /proc/self/fd", truncate(proc.c_str(), 1));
                     c.Fstat(fd, "fd");
                     c.Do("linkat /proc/self/fd back",
                          linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, "g", AT_SYMLINK_FOLLOW));
                     close(fd);
                   },
                   {"."}});
  cases.push_back({"fchmod, fchown, futimens of an open dir after rmdir, and creating in it",
                   {D("d", 0755)},
                   kRoot0,
                   [fd_ops](Ctx& c) {
                     int fd = c.OpenFd("d", O_RDONLY | O_DIRECTORY);
                     c.Do("rmdir d", rmdir("d"));
                     fd_ops(c, fd, "dir fd");
                     int made = openat(fd, "x", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                     c.Do("openat dir fd x O_CREAT", made);
                     if (made >= 0) close(made);
                     c.Do("mkdirat dir fd y", mkdirat(fd, "y", 0755));
                     close(fd);
                   },
                   {"."}});
  cases.push_back({"a file in a removed dir, still open",
                   {D("d", 0755), F("d/f", 0644)},
                   kRoot0,
                   [fd_ops](Ctx& c) {
                     int fd = c.OpenFd("d/f", O_RDWR);
                     c.Do("unlink d/f", unlink("d/f"));
                     c.Do("rmdir d", rmdir("d"));
                     fd_ops(c, fd, "fd");
                     c.Do("ftruncate fd 1", ftruncate(fd, 1));
                     close(fd);
                   },
                   {"."}});
  cases.push_back({"the other hard link after the first name went",
                   {F("f", 0644), H("g", "f")},
                   kRoot0,
                   [](Ctx& c) {
                     c.Stat("g");
                     c.Stat("f");
                     c.Do("unlink f", unlink("f"));
                     c.Do("chmod g", chmod("g", 0600));
                     c.Do("chown g", chown("g", 65534, 65534));
                     c.Do("truncate g", truncate("g", 2));
                     c.Read("g");
                     c.Do("setxattr g", setxattr("g", "user.k", "v", 1, 0));
                     c.Do("link g h", link("g", "h"));
                     c.Do("rename g i", rename("g", "i"));
                     c.Stat("i");
                     c.Stat("h");
                   },
                   {"h", "i", "."}});
  cases.push_back({"the other hard link in another dir, as its owner",
                   {D("a", 0777), D("b", 0777), F("a/f", 0644, 65534, 65534), H("b/g", "a/f")},
                   kNobody000,
                   [](Ctx& c) {
                     c.Stat("b/g");
                     c.Stat("a/f");
                     c.Do("rename a/f a/h", rename("a/f", "a/h"));
                     c.Do("unlink a/h", unlink("a/h"));
                     c.Do("chmod b/g", chmod("b/g", 0600));
                     c.Open("b/g", O_WRONLY | O_TRUNC);
                     c.Do("rename b/g a/f", rename("b/g", "a/f"));
                     c.Stat("a/f");
                   },
                   {"a/f", "b/g"}});
  cases.push_back({"names below a renamed dir",
                   {D("d", 0755), F("d/f", 0644), D("d/sub", 0755), F("d/sub/g", 0644)},
                   kRoot0,
                   [](Ctx& c) {
                     c.Stat("d/sub/g");
                     c.Do("rename d e", rename("d", "e"));
                     c.Do("chmod e/sub/g", chmod("e/sub/g", 0600));
                     c.Do("unlink e/f", unlink("e/f"));
                     c.Do("mkdir e/sub/h", mkdir("e/sub/h", 0755));
                     c.Do("rename e/sub top", rename("e/sub", "top"));
                     c.Do("link top/g e/g2", link("top/g", "e/g2"));
                     c.Do("truncate top/g", truncate("top/g", 1));
                     c.Stat("top/g");
                     c.Stat("e/g2");
                     c.Do("rmdir top/h", rmdir("top/h"));
                   },
                   {"e", "top", "top/g"}});
  cases.push_back({"names below exchanged dirs, with open fds",
                   {D("a", 0755), D("b", 0755), F("a/f", 0644), F("b/f", 0600)},
                   kRoot0,
                   [](Ctx& c) {
                     int fd = c.OpenFd("a/f", O_RDWR);
                     c.Do("exchange a b", renameat2(AT_FDCWD, "a", AT_FDCWD, "b", RENAME_EXCHANGE));
                     c.Stat("a/f");
                     c.Stat("b/f");
                     c.Do("fchmod fd 0444", fchmod(fd, 0444));
                     c.Stat("b/f");
                     c.Do("chmod a/f 0400", chmod("a/f", 0400));
                     c.Do("unlink b/f", unlink("b/f"));
                     c.Fstat(fd, "fd");
                     c.Do("ftruncate fd", ftruncate(fd, 0));
                     close(fd);
                   },
                   {"a/f", "a", "b"}});
  cases.push_back({"a file renamed over while open",
                   {F("f", 0644), F("g", 0600)},
                   kRoot0,
                   [](Ctx& c) {
                     int fd = c.OpenFd("g", O_RDWR);
                     c.Do("rename f g", rename("f", "g"));
                     c.Do("fchmod old g", fchmod(fd, 0640));
                     c.Do("fchown old g", fchown(fd, 65534, -1));
                     c.Do("ftruncate old g", ftruncate(fd, 0));
                     c.Fstat(fd, "old g");
                     close(fd);
                   },
                   {"g"}});
  RunGroup("LiveNames", cases);
}

}  // namespace
}  // namespace scopedfs::tests::posix_compare
