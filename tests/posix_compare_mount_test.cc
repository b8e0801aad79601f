// POSIX conformance of the permissive mount (issue 11): every case runs the same syscalls, as the
// same credentials (uid, gid, supplementary groups, umask), once in a bare tmpfs and once through
// scopedfsd under policy/configs/permissive.textproto, and the two records must be equal.
//
// A record holds each call's result (ok or the errno name), then, as root seen through the same
// side, the observed paths' type, permission bits, owner, group, link count (and size or rdev),
// and whether their ctime and mtime moved during the act. Times are compared as "moved or not":
// the act starts 20 ms after the "before" look, so any update is visible at tmpfs granularity.
//
// SCOPEDFS_POSIX_COMPARE_SELF=1 replaces the mount with a second bare tmpfs: native against native
// must show no difference, which proves the records are deterministic and the comparison sound.
// SCOPEDFS_POSIX_COMPARE_VERBOSE=1 prints every case's native record.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
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

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr gid_t kShared = 2000;   // a group some callers are in
constexpr gid_t kForeign = 3000;  // a group no unprivileged caller is in
constexpr char kSelfModeEnv[] = "SCOPEDFS_POSIX_COMPARE_SELF";
constexpr char kVerboseEnv[] = "SCOPEDFS_POSIX_COMPARE_VERBOSE";  // print every native record
constexpr absl::Duration kTimeStep = absl::Milliseconds(20);

// Differences the README's table allows, "Group/case" -> reason (the same reasons as the README's
// table of remaining differences); every other difference fails.
const std::map<std::string, std::string>& AllowedDifferences() {
  constexpr char kTmpfile[] =
      "O_TMPFILE: libfuse 3.14 has no TMPFILE op, so the kernel answers EOPNOTSUPP (programs fall "
      "back to a named temporary file)";
  constexpr char kLocksBelow[] =
      "locks taken through the mount are the kernel's own on the mount's inode: they bind every "
      "process using the mount, not one reaching the lower file without it";
  static const auto* allowed = new std::map<std::string, std::string>{
      {"SpecialFiles/data through a fifo",
       "a FIFO's data passes through the kernel's pipe on the mount's inode, never the lower "
       "FIFO, so the lower FIFO's times (what stat reports) do not move"},
      {"Tmpfile/O_TMPFILE by 1234, written and linked", kTmpfile},
      {"Tmpfile/O_TMPFILE|O_EXCL cannot be linked", kTmpfile},
      {"Tmpfile/O_TMPFILE linked with AT_EMPTY_PATH by root", kTmpfile},
      {"Tmpfile/O_TMPFILE linked with AT_EMPTY_PATH by 1234", kTmpfile},
      {"Tmpfile/O_TMPFILE in a set-gid dir, umask 077", kTmpfile},
      {"Locks/fcntl lock here, a second process locks the file below", kLocksBelow},
      {"Locks/fcntl lock below, a second process locks here", kLocksBelow},
      {"Locks/flock here, a second process flocks the file below", kLocksBelow},
      {"Locks/flock below, a second process flocks here", kLocksBelow},
  };
  return *allowed;
}

struct Cred {
  std::string name;
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
  mode_t umask = 022;
};

const Cred kRootCred{"root", 0, 0, {}};
const Cred kNobody{"65534", 65534, 65534, {}};
const Cred kNobodyG{"65534+g2000", 65534, 65534, {kShared}};
const Cred kUser{"1234", 1234, 1234, {}};
const Cred kUserG{"1234+g2000", 1234, 1234, {kShared}};
const Cred kUser077{"1234 umask 077", 1234, 1234, {}, 077};
const Cred kNobody000{"65534 umask 000", 65534, 65534, {}, 0};

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
class Ctx {
 public:
  std::string out;
  int other = -1;      // a directory fd on another file system (for EXDEV)
  int lower = -1;      // the case directory reached without the mount (natively: itself)
  std::string unique;  // a name unique to this side and case, for use under `other`

  void Log(const std::string& what, const std::string& result) {
    absl::StrAppend(&out, what, ": ", result, "\n");
  }
  // Logs "ok" or the errno name of a call that returns -1 on failure; returns rc.
  long Do(const std::string& what, long rc) {
    int err = errno;
    Log(what, rc < 0 ? ErrnoName(err) : "ok");
    errno = err;
    return rc;
  }
  // open(2) and keep the fd (-1 on failure).
  int OpenFd(const std::string& path, int flags, mode_t mode = 0666) {
    return static_cast<int>(Do(absl::StrCat("open ", path, " ", FlagNames(flags)),
                               open(path.c_str(), flags | O_CLOEXEC, mode)));
  }
  void Open(const std::string& path, int flags, mode_t mode = 0666) {
    int fd = OpenFd(path, flags, mode);
    if (fd >= 0) close(fd);
  }
  void Stat(const std::string& path) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      Log(absl::StrCat("lstat ", path), ErrnoName(errno));
    } else {
      Log(absl::StrCat("lstat ", path), Fields(st));
    }
  }
  void Fstat(int fd, const std::string& label) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
      Log(absl::StrCat("fstat ", label), ErrnoName(errno));
    } else {
      Log(absl::StrCat("fstat ", label), Fields(st));
    }
  }
  void MtimeOf(const std::string& path) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) return Log(absl::StrCat("mtime ", path), ErrnoName(errno));
    Log(absl::StrCat("mtime ", path),
        absl::StrCat(st.st_mtim.tv_sec, ".", absl::Dec(st.st_mtim.tv_nsec, absl::kZeroPad9)));
  }
  void Read(const std::string& path) {
    int fd = OpenFd(path, O_RDONLY);
    if (fd < 0) return;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof(buf));
    Log(absl::StrCat("read ", path), n < 0 ? ErrnoName(errno) : std::string(buf, n));
    close(fd);
  }
  void Write(const std::string& path, const std::string& data, int flags = O_WRONLY) {
    int fd = OpenFd(path, flags);
    if (fd < 0) return;
    Do(absl::StrCat("write ", path), write(fd, data.data(), data.size()));
    close(fd);
  }
  // Runs `body` in a forked grandchild with the same credentials; logs its exit code's meaning:
  // body returns 0 or an errno.
  void InChild(const std::string& what, const std::function<int()>& body) {
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) _exit(body() & 0xff);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) return Log(what, "grandchild died");
    int code = WEXITSTATUS(status);
    Log(what, code == 0 ? "ok" : ErrnoName(code));
  }
};

// A lower-tree object a case starts from, made as root (chown before chmod, so set-id bits stay).
struct Obj {
  enum Kind { kFile, kEmptyFile, kDir, kSymlink, kFifo, kHardlink } kind;
  std::string path;
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string target;  // symlink target, or hard link source
};
Obj F(std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0) {
  return {Obj::kFile, std::move(path), mode, uid, gid, ""};
}
Obj E(std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0) {
  return {Obj::kEmptyFile, std::move(path), mode, uid, gid, ""};
}
Obj D(std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0) {
  return {Obj::kDir, std::move(path), mode, uid, gid, ""};
}
Obj L(std::string path, std::string target) {
  return {Obj::kSymlink, std::move(path), 0, 0, 0, std::move(target)};
}
Obj P(std::string path, mode_t mode, uid_t uid = 0, gid_t gid = 0) {
  return {Obj::kFifo, std::move(path), mode, uid, gid, ""};
}
Obj H(std::string path, std::string source) {
  return {Obj::kHardlink, std::move(path), 0, 0, 0, std::move(source)};
}

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
    case Obj::kSymlink:
      c.Do(absl::StrCat("setup symlink ", o.path), symlink(o.target.c_str(), p));
      return;
    case Obj::kHardlink:
      c.Do(absl::StrCat("setup link ", o.path), link(o.target.c_str(), p));
      return;
  }
  c.Do(absl::StrCat("setup chown ", o.path), lchown(p, o.uid, o.gid));
  c.Do(absl::StrCat("setup chmod ", o.path), chmod(p, o.mode));
}

using Body = std::function<void(Ctx&)>;

struct Case {
  std::string name;
  std::vector<Obj> setup;
  Cred who;
  Body act;
  std::vector<std::string> observe = {};  // paths root looks at before and after the act
};

// One tree the cases run in: a bare tmpfs, or the scopedfsd mount.
struct Side {
  std::string name;  // "native" or "mount"
  std::string root;
  std::string lower;  // the same tree reached without the mount (for the bare tmpfs: root)
};

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
    if (create_dir) {
      c.Do("setup mkdir case dir", mkdir(dir.c_str(), 0777));
      c.Do("setup chmod case dir", chmod(dir.c_str(), 0777));
    }
    if (!dir.empty() && chdir(dir.c_str()) != 0) _exit(121);
    c.other = open(other_fs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (c.other < 0) _exit(122);
    c.lower = open(absl::StrCat(side.lower, "/", dir).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (setgroups(cred.groups.size(), cred.groups.data()) != 0 ||
        setresgid(cred.gid, cred.gid, cred.gid) != 0 ||
        setresuid(cred.uid, cred.uid, cred.uid) != 0) {
      _exit(123);
    }
    umask(cred.umask);
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

class PosixCompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
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

  void TearDown() override {
    if (storage_.daemon_running()) {
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

  std::string Record(const Side& side, const std::string& dir, const std::string& unique,
                     const Case& k) {
    std::string setup = RunChild(side, other_fs_, dir, true, unique, kRootCred, [&](Ctx& c) {
      for (const Obj& o : k.setup) Make(c, o);
    });
    std::vector<std::string> before = Look(side, other_fs_, dir, k.observe);
    absl::SleepFor(kTimeStep);
    std::string act = RunChild(side, other_fs_, dir, false, unique, k.who, k.act);
    std::vector<std::string> after = Look(side, other_fs_, dir, k.observe);
    return absl::StrCat(setup, "-- as ", k.who.name, "\n", act, Compare(k.observe, before, after));
  }

  // Runs every case on both sides; one failure per unallowed difference, and a summary line.
  void RunGroup(const std::string& group, const std::vector<Case>& cases) {
    int differing = 0;
    int allowed = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& k = cases[i];
      std::string dir = absl::StrCat(group, "-", i);
      std::string native = Record(native_, dir, absl::StrCat("n", dir), k);
      std::string mount = Record(mount_, dir, absl::StrCat("m", dir), k);
      std::string key = absl::StrCat(group, "/", k.name);
      if (verbose_) std::cout << "CASE " << key << "\n" << native;
      if (native == mount) continue;
      std::string diff = LineDiff(native, mount, mount_.name);
      auto it = AllowedDifferences().find(key);
      if (it != AllowedDifferences().end()) {
        ++allowed;
        std::cout << "ALLOWED " << key << " (" << it->second << ")\n" << diff;
        continue;
      }
      ++differing;
      ADD_FAILURE() << "DIFF " << key << "\n" << diff << "  full native record:\n" << native;
    }
    std::cout << "posix_compare: group " << group << ": " << cases.size() << " checks, "
              << differing << " differ, " << allowed << " allowed differences\n";
  }

  ScopedStorage storage_;
  std::vector<std::string> extra_mounts_;
  std::string other_fs_;
  Side native_;
  Side mount_;
  bool self_mode_ = false;
  bool verbose_ = getenv(kVerboseEnv) != nullptr;
};

// --- Ownership on create, set-gid inheritance, umask ------------------------------------------

TEST_F(PosixCompareTest, OwnershipOnCreate) {
  std::vector<Case> cases;
  for (const Cred& who : {kRootCred, kNobody, kUser, kUserG, kUser077, kNobody000}) {
    cases.push_back({who.name + " creates a file 0666",
                     {},
                     who,
                     [](Ctx& c) { c.Open("f", O_CREAT | O_EXCL | O_WRONLY, 0666); },
                     {"f", "."}});
    cases.push_back({who.name + " mkdir 0777",
                     {},
                     who,
                     [](Ctx& c) { c.Do("mkdir d", mkdir("d", 0777)); },
                     {"d", "."}});
    cases.push_back({who.name + " symlink",
                     {},
                     who,
                     [](Ctx& c) { c.Do("symlink s", symlink("target", "s")); },
                     {"s"}});
    cases.push_back({who.name + " mkfifo 0666",
                     {},
                     who,
                     [](Ctx& c) { c.Do("mkfifo p", mkfifo("p", 0666)); },
                     {"p"}});
  }
  // clang-format off
  std::vector<Case> more = {
    {"member creates in set-gid dir", {D("g", 02775, 0, kShared)}, kUserG, [](Ctx& c) {
       c.Open("g/f", O_CREAT | O_WRONLY, 0666); c.Do("mkdir g/d", mkdir("g/d", 0777));
       c.Do("symlink g/s", symlink("f", "g/s")); c.Do("mkfifo g/p", mkfifo("g/p", 0666));
     }, {"g/f", "g/d", "g/s", "g/p"}},
    {"non-member creates in set-gid 02777 dir", {D("g", 02777, 0, kShared)}, kNobody, [](Ctx& c) {
       c.Open("g/f", O_CREAT | O_WRONLY, 0777); c.Do("mkdir g/d", mkdir("g/d", 0777));
     }, {"g/f", "g/d"}},
    {"non-member creates 02777 file in set-gid dir", {D("g", 02777, 0, kShared)}, kNobody000,
     [](Ctx& c) { c.Open("g/f", O_CREAT | O_WRONLY, 02777); c.Do("mkdir g/d", mkdir("g/d", 02777)); },
     {"g/f", "g/d"}},
    {"member creates 02775 file in set-gid dir", {D("g", 02777, 0, kShared)}, kUserG,
     [](Ctx& c) { c.Open("g/f", O_CREAT | O_WRONLY, 02775); }, {"g/f"}},
    {"root creates in set-gid dir", {D("g", 02755, 1234, kShared)}, kRootCred,
     [](Ctx& c) { c.Open("g/f", O_CREAT | O_WRONLY, 0644); c.Do("mkdir g/d", mkdir("g/d", 0755)); },
     {"g/f", "g/d"}},
    {"set-gid inherited two levels down", {D("g", 02777, 0, kShared)}, kUser, [](Ctx& c) {
       c.Do("mkdir g/a", mkdir("g/a", 0777)); c.Do("mkdir g/a/b", mkdir("g/a/b", 0777));
       c.Open("g/a/b/f", O_CREAT | O_WRONLY, 0666);
     }, {"g/a", "g/a/b", "g/a/b/f"}},
    {"group-owned dir without set-gid: own gid", {D("g", 0775, 0, kShared)}, kUserG,
     [](Ctx& c) { c.Open("g/f", O_CREAT | O_WRONLY, 0666); }, {"g/f"}},
    {"hard link into set-gid dir keeps the gid", {F("f", 0644, 1234, 1234), D("g", 02777, 0, kShared)},
     kUser, [](Ctx& c) { c.Do("link f g/f", link("f", "g/f")); }, {"g/f"}},
    {"rename into set-gid dir keeps the gid", {F("f", 0644, 1234, 1234), D("g", 02777, 0, kShared)},
     kUser, [](Ctx& c) { c.Do("rename f g/f", rename("f", "g/f")); }, {"g/f"}},
    {"O_CREAT of an existing file keeps owner and mode", {F("f", 0600, 1234, kShared)}, kUser,
     [](Ctx& c) { c.Open("f", O_CREAT | O_WRONLY, 0777); }, {"f"}},
    {"umask 027 on file and dir",
     {}, Cred{"1234 umask 027", 1234, 1234, {}, 027}, [](Ctx& c) {
       c.Open("f", O_CREAT | O_WRONLY, 0666); c.Do("mkdir d", mkdir("d", 0777));
       c.Do("mknod p", mknod("p", S_IFIFO | 0666, 0));
     }, {"f", "d", "p"}},
    {"umask does not apply to chmod", {F("f", 0600, 1234, 1234)}, kUser077,
     [](Ctx& c) { c.Do("chmod f 0777", chmod("f", 0777)); }, {"f"}},
  };
  // clang-format on
  cases.insert(cases.end(), more.begin(), more.end());
  RunGroup("Ownership", cases);
}

// An ACL xattr value (version 2, then {tag, perm, id} entries), as the kernel stores it.
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
constexpr uint16_t kAclUserObj = 0x01, kAclUser = 0x02, kAclGroupObj = 0x04, kAclMask = 0x10,
                   kAclOther = 0x20;
constexpr uint32_t kAclNoId = 0xffffffff;

// Drops a grandchild to `uid` (gid the same, no groups) with `mask`; 0 or the errno.
int Become(uid_t uid, mode_t mask) {
  if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 ||
      setresuid(uid, uid, uid) != 0) {
    return errno;
  }
  umask(mask);
  return 0;
}

TEST_F(PosixCompareTest, DefaultAcl) {
  std::string acl =
      AclValue({{kAclUserObj, 7, kAclNoId}, {kAclGroupObj, 7, kAclNoId}, {kAclOther, 5, kAclNoId}});
  auto set_default = [acl](const char* path) {
    return setxattr(path, "system.posix_acl_default", acl.data(), acl.size(), 0);
  };
  // clang-format off
  std::vector<Case> cases = {
    {"root sets a default ACL, 1234 with umask 077 creates under it", {D("a", 0777)}, kRootCred,
     [set_default](Ctx& c) {
       c.Do("setxattr default ACL on a", set_default("a"));
       c.InChild("1234 umask 077: create a/f 0666", [] {
         if (int err = Become(1234, 077)) return err;
         return open("a/f", O_CREAT | O_WRONLY, 0666) >= 0 ? 0 : errno;
       });
       c.InChild("1234 umask 077: mkdir a/d 0777", [] {
         if (int err = Become(1234, 077)) return err;
         return mkdir("a/d", 0777) == 0 ? 0 : errno;
       });
     }, {"a", "a/f", "a/d"}},
    {"owner sets a default ACL on its dir and creates with umask 077", {D("a", 0777, 1234, 1234)},
     kUser077, [set_default](Ctx& c) {
       c.Do("setxattr default ACL on a", set_default("a"));
       c.Open("a/f", O_CREAT | O_WRONLY, 0666);
       c.Do("mkdir a/d", mkdir("a/d", 0777));
     }, {"a", "a/f", "a/d"}},
    {"non-owner sets a default ACL", {D("a", 0777)}, kNobody,
     [set_default](Ctx& c) { c.Do("setxattr default ACL on a", set_default("a")); }, {"a"}},
  };
  // clang-format on
  RunGroup("DefaultAcl", cases);
}

// --- Permission denials: EACCES vs EPERM ------------------------------------------------------

TEST_F(PosixCompareTest, PermissionDenials) {
  std::string named_user_acl = AclValue({{kAclUserObj, 6, kAclNoId},
                                         {kAclUser, 4, 65534},
                                         {kAclGroupObj, 0, kAclNoId},
                                         {kAclMask, 4, kAclNoId},
                                         {kAclOther, 0, kAclNoId}});
  auto rd = [](Ctx& c) { c.Open("f", O_RDONLY); };
  auto wr = [](Ctx& c) { c.Open("f", O_WRONLY); };
  auto rw = [](Ctx& c) { c.Open("f", O_RDWR); };
  auto access_all = [](Ctx& c) {
    c.Do("access f R_OK", access("f", R_OK));
    c.Do("access f W_OK", access("f", W_OK));
    c.Do("access f X_OK", access("f", X_OK));
    c.Do("access f F_OK", access("f", F_OK));
  };
  // clang-format off
  std::vector<Case> cases = {
    {"0600 root file, 65534 reads", {F("f", 0600)}, kNobody, rd},
    {"0600 root file, 65534 writes", {F("f", 0600)}, kNobody, wr},
    {"0600 own file, owner reads and writes", {F("f", 0600, 1234, 1234)}, kUser, rw},
    {"0640 1234:2000, member reads", {F("f", 0640, 1234, kShared)}, kNobodyG, rd},
    {"0640 1234:2000, member writes", {F("f", 0640, 1234, kShared)}, kNobodyG, wr},
    {"0640 1234:2000, other reads", {F("f", 0640, 1234, kShared)}, kNobody, rd},
    {"0604 1234:2000, member reads (group class wins)", {F("f", 0604, 1234, kShared)}, kNobodyG, rd},
    {"0604 1234:2000, other reads", {F("f", 0604, 1234, kShared)}, kNobody, rd},
    {"0060 1234:2000, owner in group reads (owner class wins)", {F("f", 0060, 1234, kShared)}, kUserG, rd},
    {"0000 file, root reads and writes", {F("f", 0000, 1234, 1234)}, kRootCred, rw},
    {"0644 file, root access()", {F("f", 0644)}, kRootCred, access_all},
    {"0100 file, root access()", {F("f", 0100, 1234, 1234)}, kRootCred, access_all},
    {"0754 1234:2000, member access()", {F("f", 0754, 1234, kShared)}, kNobodyG, access_all},
    {"0754 1234:2000, other access()", {F("f", 0754, 1234, kShared)}, kNobody, access_all},
    {"0644 1234 file, 65534 O_TRUNC", {F("f", 0644, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Open("f", O_WRONLY | O_TRUNC); }},
    {"0644 1234 file, 65534 truncate()", {F("f", 0644, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("truncate f", truncate("f", 1)); }, {"f"}},
    {"0444 own file, owner O_WRONLY|O_CREAT", {F("f", 0444, 1234, 1234)}, kUser,
     [](Ctx& c) { c.Open("f", O_WRONLY | O_CREAT); }},
    {"0700 root dir, 65534 stats and opens inside", {D("d", 0700), F("d/f", 0644)}, kNobody,
     [](Ctx& c) { c.Stat("d/f"); c.Open("d/f", O_RDONLY); c.Open("d", O_RDONLY | O_DIRECTORY); }},
    {"0711 root dir, 65534 lists and stats inside", {D("d", 0711), F("d/f", 0644)}, kNobody,
     [](Ctx& c) { c.Open("d", O_RDONLY | O_DIRECTORY); c.Stat("d/f"); c.Read("d/f"); }},
    {"0755 root dir, 65534 changes its entries", {D("d", 0755), F("d/f", 0644, 65534, 65534)}, kNobody,
     [](Ctx& c) {
       c.Open("d/x", O_CREAT | O_WRONLY); c.Do("mkdir d/y", mkdir("d/y", 0777));
       c.Do("symlink d/s", symlink("f", "d/s")); c.Do("mkfifo d/p", mkfifo("d/p", 0666));
       c.Do("unlink own d/f", unlink("d/f")); c.Do("rename d/f d/g", rename("d/f", "d/g"));
       c.Do("rename d/f ./g", rename("d/f", "g")); c.Do("link d/f ./h", link("d/f", "h"));
     }, {"d/f", "h", "g"}},
    {"0770 root:2000 dir, member creates", {D("d", 0770, 0, kShared)}, kNobodyG,
     [](Ctx& c) { c.Open("d/x", O_CREAT | O_WRONLY); }, {"d/x"}},
    {"0770 root:2000 dir, other creates", {D("d", 0770, 0, kShared)}, kNobody,
     [](Ctx& c) { c.Open("d/x", O_CREAT | O_WRONLY); }},
    {"0733 root dir, 65534 creates, lists", {D("d", 0733)}, kNobody,
     [](Ctx& c) { c.Open("d/x", O_CREAT | O_WRONLY); c.Open("d", O_RDONLY | O_DIRECTORY); }, {"d/x"}},
    {"0766 root dir (no search), 65534 creates and unlinks", {D("d", 0766), F("d/f", 0666)}, kNobody,
     [](Ctx& c) { c.Open("d/x", O_CREAT | O_WRONLY); c.Do("unlink d/f", unlink("d/f")); }},
    {"EPERM: chmod of another's file", {F("f", 0666, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("chmod f", chmod("f", 0777)); }, {"f"}},
    {"EPERM: chown of another's file", {F("f", 0666, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("chown f 65534", chown("f", 65534, 65534)); }, {"f"}},
    {"EPERM: explicit utimes on another's writable file", {F("f", 0666, 1234, 1234)}, kNobody,
     [](Ctx& c) {
       struct timespec ts[2] = {{1000, 0}, {1000, 0}};
       c.Do("utimensat explicit", utimensat(AT_FDCWD, "f", ts, 0));
     }, {"f"}},
    {"EACCES: utimes(NULL) on another's read-only file", {F("f", 0644, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("utimensat NULL", utimensat(AT_FDCWD, "f", nullptr, 0)); }, {"f"}},
    {"user xattr on another's files", {F("f", 0644, 1234, 1234), F("g", 0666, 1234, 1234)}, kNobody,
     [](Ctx& c) {
       c.Do("setxattr f user.k", setxattr("f", "user.k", "v", 1, 0));
       c.Do("setxattr g user.k", setxattr("g", "user.k", "v", 1, 0));
       char buf[8];
       c.Do("getxattr g user.k", getxattr("g", "user.k", buf, sizeof(buf)));
     }},
    {"rename another's dir (no write on it) to another parent",
     {D("a", 0777), D("b", 0777), D("a/sub", 0755, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("rename a/sub b/sub", rename("a/sub", "b/sub"));
                  c.Do("rename a/sub a/sub2 (same parent)", rename("a/sub", "a/sub2")); },
     {"a/sub", "b/sub", "a/sub2"}},
    {"hard link to another's unreadable file (protected_hardlinks)", {F("f", 0600, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("link f g", link("f", "g")); }, {"f"}},
    {"hard link to another's readable+writable file", {F("f", 0666, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("link f g", link("f", "g")); }, {"f"}},
    {"named-user ACL grants 65534 read", {F("f", 0600)}, kNobody, [named_user_acl](Ctx& c) {
       c.Do("setxattr access ACL on another's file",
            setxattr("f", "system.posix_acl_access", named_user_acl.data(),
                     named_user_acl.size(), 0));
       c.Open("f", O_RDONLY);
     }},
    {"named-user ACL set by root, then 65534 reads and writes", {F("f", 0600)}, kRootCred,
     [named_user_acl](Ctx& c) {
       c.Do("setxattr access ACL", setxattr("f", "system.posix_acl_access", named_user_acl.data(),
                                           named_user_acl.size(), 0));
       c.Stat("f");
       c.InChild("65534 opens O_RDONLY", [] {
         if (int err = Become(65534, 022)) return err;
         int fd = open("f", O_RDONLY);
         if (fd < 0) return errno;
         close(fd);
         return 0;
       });
       c.InChild("65534 opens O_WRONLY", [] {
         if (int err = Become(65534, 022)) return err;
         int fd = open("f", O_WRONLY);
         if (fd < 0) return errno;
         close(fd);
         return 0;
       });
     }, {"f"}},
  };
  // clang-format on
  RunGroup("Permissions", cases);
}

// --- Sticky directories -----------------------------------------------------------------------

TEST_F(PosixCompareTest, StickyDirectories) {
  std::vector<Obj> tree = {D("t", 01777), F("t/f", 0666, 1234, 1234), F("t/g", 0644, 65534, 65534),
                           D("t/sub", 0777, 1234, 1234)};
  std::vector<Obj> owned_by_65534 = {D("t", 01777, 65534, 65534), F("t/f", 0666, 1234, 1234),
                                     D("t/sub", 0777, 1234, 1234)};
  std::vector<std::string> seen = {"t/f", "t/g", "t/h", "t/sub", "x"};
  // clang-format off
  std::vector<Case> cases = {
    {"other unlinks", tree, kNobody, [](Ctx& c) { c.Do("unlink t/f", unlink("t/f")); }, seen},
    {"file owner unlinks", tree, kUser, [](Ctx& c) { c.Do("unlink t/f", unlink("t/f")); }, seen},
    {"root unlinks", tree, kRootCred, [](Ctx& c) { c.Do("unlink t/f", unlink("t/f")); }, seen},
    {"dir owner unlinks", owned_by_65534, kNobody,
     [](Ctx& c) { c.Do("unlink t/f", unlink("t/f")); c.Do("rmdir t/sub", rmdir("t/sub")); }, seen},
    {"other renames within", tree, kNobody,
     [](Ctx& c) { c.Do("rename t/f t/h", rename("t/f", "t/h")); }, seen},
    {"other renames out", tree, kNobody, [](Ctx& c) { c.Do("rename t/f x", rename("t/f", "x")); }, seen},
    {"other renames own file onto another's", tree, kNobody,
     [](Ctx& c) { c.Do("rename t/g t/f", rename("t/g", "t/f")); }, seen},
    {"other exchanges own file with another's", tree, kNobody,
     [](Ctx& c) { c.Do("exchange t/g t/f", renameat2(AT_FDCWD, "t/g", AT_FDCWD, "t/f", RENAME_EXCHANGE)); },
     seen},
    {"file owner renames within", tree, kUser,
     [](Ctx& c) { c.Do("rename t/f t/h", rename("t/f", "t/h")); }, seen},
    {"owner renames own file out", tree, kNobody,
     [](Ctx& c) { c.Do("rename t/g x", rename("t/g", "x")); }, seen},
    {"other rmdirs another's dir", tree, kNobody, [](Ctx& c) { c.Do("rmdir t/sub", rmdir("t/sub")); }, seen},
    {"dir's owner rmdirs own dir", tree, kUser, [](Ctx& c) { c.Do("rmdir t/sub", rmdir("t/sub")); }, seen},
    {"other creates and removes own", tree, kNobody, [](Ctx& c) {
       c.Open("t/h", O_CREAT | O_WRONLY); c.Do("unlink t/h", unlink("t/h"));
     }, seen},
    {"O_CREAT of another's file in a sticky dir", tree, kNobody,
     [](Ctx& c) { c.Open("t/f", O_CREAT | O_WRONLY); }, seen},
    {"non-sticky 0777 dir: other unlinks", {D("t", 0777), F("t/f", 0644, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("unlink t/f", unlink("t/f")); }, {"t/f"}},
    {"sticky set by owner on own dir", {D("t", 0755, 1234, 1234)}, kUser,
     [](Ctx& c) { c.Do("chmod t 01777", chmod("t", 01777)); }, {"t"}},
  };
  // clang-format on
  RunGroup("Sticky", cases);
}

// --- chown / chmod rules ----------------------------------------------------------------------

TEST_F(PosixCompareTest, ChownChmodRules) {
  auto chown_f = [](uid_t u, gid_t g) {
    return [u, g](Ctx& c) {
      c.Do(absl::StrCat("chown f ", static_cast<int>(u), ":", static_cast<int>(g)),
           chown("f", u, g));
    };
  };
  auto chmod_f = [](mode_t m) {
    return [m](Ctx& c) { c.Do(absl::StrFormat("chmod f %04o", m), chmod("f", m)); };
  };
  auto write_f = [](Ctx& c) { c.Write("f", "x", O_WRONLY | O_APPEND); };
  std::vector<std::string> f = {"f"};
  // clang-format off
  std::vector<Case> cases = {
    {"root chowns", {F("f", 0644)}, kRootCred, chown_f(1234, kShared), f},
    {"root chowns a dir", {D("f", 0755)}, kRootCred, chown_f(1234, kShared), f},
    {"owner gives file away", {F("f", 0644, 1234, 1234)}, kUser, chown_f(65534, -1), f},
    {"owner chgrps to a group it is in", {F("f", 0644, 1234, 1234)}, kUserG, chown_f(-1, kShared), f},
    {"owner chgrps to a group it is not in", {F("f", 0644, 1234, 1234)}, kUser, chown_f(-1, kForeign), f},
    {"owner chowns to itself", {F("f", 0644, 1234, kShared)}, kUser, chown_f(1234, -1), f},
    {"owner chowns -1:-1", {F("f", 0644, 1234, 1234)}, kUser, chown_f(-1, -1), f},
    {"non-owner chgrps to own group", {F("f", 0666, 1234, 1234)}, kNobody, chown_f(-1, 65534), f},
    {"non-owner chmods", {F("f", 0666, 1234, 1234)}, kNobody, chmod_f(0777), f},
    {"owner chmods", {F("f", 0644, 1234, 1234)}, kUser, chmod_f(0700), f},
    {"owner not in group sets set-gid: cleared", {F("f", 0644, 1234, kShared)}, kUser, chmod_f(02755), f},
    {"owner in group sets set-gid: kept", {F("f", 0644, 1234, kShared)}, kUserG, chmod_f(02755), f},
    {"owner sets set-uid and set-gid on own group", {F("f", 0644, 1234, 1234)}, kUser, chmod_f(06755), f},
    {"owner not in group sets set-gid on dir", {D("f", 0755, 1234, kShared)}, kUser, chmod_f(02755), f},
    {"owner sets sticky on a file", {F("f", 0644, 1234, 1234)}, kUser, chmod_f(01644), f},
    {"root sets set-gid on foreign group", {F("f", 0644, 1234, kForeign)}, kRootCred, chmod_f(02755), f},
    {"owner chgrps a 06755 file: set-id cleared", {F("f", 06755, 1234, 1234)}, kUserG, chown_f(-1, kShared), f},
    {"owner chgrps a 02644 file (no group x)", {F("f", 02644, 1234, 1234)}, kUserG, chown_f(-1, kShared), f},
    {"root chowns a 06755 file", {F("f", 06755, 1234, 1234)}, kRootCred, chown_f(65534, 65534), f},
    {"root chowns a 06755 dir", {D("f", 06755, 1234, 1234)}, kRootCred, chown_f(65534, 65534), f},
    {"root chowns -1:-1 a 06755 file", {F("f", 06755, 1234, 1234)}, kRootCred, chown_f(-1, -1), f},
    {"non-root writes a 06777 file: set-id cleared", {F("f", 06777, 1234, 1234)}, kNobody, write_f, f},
    {"owner writes own 04755 file", {F("f", 04755, 1234, 1234)}, kUser, write_f, f},
    {"non-root writes a 02666 file (no group x)", {F("f", 02666, 1234, 1234)}, kNobody, write_f, f},
    {"root writes a 06777 file: kept", {F("f", 06777, 1234, 1234)}, kRootCred, write_f, f},
    {"non-root truncates a 06777 file", {F("f", 06777, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Do("truncate f 1", truncate("f", 1)); }, f},
    {"non-root O_TRUNC opens a 06777 file", {F("f", 06777, 1234, 1234)}, kNobody,
     [](Ctx& c) { c.Open("f", O_WRONLY | O_TRUNC); }, f},
    {"owner fchmods through an O_RDONLY fd", {F("f", 0644, 1234, 1234)}, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDONLY);
       c.Do("fchmod 0600", fchmod(fd, 0600)); close(fd);
     }, f},
    {"non-owner fchowns through an O_RDWR fd", {F("f", 0666, 1234, 1234)}, kNobody, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       c.Do("fchown 65534", fchown(fd, 65534, -1)); close(fd);
     }, f},
    {"root lchowns a symlink", {F("f", 0644), L("s", "f")}, kRootCred,
     [](Ctx& c) { c.Do("lchown s", lchown("s", 1234, kShared)); }, {"s", "f"}},
    {"root chowns through a symlink", {F("f", 0644), L("s", "f")}, kRootCred,
     [](Ctx& c) { c.Do("chown s", chown("s", 1234, kShared)); }, {"s", "f"}},
    {"chmod of a symlink with AT_SYMLINK_NOFOLLOW", {F("f", 0644), L("s", "f")}, kRootCred,
     [](Ctx& c) { c.Do("fchmodat s NOFOLLOW", fchmodat(AT_FDCWD, "s", 0600, AT_SYMLINK_NOFOLLOW)); },
     {"s", "f"}},
    {"root chmods through a symlink", {F("f", 0644), L("s", "f")}, kRootCred,
     [](Ctx& c) { c.Do("chmod s 0600", chmod("s", 0600)); }, {"s", "f"}},
  };
  // clang-format on
  RunGroup("ChownChmod", cases);
}

// --- Link counts ------------------------------------------------------------------------------

TEST_F(PosixCompareTest, LinkCounts) {
  // clang-format off
  std::vector<Case> cases = {
    {"mkdir", {}, kUser, [](Ctx& c) { c.Do("mkdir d", mkdir("d", 0777)); c.Do("mkdir d/e", mkdir("d/e", 0777)); },
     {".", "d", "d/e"}},
    {"rmdir", {D("d", 0777), D("d/e", 0777)}, kUser, [](Ctx& c) { c.Do("rmdir d/e", rmdir("d/e")); },
     {".", "d"}},
    {"link and unlink", {F("f", 0644, 1234, 1234)}, kUser, [](Ctx& c) {
       c.Do("link f g", link("f", "g")); c.Do("link f h", link("f", "h")); c.Stat("f");
       c.Do("unlink g", unlink("g"));
     }, {"f", "h", "g"}},
    {"rename dir to another parent", {D("a", 0777), D("b", 0777), D("a/x", 0777)}, kUser,
     [](Ctx& c) { c.Do("rename a/x b/x", rename("a/x", "b/x")); }, {"a", "b", "b/x"}},
    {"rename dir over an empty dir", {D("a", 0777), D("b", 0777), D("a/x", 0777), D("b/y", 0777)}, kUser,
     [](Ctx& c) { c.Do("rename a/x b/y", rename("a/x", "b/y")); }, {"a", "b", "b/y"}},
    {"exchange a dir and a file across parents",
     {D("a", 0777), D("b", 0777), D("a/x", 0777), F("b/y", 0666)}, kUser,
     [](Ctx& c) { c.Do("exchange a/x b/y", renameat2(AT_FDCWD, "a/x", AT_FDCWD, "b/y", RENAME_EXCHANGE)); },
     {"a", "b", "a/x", "b/y"}},
    {"rename over a file held open", {F("f", 0666), F("g", 0666)}, kRootCred, [](Ctx& c) {
       int fd = c.OpenFd("g", O_RDONLY);
       c.Do("rename f g", rename("f", "g")); c.Fstat(fd, "old g"); close(fd);
     }, {"g"}},
    {"unlink a file held open", {F("f", 0666, 1234, 1234)}, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDONLY);
       c.Do("unlink f", unlink("f")); c.Fstat(fd, "f"); close(fd);
     }},
    {"rmdir a dir held open", {D("d", 0777)}, kUser, [](Ctx& c) {
       int fd = c.OpenFd("d", O_RDONLY | O_DIRECTORY);
       c.Do("rmdir d", rmdir("d")); c.Fstat(fd, "d"); close(fd);
     }, {"."}},
    {"link a symlink", {L("s", "nowhere")}, kRootCred, [](Ctx& c) { c.Do("link s t", link("s", "t")); },
     {"s", "t"}},
    {"link a fifo", {P("p", 0666, 1234, 1234)}, kUser, [](Ctx& c) { c.Do("link p q", link("p", "q")); },
     {"p"}},
    {"link a dir", {D("d", 0777)}, kRootCred, [](Ctx& c) { c.Do("link d e", link("d", "e")); }, {"d"}},
    {"rename a hard link onto its sibling", {F("f", 0644), H("g", "f")}, kRootCred,
     [](Ctx& c) { c.Do("rename f g", rename("f", "g")); }, {"f", "g"}},
  };
  // clang-format on
  RunGroup("LinkCounts", cases);
}

// --- Timestamps -------------------------------------------------------------------------------

TEST_F(PosixCompareTest, Timestamps) {
  std::vector<Obj> file = {F("f", 0644, 1234, 1234)};
  std::vector<Obj> shared = {F("f", 0666, 1234, 1234)};
  std::vector<std::string> fd = {"f", "."};
  // clang-format off
  std::vector<Case> cases = {
    {"link", file, kUser, [](Ctx& c) { c.Do("link f g", link("f", "g")); }, fd},
    {"rename within a dir", file, kUser, [](Ctx& c) { c.Do("rename f g", rename("f", "g")); }, {"g", "."}},
    {"rename across dirs", {D("a", 0777), D("b", 0777), F("a/f", 0666)}, kUser,
     [](Ctx& c) { c.Do("rename a/f b/f", rename("a/f", "b/f")); }, {"a", "b", "b/f"}},
    {"rename a dir across dirs", {D("a", 0777), D("b", 0777), D("a/d", 0777)}, kRootCred,
     [](Ctx& c) { c.Do("rename a/d b/d", rename("a/d", "b/d")); }, {"a", "b", "b/d"}},
    {"rename over an existing file", {F("f", 0666), F("g", 0666), H("k", "g")}, kRootCred,
     [](Ctx& c) { c.Do("rename f g", rename("f", "g")); }, {"g", "k", "."}},
    {"chmod", file, kUser, [](Ctx& c) { c.Do("chmod", chmod("f", 0600)); }, fd},
    {"chmod to the same mode", file, kUser, [](Ctx& c) { c.Do("chmod", chmod("f", 0644)); }, fd},
    {"chown by root", file, kRootCred, [](Ctx& c) { c.Do("chown", chown("f", 65534, 65534)); }, fd},
    {"chown to the same owner", file, kRootCred, [](Ctx& c) { c.Do("chown", chown("f", 1234, 1234)); }, fd},
    {"chown -1:-1", file, kUser, [](Ctx& c) { c.Do("chown", chown("f", -1, -1)); }, fd},
    {"failed chmod (EPERM) changes nothing", file, kNobody, [](Ctx& c) { c.Do("chmod", chmod("f", 0600)); }, fd},
    {"truncate shorter", file, kUser, [](Ctx& c) { c.Do("truncate 1", truncate("f", 1)); }, fd},
    {"truncate to the same size", file, kUser, [](Ctx& c) { c.Do("truncate 4", truncate("f", 4)); }, fd},
    {"ftruncate to the same size", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_WRONLY); c.Do("ftruncate 4", ftruncate(fd, 4)); close(fd);
     }, fd},
    {"O_TRUNC open", file, kUser, [](Ctx& c) { c.Open("f", O_WRONLY | O_TRUNC); }, fd},
    {"O_TRUNC open of an empty file", {E("f", 0644, 1234, 1234)}, kUser,
     [](Ctx& c) { c.Open("f", O_WRONLY | O_TRUNC); }, fd},
    {"truncate an empty file to 0", {E("f", 0644, 1234, 1234)}, kUser,
     [](Ctx& c) { c.Do("truncate 0", truncate("f", 0)); }, fd},
    {"write", file, kUser, [](Ctx& c) { c.Write("f", "abc"); }, fd},
    {"write of 0 bytes", file, kUser, [](Ctx& c) { c.Write("f", ""); }, fd},
    {"read", file, kUser, [](Ctx& c) { c.Read("f"); }, fd},
    {"setxattr user.k", file, kUser, [](Ctx& c) { c.Do("setxattr", setxattr("f", "user.k", "v", 1, 0)); }, fd},
    {"create", {}, kUser, [](Ctx& c) { c.Open("f", O_CREAT | O_WRONLY); }, {"."}},
    {"unlink", {F("f", 0644), H("g", "f")}, kRootCred, [](Ctx& c) { c.Do("unlink f", unlink("f")); },
     {".", "g"}},
    {"mkdir", {}, kUser, [](Ctx& c) { c.Do("mkdir d", mkdir("d", 0777)); }, {"."}},
    {"rmdir", {D("d", 0777)}, kUser, [](Ctx& c) { c.Do("rmdir d", rmdir("d")); }, {"."}},
    {"symlink", {}, kUser, [](Ctx& c) { c.Do("symlink s", symlink("x", "s")); }, {"."}},
    {"mkfifo", {}, kUser, [](Ctx& c) { c.Do("mkfifo p", mkfifo("p", 0666)); }, {"."}},
    {"utimes UTIME_NOW by a writer who is not the owner", shared, kNobody, [](Ctx& c) {
       struct timespec ts[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
       c.Do("utimensat NOW", utimensat(AT_FDCWD, "f", ts, 0));
     }, fd},
    {"utimes(NULL) by a writer who is not the owner", shared, kNobody,
     [](Ctx& c) { c.Do("utimensat NULL", utimensat(AT_FDCWD, "f", nullptr, 0)); }, fd},
    {"explicit utimes by a writer who is not the owner", shared, kNobody, [](Ctx& c) {
       struct timespec ts[2] = {{1000, 0}, {1000, 0}};
       c.Do("utimensat 1000", utimensat(AT_FDCWD, "f", ts, 0));
     }, fd},
    {"UTIME_NOW on mtime, explicit atime, by a non-owner writer", shared, kNobody, [](Ctx& c) {
       struct timespec ts[2] = {{1000, 0}, {0, UTIME_NOW}};
       c.Do("utimensat 1000/NOW", utimensat(AT_FDCWD, "f", ts, 0));
     }, fd},
    {"UTIME_OMIT both by a non-owner non-writer", file, kNobody, [](Ctx& c) {
       struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
       c.Do("utimensat OMIT", utimensat(AT_FDCWD, "f", ts, 0));
     }, fd},
    {"explicit utimes by the owner", file, kUser, [](Ctx& c) {
       struct timespec ts[2] = {{1000, 5}, {123456789, 999}};
       c.Do("utimensat explicit", utimensat(AT_FDCWD, "f", ts, 0)); c.MtimeOf("f");
     }, fd},
    {"explicit utimes by root", file, kRootCred, [](Ctx& c) {
       struct timespec ts[2] = {{1000, 0}, {2000, 0}};
       c.Do("utimensat explicit", utimensat(AT_FDCWD, "f", ts, 0)); c.MtimeOf("f");
     }, fd},
    {"futimens(NULL) through a non-owner's O_WRONLY fd", shared, kNobody, [](Ctx& c) {
       int fd = c.OpenFd("f", O_WRONLY); c.Do("futimens NULL", futimens(fd, nullptr)); close(fd);
     }, fd},
    {"utimes on a symlink itself", {L("s", "nowhere")}, kRootCred, [](Ctx& c) {
       struct timespec ts[2] = {{1000, 0}, {3000, 0}};
       c.Do("utimensat NOFOLLOW", utimensat(AT_FDCWD, "s", ts, AT_SYMLINK_NOFOLLOW)); c.MtimeOf("s");
     }, {"s"}},
  };
  // clang-format on
  RunGroup("Timestamps", cases);
}

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

// --- O_TMPFILE and locks ----------------------------------------------------------------------

void LinkTmpfile(Ctx& c, int fd, const char* name) {
  std::string proc = absl::StrCat("/proc/self/fd/", fd);
  c.Do(absl::StrCat("linkat /proc fd ", name),
       linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name, AT_SYMLINK_FOLLOW));
}

TEST_F(PosixCompareTest, Tmpfile) {
  // clang-format off
  std::vector<Case> cases = {
    {"O_TMPFILE by 1234, written and linked", {}, kUser, [](Ctx& c) {
       int fd = c.OpenFd(".", O_TMPFILE | O_RDWR, 0640);
       if (fd < 0) return;
       c.Fstat(fd, "tmpfile");
       c.Do("write", write(fd, "abc", 3));
       LinkTmpfile(c, fd, "t");
       c.Fstat(fd, "linked");
       close(fd);
       c.Read("t");
     }, {"t", "."}},
    {"O_TMPFILE|O_EXCL cannot be linked", {}, kUser, [](Ctx& c) {
       int fd = c.OpenFd(".", O_TMPFILE | O_EXCL | O_RDWR, 0600);
       if (fd < 0) return;
       LinkTmpfile(c, fd, "t");
       close(fd);
     }, {"t"}},
    {"O_TMPFILE linked with AT_EMPTY_PATH by root", {}, kRootCred, [](Ctx& c) {
       int fd = c.OpenFd(".", O_TMPFILE | O_WRONLY, 0600);
       if (fd < 0) return;
       c.Do("linkat AT_EMPTY_PATH", linkat(fd, "", AT_FDCWD, "t", AT_EMPTY_PATH));
       close(fd);
     }, {"t"}},
    {"O_TMPFILE linked with AT_EMPTY_PATH by 1234", {}, kUser, [](Ctx& c) {
       int fd = c.OpenFd(".", O_TMPFILE | O_WRONLY, 0600);
       if (fd < 0) return;
       c.Do("linkat AT_EMPTY_PATH", linkat(fd, "", AT_FDCWD, "t", AT_EMPTY_PATH));
       close(fd);
     }, {"t"}},
    {"O_TMPFILE in a 0755 root dir by 65534", {D("d", 0755)}, kNobody,
     [](Ctx& c) { c.Open("d", O_TMPFILE | O_RDWR, 0600); }},
    {"O_TMPFILE O_RDONLY", {}, kUser, [](Ctx& c) { c.Open(".", O_TMPFILE | O_RDONLY, 0600); }},
    {"O_TMPFILE on a file", {F("f", 0666)}, kUser, [](Ctx& c) { c.Open("f", O_TMPFILE | O_RDWR, 0600); }},
    {"O_TMPFILE in a set-gid dir, umask 077", {D("g", 02777, 0, kShared)}, kUser077, [](Ctx& c) {
       int fd = c.OpenFd("g", O_TMPFILE | O_RDWR, 0666);
       if (fd < 0) return;
       c.Fstat(fd, "tmpfile");
       LinkTmpfile(c, fd, "g/t");
       close(fd);
     }, {"g/t"}},
  };
  // clang-format on
  RunGroup("Tmpfile", cases);
}

// A second process (same credentials) opens `path` and tries a lock; returns 0 or the errno.
int TryFlock(const char* path, int op) {
  int fd = open(path, O_RDWR);
  if (fd < 0) return errno;
  return flock(fd, op | LOCK_NB) == 0 ? 0 : errno;
}
int TryPosix(const char* path, short type, off_t start, off_t len, int cmd = F_SETLK) {
  int fd = open(path, O_RDWR);
  if (fd < 0) return errno;
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  return fcntl(fd, cmd, &fl) == 0 ? 0 : errno;
}

// The same through the lower tree: a lock on the mount and one on the file below are one lock.
int TryPosixAt(int dirfd, short type) {
  int fd = openat(dirfd, "f", O_RDWR);
  if (fd < 0) return errno;
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  return fcntl(fd, F_SETLK, &fl) == 0 ? 0 : errno;
}
int TryFlockAt(int dirfd, int op) {
  int fd = openat(dirfd, "f", O_RDWR);
  if (fd < 0) return errno;
  return flock(fd, op | LOCK_NB) == 0 ? 0 : errno;
}

TEST_F(PosixCompareTest, Locks) {
  std::vector<Obj> file = {F("f", 0666, 1234, 1234)};
  // clang-format off
  std::vector<Case> cases = {
    {"flock exclusive against a second process", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       c.Do("flock EX", flock(fd, LOCK_EX));
       c.InChild("other: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
       c.InChild("other: flock SH|NB", [] { return TryFlock("f", LOCK_SH); });
       c.Do("flock UN", flock(fd, LOCK_UN));
       c.InChild("other after unlock: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
       close(fd);
     }},
    {"flock shared twice", file, kNobody, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDONLY);
       c.Do("flock SH", flock(fd, LOCK_SH));
       c.InChild("other: flock SH|NB", [] { return TryFlock("f", LOCK_SH); });
       c.InChild("other: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
       close(fd);
       c.InChild("other after close: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
     }},
    {"fcntl write lock against a second process", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET; fl.l_start = 0; fl.l_len = 10;
       c.Do("F_SETLK WR 0-10", fcntl(fd, F_SETLK, &fl));
       c.InChild("other: F_SETLK WR 5-15", [] { return TryPosix("f", F_WRLCK, 5, 10); });
       c.InChild("other: F_SETLK RD 0-1", [] { return TryPosix("f", F_RDLCK, 0, 1); });
       c.InChild("other: F_SETLK WR 10-20 (no overlap)", [] { return TryPosix("f", F_WRLCK, 10, 10); });
       pid_t holder = getpid();
       c.InChild("other: F_GETLK sees the holder", [holder] {
         int fd2 = open("f", O_RDWR);
         struct flock q{};
         q.l_type = F_WRLCK; q.l_whence = SEEK_SET; q.l_start = 0; q.l_len = 0;
         if (fcntl(fd2, F_GETLK, &q) != 0) return errno;
         if (q.l_type != F_WRLCK) return 101;
         if (q.l_pid != holder) return 102;
         if (q.l_start != 0 || q.l_len != 10) return 103;
         return 0;
       });
       close(fd);
       c.InChild("other after close: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 10); });
     }},
    {"fcntl lock released when any fd of the file closes", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK WR whole", fcntl(fd, F_SETLK, &fl));
       int fd2 = c.OpenFd("f", O_RDONLY);
       close(fd2);
       c.InChild("other after closing a second fd: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       close(fd);
     }},
    {"fcntl read locks shared, write refused", file, kNobody, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_RDLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK RD whole", fcntl(fd, F_SETLK, &fl));
       c.InChild("other: F_SETLK RD", [] { return TryPosix("f", F_RDLCK, 0, 0); });
       c.InChild("other: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       close(fd);
     }},
    {"OFD lock against a second process", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_OFD_SETLK WR", fcntl(fd, F_OFD_SETLK, &fl));
       c.InChild("other: F_OFD_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0, F_OFD_SETLK); });
       c.InChild("other: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       close(fd);
     }},
    {"flock and fcntl locks are independent", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       c.Do("flock EX", flock(fd, LOCK_EX));
       c.InChild("other: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       close(fd);
     }},
    {"fcntl lock here, a second process locks the file below", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK WR", fcntl(fd, F_SETLK, &fl));
       int lower = c.lower;
       c.InChild("below: F_SETLK WR", [lower] { return TryPosixAt(lower, F_WRLCK); });
       close(fd);
     }},
    {"fcntl lock below, a second process locks here", file, kUser, [](Ctx& c) {
       int fd = static_cast<int>(c.Do("open below", openat(c.lower, "f", O_RDWR)));
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK WR below", fcntl(fd, F_SETLK, &fl));
       c.InChild("here: F_SETLK WR", [] { return TryPosix("f", F_WRLCK, 0, 0); });
       if (fd >= 0) close(fd);
     }},
    {"flock here, a second process flocks the file below", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDWR);
       c.Do("flock EX", flock(fd, LOCK_EX));
       int lower = c.lower;
       c.InChild("below: flock EX|NB", [lower] { return TryFlockAt(lower, LOCK_EX); });
       close(fd);
     }},
    {"flock below, a second process flocks here", file, kUser, [](Ctx& c) {
       int fd = static_cast<int>(c.Do("open below", openat(c.lower, "f", O_RDWR)));
       c.Do("flock EX below", flock(fd, LOCK_EX));
       c.InChild("here: flock EX|NB", [] { return TryFlock("f", LOCK_EX); });
       if (fd >= 0) close(fd);
     }},
    {"F_SETLK WR on an O_RDONLY fd", file, kUser, [](Ctx& c) {
       int fd = c.OpenFd("f", O_RDONLY);
       struct flock fl{};
       fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
       c.Do("F_SETLK WR", fcntl(fd, F_SETLK, &fl));
       close(fd);
     }},
  };
  // clang-format on
  RunGroup("Locks", cases);
}

}  // namespace
}  // namespace scopedfs::tests
