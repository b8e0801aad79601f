// The mount harness's apps (see mount_harness.h): each App action runs in a forked child as the
// app's uid and sends what it saw back through a pipe; and the assertions on what they saw.
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/harness_internal.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

using internal::ReadAllFrom;
using internal::WriteAll;

// Wire format of an AppResult from child to parent.
struct WireHeader {
  int32_t err;
  uint32_t mode;
  int64_t value;
  uint64_t dev;
  uint64_t data_size;
  uint64_t name_count;
};

void SendResult(int fd, const AppResult& r) {
  WireHeader h{r.err, r.mode, r.value, r.dev, r.data.size(), r.names.size()};
  if (!WriteAll(fd, &h, sizeof(h)) || !WriteAll(fd, r.data.data(), r.data.size())) _exit(3);
  for (const std::string& name : r.names) {
    uint64_t len = name.size();
    if (!WriteAll(fd, &len, sizeof(len)) || !WriteAll(fd, name.data(), name.size())) _exit(3);
  }
}

bool ParseResult(const std::string& wire, AppResult* r) {
  WireHeader h;
  if (wire.size() < sizeof(h)) return false;
  memcpy(&h, wire.data(), sizeof(h));
  size_t at = sizeof(h);
  if (wire.size() - at < h.data_size) return false;
  r->err = h.err;
  r->mode = h.mode;
  r->value = h.value;
  r->dev = h.dev;
  r->data = wire.substr(at, h.data_size);
  at += h.data_size;
  for (uint64_t i = 0; i < h.name_count; ++i) {
    uint64_t len;
    if (wire.size() - at < sizeof(len)) return false;
    memcpy(&len, wire.data() + at, sizeof(len));
    at += sizeof(len);
    if (wire.size() - at < len) return false;
    r->names.push_back(wire.substr(at, len));
    at += len;
  }
  return at == wire.size();
}

AppResult FromErrno() {
  AppResult r;
  r.err = errno;
  return r;
}

AppResult FromStat(const struct stat& st) {
  AppResult r;
  r.value = st.st_size;
  r.mode = st.st_mode;
  r.dev = st.st_dev;
  return r;
}

}  // namespace

// --- Results ----------------------------------------------------------------------------------

std::string ErrnoName(int err) {
  if (err == 0) return "success";
  if (err == AppResult::kChildDied) return "child died";
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : absl::StrCat("errno ", err);
}

std::ostream& operator<<(std::ostream& os, const AppResult& r) {
  os << r.what << " -> " << ErrnoName(r.err);
  if (r.err == AppResult::kChildDied) os << " (" << r.data << ")";
  return os;
}

::testing::AssertionResult Succeeds(const AppResult& r) {
  if (r.ok()) return ::testing::AssertionSuccess() << r;
  return ::testing::AssertionFailure() << r << ", expected success";
}

::testing::AssertionResult FailsWith(const AppResult& r, int err) {
  if (r.err == err) return ::testing::AssertionSuccess() << r;
  return ::testing::AssertionFailure() << r << ", expected " << ErrnoName(err);
}

bool Contains(const std::vector<std::string>& names, absl::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

::testing::AssertionResult SameBytes(absl::string_view actual, absl::string_view expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < actual.size() && i < expected.size() && actual[i] == expected[i]) ++i;
  return ::testing::AssertionFailure() << "got " << actual.size() << " bytes, expected "
                                       << expected.size() << "; first difference at offset " << i;
}

AppResult App::Run(absl::string_view what, const std::function<AppResult()>& body) const {
  AppResult result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.err = AppResult::kChildDied;
    result.data = absl::StrCat("pipe2: ", strerror(errno));
  } else {
    pid_t pid = StartAs(
        uid_,
        [&] {
          close(fds[0]);
          SendResult(fds[1], body());
          return 0;
        },
        mountpoint_);
    close(fds[1]);
    std::string wire = ReadAllFrom(fds[0]);
    close(fds[0]);
    int code = WaitChild(pid);
    if (code != 0 || !ParseResult(wire, &result)) {
      result = AppResult();
      result.err = AppResult::kChildDied;
      result.data = absl::StrCat("app process exit code ", code);
    }
  }
  result.what = absl::StrCat("uid ", uid_, ": ", what);
  return result;
}

AppResult App::Stat(const std::string& path) const {
  return Run(absl::StrCat("stat ", path), [&] {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? FromStat(st) : FromErrno();
  });
}

AppResult App::StatRepeatedly(const std::string& path, int times) const {
  return Run(absl::StrCat("stat ", path, " ", times, " times"), [&] {
    AppResult out;
    struct stat st;
    for (int i = 0; i < times; ++i) {
      if (stat(path.c_str(), &st) != 0 && out.err == 0) out.err = errno;
    }
    return out;
  });
}

AppResult App::Lstat(const std::string& path) const {
  return Run(absl::StrCat("lstat ", path), [&] {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 ? FromStat(st) : FromErrno();
  });
}

AppResult App::Read(const std::string& path) const {
  return Run(absl::StrCat("read ", path), [&] {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return FromErrno();
    AppResult r;
    char buf[1 << 16];
    for (;;) {
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0) {
        r.err = errno;
        break;
      }
      if (n == 0) break;
      r.data.append(buf, static_cast<size_t>(n));
    }
    if (close(fd) != 0 && r.err == 0) r.err = errno;
    r.value = static_cast<int64_t>(r.data.size());
    return r;
  });
}

AppResult App::Open(const std::string& path, int flags, mode_t mode) const {
  return Run(absl::StrCat("open ", path, " flags 0", absl::Hex(flags)), [&] {
    int fd = open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) return FromErrno();
    AppResult r;
    if (close(fd) != 0) r.err = errno;
    return r;
  });
}

AppResult App::Write(const std::string& path, const std::string& content, int flags) const {
  return Run(absl::StrCat("write ", path), [&] {
    int fd = open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) return FromErrno();
    AppResult r;
    if (!WriteAll(fd, content.data(), content.size())) r.err = errno;
    if (close(fd) != 0 && r.err == 0) r.err = errno;
    return r;
  });
}

AppResult App::Create(const std::string& path, const std::string& content) const {
  AppResult r = Write(path, content, O_WRONLY | O_CREAT | O_EXCL);
  r.what = absl::StrCat("uid ", uid_, ": create ", path);
  return r;
}

AppResult App::List(const std::string& dir) const {
  return Run(absl::StrCat("readdir ", dir), [&] {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return FromErrno();
    AppResult r;
    errno = 0;
    while (dirent* e = readdir(d)) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) r.names.push_back(e->d_name);
    }
    r.err = errno;
    closedir(d);
    std::sort(r.names.begin(), r.names.end());
    return r;
  });
}

AppResult App::Mkdir(const std::string& path, mode_t mode) const {
  return Run(absl::StrCat("mkdir ", path),
             [&] { return mkdir(path.c_str(), mode) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Rmdir(const std::string& path) const {
  return Run(absl::StrCat("rmdir ", path),
             [&] { return rmdir(path.c_str()) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Unlink(const std::string& path) const {
  return Run(absl::StrCat("unlink ", path),
             [&] { return unlink(path.c_str()) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Rename(const std::string& from, const std::string& to, unsigned flags) const {
  return Run(
      absl::StrCat("rename ", from, " -> ", to, flags ? absl::StrCat(" flags ", flags) : ""), [&] {
        return renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags) == 0 ? AppResult()
                                                                                   : FromErrno();
      });
}

AppResult App::Link(const std::string& from, const std::string& to) const {
  return Run(absl::StrCat("link ", from, " -> ", to),
             [&] { return link(from.c_str(), to.c_str()) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Symlink(const std::string& target, const std::string& path) const {
  return Run(absl::StrCat("symlink ", path, " -> ", target), [&] {
    return symlink(target.c_str(), path.c_str()) == 0 ? AppResult() : FromErrno();
  });
}

AppResult App::Readlink(const std::string& path) const {
  return Run(absl::StrCat("readlink ", path), [&] {
    char buf[PATH_MAX];
    ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
    if (n < 0) return FromErrno();
    AppResult r;
    r.data.assign(buf, static_cast<size_t>(n));
    return r;
  });
}

AppResult App::Chmod(const std::string& path, mode_t mode) const {
  return Run(absl::StrCat("chmod ", path, " 0", absl::Hex(mode)),
             [&] { return chmod(path.c_str(), mode) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Chown(const std::string& path, uid_t owner, gid_t group) const {
  return Run(absl::StrCat("chown ", path, " ", owner, ":", group),
             [&] { return chown(path.c_str(), owner, group) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::Truncate(const std::string& path, off_t size) const {
  return Run(absl::StrCat("truncate ", path, " ", size),
             [&] { return truncate(path.c_str(), size) == 0 ? AppResult() : FromErrno(); });
}

AppResult App::GetXattr(const std::string& path, const std::string& name) const {
  return Run(absl::StrCat("getxattr ", path, " ", name), [&] {
    char buf[4096];
    ssize_t n = getxattr(path.c_str(), name.c_str(), buf, sizeof(buf));
    if (n < 0) return FromErrno();
    AppResult r;
    r.data.assign(buf, static_cast<size_t>(n));
    return r;
  });
}

AppResult App::SetXattr(const std::string& path, const std::string& name,
                        const std::string& value) const {
  return Run(absl::StrCat("setxattr ", path, " ", name), [&] {
    return setxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0) == 0 ? AppResult()
                                                                                    : FromErrno();
  });
}

AppResult App::ListXattr(const std::string& path) const {
  return Run(absl::StrCat("listxattr ", path), [&] {
    char buf[4096];
    ssize_t n = listxattr(path.c_str(), buf, sizeof(buf));
    if (n < 0) return FromErrno();
    AppResult r;
    for (absl::string_view name : absl::StrSplit(absl::string_view(buf, static_cast<size_t>(n)),
                                                 absl::ByChar('\0'), absl::SkipEmpty())) {
      r.names.emplace_back(name);
    }
    return r;
  });
}

}  // namespace scopedfs::tests
