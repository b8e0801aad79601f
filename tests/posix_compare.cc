// The comparison framework of the POSIX conformance tests: records, the native-vs-mount runner and
// the one table of allowed differences (see posix_compare.h).
#include "tests/posix_compare.h"

#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests::posix_compare {
namespace {

constexpr char kSelfModeEnv[] = "SCOPEDFS_POSIX_COMPARE_SELF";
constexpr char kVerboseEnv[] = "SCOPEDFS_POSIX_COMPARE_VERBOSE";  // print every native record
constexpr absl::Duration kTimeStep = absl::Milliseconds(20);

}  // namespace

// Differences docs/semantics.md's table allows, "Group/case" -> reason (the same reasons as that
// table of remaining differences); every other difference fails.
const std::map<std::string, AllowedDifference>& AllowedDifferences() {
  static const auto* allowed = new std::map<std::string, AllowedDifference>{
      {"SpecialFiles/data through a fifo",
       {"a FIFO's data passes through the kernel's pipe on the mount's inode, never the lower "
        "FIFO, so the lower FIFO's times (what stat reports) do not move",
        "    native: after p: fifo 0666 1234:1234 nlink=1; ctime moved; mtime moved\n"
        "    mount:  after p: fifo 0666 1234:1234 nlink=1; ctime kept; mtime kept\n"}},
  };
  return *allowed;
}

std::string FlagNames(int flags) {
  std::vector<std::string> names;
  if ((flags & O_TMPFILE) == O_TMPFILE) {
    names.push_back("O_TMPFILE");
    flags &= ~O_TMPFILE;
  }
  switch (flags & O_ACCMODE) {
    case O_RDONLY:
      names.push_back("O_RDONLY");
      break;
    case O_WRONLY:
      names.push_back("O_WRONLY");
      break;
    default:
      names.push_back("O_RDWR");
  }
  for (auto [bit, name] : std::vector<std::pair<int, const char*>>{{O_CREAT, "O_CREAT"},
                                                                   {O_EXCL, "O_EXCL"},
                                                                   {O_TRUNC, "O_TRUNC"},
                                                                   {O_APPEND, "O_APPEND"},
                                                                   {O_NOFOLLOW, "O_NOFOLLOW"},
                                                                   {O_DIRECTORY, "O_DIRECTORY"},
                                                                   {O_NONBLOCK, "O_NONBLOCK"},
                                                                   {O_PATH, "O_PATH"}}) {
    if (flags & bit) names.push_back(name);
  }
  return absl::StrJoin(names, "|");
}

// Type, permission bits (set-id and sticky included), owner, group, links, and size or rdev.
std::string Fields(const struct stat& st) {
  const char* type = S_ISREG(st.st_mode)    ? "reg"
                     : S_ISDIR(st.st_mode)  ? "dir"
                     : S_ISLNK(st.st_mode)  ? "lnk"
                     : S_ISFIFO(st.st_mode) ? "fifo"
                     : S_ISSOCK(st.st_mode) ? "sock"
                     : S_ISCHR(st.st_mode)  ? "chr"
                     : S_ISBLK(st.st_mode)  ? "blk"
                                            : "?";
  std::string out = absl::StrFormat("%s %04o %u:%u nlink=%u", type, st.st_mode & 07777, st.st_uid,
                                    st.st_gid, static_cast<unsigned>(st.st_nlink));
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) absl::StrAppend(&out, " size=", st.st_size);
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    absl::StrAppend(&out, " rdev=", major(st.st_rdev), ",", minor(st.st_rdev));
  }
  return out;
}

// What a case's syscalls write their results into; runs in a forked child as the case's caller.
void Ctx::Log(const std::string& what, const std::string& result) {
  absl::StrAppend(&out, what, ": ", result, "\n");
}

long Ctx::Do(const std::string& what, long rc) {
  int err = errno;
  Log(what, rc < 0 ? ErrnoName(err) : "ok");
  errno = err;
  return rc;
}

int Ctx::OpenFd(const std::string& path, int flags, mode_t mode) {
  return static_cast<int>(Do(absl::StrCat("open ", path, " ", FlagNames(flags)),
                             open(path.c_str(), flags | O_CLOEXEC, mode)));
}

void Ctx::Open(const std::string& path, int flags, mode_t mode) {
  int fd = OpenFd(path, flags, mode);
  if (fd >= 0) close(fd);
}

void Ctx::Stat(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    Log(absl::StrCat("lstat ", path), ErrnoName(errno));
  } else {
    Log(absl::StrCat("lstat ", path), Fields(st));
  }
}

void Ctx::Fstat(int fd, const std::string& label) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    Log(absl::StrCat("fstat ", label), ErrnoName(errno));
  } else {
    Log(absl::StrCat("fstat ", label), Fields(st));
  }
}

void Ctx::MtimeOf(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return Log(absl::StrCat("mtime ", path), ErrnoName(errno));
  Log(absl::StrCat("mtime ", path),
      absl::StrCat(st.st_mtim.tv_sec, ".", absl::Dec(st.st_mtim.tv_nsec, absl::kZeroPad9)));
}

void Ctx::Read(const std::string& path) {
  int fd = OpenFd(path, O_RDONLY);
  if (fd < 0) return;
  char buf[256];
  ssize_t n = read(fd, buf, sizeof(buf));
  Log(absl::StrCat("read ", path), n < 0 ? ErrnoName(errno) : std::string(buf, n));
  close(fd);
}

void Ctx::Write(const std::string& path, const std::string& data, int flags) {
  int fd = OpenFd(path, flags);
  if (fd < 0) return;
  Do(absl::StrCat("write ", path), write(fd, data.data(), data.size()));
  close(fd);
}

void Ctx::InChild(const std::string& what, const std::function<int()>& body) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) _exit(body() & 0xff);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return Log(what, "grandchild died");
  int code = WEXITSTATUS(status);
  Log(what, code == 0 ? "ok" : ErrnoName(code));
}

void Ctx::SameInode(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  std::string what = absl::StrCat("same inode ", a, " ", b);
  if (lstat(a.c_str(), &sa) != 0 || lstat(b.c_str(), &sb) != 0) return Log(what, ErrnoName(errno));
  Log(what, sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino ? "same" : "different");
}

void Ctx::Times(const std::string& before, const std::string& after,
                const std::function<void()>& act) {
  struct stat b, a;
  std::string what = absl::StrCat("times ", before, " -> ", after);
  if (lstat(before.c_str(), &b) != 0) return Log(what, ErrnoName(errno));
  absl::SleepFor(kTimeStep);
  act();
  if (lstat(after.c_str(), &a) != 0) return Log(what, ErrnoName(errno));
  bool ctime_kept = a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
  bool mtime_kept = a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
  Log(what, absl::StrCat("ctime ", ctime_kept ? "kept" : "moved", "; mtime ",
                         mtime_kept ? "kept" : "moved"));
}

Obj F(std::string path, mode_t mode, uid_t uid, gid_t gid) {
  return {Obj::kFile, std::move(path), mode, uid, gid, ""};
}
Obj E(std::string path, mode_t mode, uid_t uid, gid_t gid) {
  return {Obj::kEmptyFile, std::move(path), mode, uid, gid, ""};
}
Obj D(std::string path, mode_t mode, uid_t uid, gid_t gid) {
  return {Obj::kDir, std::move(path), mode, uid, gid, ""};
}
Obj L(std::string path, std::string target) {
  return {Obj::kSymlink, std::move(path), 0, 0, 0, std::move(target)};
}
Obj P(std::string path, mode_t mode, uid_t uid, gid_t gid) {
  return {Obj::kFifo, std::move(path), mode, uid, gid, ""};
}
Obj H(std::string path, std::string source) {
  return {Obj::kHardlink, std::move(path), 0, 0, 0, std::move(source)};
}
Obj Any(Obj::Kind kind, std::string path, mode_t mode, uid_t uid, gid_t gid) {
  return {kind, std::move(path), mode, uid, gid, kind == Obj::kSymlink ? "target" : ""};
}

const std::vector<Obj::Kind>& AllKinds() {
  static const auto* kinds = new std::vector<Obj::Kind>{
      Obj::kFile, Obj::kDir, Obj::kFifo, Obj::kBlock, Obj::kChar, Obj::kSocket, Obj::kSymlink};
  return *kinds;
}

const std::vector<Obj::Kind>& NonDirKinds() {
  static const auto* kinds = new std::vector<Obj::Kind>{Obj::kFile, Obj::kFifo,   Obj::kBlock,
                                                        Obj::kChar, Obj::kSocket, Obj::kSymlink};
  return *kinds;
}

std::string KindName(Obj::Kind kind) {
  switch (kind) {
    case Obj::kFile:
    case Obj::kEmptyFile:
    case Obj::kHardlink:
      return "reg";
    case Obj::kDir:
      return "dir";
    case Obj::kSymlink:
      return "lnk";
    case Obj::kFifo:
      return "fifo";
    case Obj::kBlock:
      return "blk";
    case Obj::kChar:
      return "chr";
    case Obj::kSocket:
      return "sock";
  }
  return "?";
}

namespace {

void Make(Ctx& c, const Obj& o) {
  const char* p = o.path.c_str();
  switch (o.kind) {
    case Obj::kFile:
    case Obj::kEmptyFile: {
      int fd = static_cast<int>(
          c.Do(absl::StrCat("setup create ", o.path), open(p, O_CREAT | O_EXCL | O_WRONLY, 0600)));
      if (fd < 0) return;
      if (o.kind == Obj::kFile) c.Do("setup write", write(fd, "data", 4));
      close(fd);
      break;
    }
    case Obj::kDir:
      c.Do(absl::StrCat("setup mkdir ", o.path), mkdir(p, 0700));
      break;
    case Obj::kFifo:
      c.Do(absl::StrCat("setup mkfifo ", o.path), mkfifo(p, 0600));
      break;
    case Obj::kBlock:
      c.Do(absl::StrCat("setup mknod b ", o.path), mknod(p, S_IFBLK | 0600, makedev(1, 2)));
      break;
    case Obj::kChar:
      c.Do(absl::StrCat("setup mknod c ", o.path), mknod(p, S_IFCHR | 0600, makedev(1, 2)));
      break;
    case Obj::kSocket: {
      int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      strncpy(addr.sun_path, p, sizeof(addr.sun_path) - 1);
      c.Do(absl::StrCat("setup bind ", o.path),
           bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
      close(s);
      break;
    }
    case Obj::kSymlink:
      c.Do(absl::StrCat("setup symlink ", o.path), symlink(o.target.c_str(), p));
      if (o.uid != 0 || o.gid != 0) {
        c.Do(absl::StrCat("setup lchown ", o.path), lchown(p, o.uid, o.gid));
      }
      return;
    case Obj::kHardlink:
      c.Do(absl::StrCat("setup link ", o.path), link(o.target.c_str(), p));
      return;
  }
  c.Do(absl::StrCat("setup chown ", o.path), lchown(p, o.uid, o.gid));
  c.Do(absl::StrCat("setup chmod ", o.path), chmod(p, o.mode));
}

// Forks, enters side.root (and `dir`, creating it 0777 first if asked) as root, opens the other
// file system's root, takes on `cred`, runs `body` and returns what it logged.
std::string RunChild(const Side& side, const std::string& other_fs, const std::string& dir,
                     bool create_dir, const std::string& unique, const Cred& cred,
                     const Body& body) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::StrCat("pipe2: ", strerror(errno));
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(30);
    Ctx c;
    c.unique = unique;
    if (chdir(side.root.c_str()) != 0) _exit(120);
    if (create_dir && !dir.empty()) {
      c.Do("setup mkdir case dir", mkdir(dir.c_str(), 0777));
      c.Do("setup chmod case dir", chmod(dir.c_str(), 0777));
    }
    if (!dir.empty() && chdir(dir.c_str()) != 0) _exit(121);
    c.other = open(other_fs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (c.other < 0) _exit(122);
    c.lower = open(absl::StrCat(side.lower, "/", dir).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (BecomeCred(cred) != 0) _exit(123);
    body(c);
    const char* p = c.out.data();
    size_t left = c.out.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0) _exit(124);
      p += n;
      left -= static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  if (pid < 0) return absl::StrCat("fork: ", strerror(errno));
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) {
    absl::StrAppend(&out, "CHILD KILLED by signal ", WTERMSIG(status), "\n");
  } else if (WEXITSTATUS(status) != 0) {
    absl::StrAppend(&out, "CHILD EXIT ", WEXITSTATUS(status), "\n");
  }
  return out;
}

// Root's view of `paths`: one line each, "fields\tctime_ns\tmtime_ns\tdev:ino" or the errno name.
std::vector<std::string> Look(const Side& side, const std::string& other_fs, const std::string& dir,
                              const std::vector<std::string>& paths) {
  std::string out = RunChild(side, other_fs, dir, false, "", kRootCred, [&](Ctx& c) {
    for (const std::string& path : paths) {
      struct stat st;
      if (lstat(path.c_str(), &st) != 0) {
        c.out += ErrnoName(errno) + "\n";
      } else {
        absl::StrAppend(&c.out, Fields(st), "\t",
                        st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec, "\t",
                        st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, "\t", st.st_dev, ":",
                        st.st_ino, "\n");
      }
    }
  });
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  lines.resize(paths.size(), "missing line");
  return lines;
}

// "path: fields; ctime moved|kept; mtime moved|kept" per observed path that names the same inode
// before and after.
std::string Compare(const std::vector<std::string>& paths, const std::vector<std::string>& before,
                    const std::vector<std::string>& after) {
  std::string out;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::vector<std::string> b = absl::StrSplit(before[i], '\t');
    std::vector<std::string> a = absl::StrSplit(after[i], '\t');
    absl::StrAppend(&out, "after ", paths[i], ": ", a[0]);
    if (a.size() == 4 && b.size() == 4) {
      // Times of two different inodes (a rename replaced the name) say nothing about either.
      if (a[3] != b[3]) {
        absl::StrAppend(&out, "; another inode than before");
      } else {
        absl::StrAppend(&out, "; ctime ", a[1] == b[1] ? "kept" : "moved", "; mtime ",
                        a[2] == b[2] ? "kept" : "moved");
      }
    }
    out += "\n";
  }
  return out;
}

// The lines only one record has, in order (a longest-common-subsequence diff): "native: ..." and
// "<other>: ...".
// Whether a record is of a case that ran: RunChild notes a child that could not set up (exit
// 120-124), or was killed, and the record then says nothing about the file system.
bool RanToItsEnd(const std::string& record) {
  for (absl::string_view line : absl::StrSplit(record, '\n')) {
    if (absl::StartsWith(line, "CHILD ") || absl::StartsWith(line, "pipe2: ") ||
        absl::StartsWith(line, "fork: ")) {
      return false;
    }
  }
  return true;
}

std::string LineDiff(const std::string& native, const std::string& other,
                     const std::string& other_name) {
  std::vector<std::string> a = absl::StrSplit(native, '\n', absl::SkipEmpty());
  std::vector<std::string> b = absl::StrSplit(other, '\n', absl::SkipEmpty());
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::string out;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ++i;
      ++j;
    } else if (j == b.size() || (i < a.size() && lcs[i + 1][j] >= lcs[i][j + 1])) {
      absl::StrAppend(&out, "    native: ", a[i++], "\n");
    } else {
      absl::StrAppend(&out, "    ", other_name, ":  ", b[j++], "\n");
    }
  }
  return out;
}

}  // namespace

void PosixCompareTest::SetUp() {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  verbose_ = getenv(kVerboseEnv) != nullptr;
  self_mode_ = getenv(kSelfModeEnv) != nullptr && std::string(getenv(kSelfModeEnv)) == "1";
  SCOPEDFS_ASSERT_OK(storage_.Prepare());
  // The native side and the "other file system" are tmpfs mounts with the lower tree's options.
  for (const char* name : {"native", "other", "mirror"}) {
    std::string dir = absl::StrCat(storage_.work_dir(), "/", name);
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << dir << ": " << strerror(errno);
    ASSERT_EQ(mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=0755"), 0)
        << dir << ": " << strerror(errno);
    extra_mounts_.push_back(dir);
  }
  other_fs_ = storage_.work_dir() + "/other";
  ASSERT_EQ(chmod(other_fs_.c_str(), 01777), 0);
  native_ = {"native", storage_.work_dir() + "/native", storage_.work_dir() + "/native"};
  if (self_mode_) {
    std::cout << "posix_compare: " << kSelfModeEnv
              << "=1: comparing native with native (no daemon)\n";
    mount_ = {"native2", storage_.work_dir() + "/mirror", storage_.work_dir() + "/mirror"};
    return;
  }
  DaemonOptions options;
  options.policy = "policy/configs/permissive.textproto";
  SCOPEDFS_ASSERT_OK(storage_.StartDaemon(options));
  mount_ = {"mount", storage_.mountpoint(), storage_.lower()};
}

void PosixCompareTest::TearDown() {
  if (storage_.daemon_started()) {
    DaemonExit e = storage_.StopDaemon();
    EXPECT_TRUE(e.clean()) << "scopedfsd did not exit cleanly on SIGTERM: " << e.ToString();
  }
  if (HasFailure() && !self_mode_) {
    std::string log = storage_.DaemonLog();
    if (log.size() > 8000) log = "..." + log.substr(log.size() - 8000);
    std::cerr << "--- scopedfsd log (tail) ---\n" << log << "---\n";
  }
  for (const std::string& dir : extra_mounts_) umount2(dir.c_str(), MNT_DETACH);
  extra_mounts_.clear();
  storage_.Teardown();
}

std::string PosixCompareTest::Record(const Side& side, const std::string& dir,
                                     const std::string& unique, const Case& k) {
  std::string setup = RunChild(side, other_fs_, dir, true, unique, kRootCred, [&](Ctx& c) {
    for (const Obj& o : k.setup) Make(c, o);
  });
  std::vector<std::string> before = Look(side, other_fs_, dir, k.observe);
  absl::SleepFor(kTimeStep);
  std::string act = RunChild(side, other_fs_, dir, false, unique, k.who, k.act);
  std::vector<std::string> after = Look(side, other_fs_, dir, k.observe);
  return absl::StrCat(setup, "-- as ", k.who.name, "\n", act, Compare(k.observe, before, after));
}

void PosixCompareTest::RunGroup(const std::string& group, const std::vector<Case>& cases) {
  int differing = 0;
  int allowed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    std::string dir = k.at_root ? "" : absl::StrCat(group, "-", i);
    std::string unique = absl::StrCat(group, "-", i);
    std::string native = Record(native_, dir, "n" + unique, k);
    std::string mount = Record(mount_, dir, "m" + unique, k);
    std::string key = absl::StrCat(group, "/", k.name);
    if (verbose_) std::cout << "CASE " << key << "\n" << native;
    // A case that did not run is no evidence, even where both sides failed alike.
    if (!RanToItsEnd(native)) ADD_FAILURE() << "BROKEN " << key << ": native\n" << native;
    if (!RanToItsEnd(mount))
      ADD_FAILURE() << "BROKEN " << key << ": " << mount_.name << "\n" << mount;
    if (native == mount) continue;
    std::string diff = LineDiff(native, mount, mount_.name);
    auto it = AllowedDifferences().find(key);
    if (!self_mode_ && it != AllowedDifferences().end()) {
      if (diff == it->second.diff) {
        ++allowed;
        std::cout << "ALLOWED " << key << " (" << it->second.reason << ")\n" << diff;
        continue;
      }
      ++differing;
      ADD_FAILURE() << "DIFF " << key << " beyond its allowed difference\n"
                    << diff << "  allowed only:\n"
                    << it->second.diff;
      continue;
    }
    ++differing;
    ADD_FAILURE() << "DIFF " << key << "\n" << diff << "  full native record:\n" << native;
  }
  std::cout << "posix_compare: group " << group << ": " << cases.size() << " checks, " << differing
            << " differ, " << allowed << " allowed differences\n";
}

std::string AclValue(const std::vector<std::tuple<uint16_t, uint16_t, uint32_t>>& entries) {
  std::string v(4, '\0');
  uint32_t version = 2;
  memcpy(v.data(), &version, 4);
  for (auto [tag, perm, id] : entries) {
    char e[8];
    memcpy(e, &tag, 2);
    memcpy(e + 2, &perm, 2);
    memcpy(e + 4, &id, 4);
    v.append(e, 8);
  }
  return v;
}
int BecomeCred(const Cred& who) {
  if (setgroups(who.groups.size(), who.groups.data()) != 0) return errno;
  if (who.effective_only) {
    if (setegid(who.gid) != 0 || seteuid(who.uid) != 0) return errno;
  } else if (setresgid(who.gid, who.gid, who.gid) != 0 ||
             setresuid(who.uid, who.uid, who.uid) != 0) {
    return errno;
  }
  umask(who.umask);
  return 0;
}

int Become(uid_t uid, mode_t mask) {
  if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 ||
      setresuid(uid, uid, uid) != 0) {
    return errno;
  }
  umask(mask);
  return 0;
}

}  // namespace scopedfs::tests::posix_compare
