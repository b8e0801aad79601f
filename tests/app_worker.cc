// The long-lived app process (app_worker.h): a fork that serves commands as the app's uid, and
// the test's end of its socket. Messages are a flat little-endian encoding of the structs; each is
// one SOCK_SEQPACKET datagram, so no framing is needed.
#include "tests/app_worker.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace scopedfs::tests {
namespace {

constexpr size_t kMaxMessage = 4 << 20;

class Encoder {
 public:
  template <typename T>
  void Put(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  void PutString(const std::string& s) {
    Put<uint64_t>(s.size());
    out_.append(s);
  }
  void PutStrings(const std::vector<std::string>& v) {
    Put<uint64_t>(v.size());
    for (const std::string& s : v) PutString(s);
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class Decoder {
 public:
  explicit Decoder(const std::string& in) : in_(in) {}
  template <typename T>
  T Get() {
    T v{};
    if (in_.size() - at_ < sizeof(v)) {
      ok_ = false;
      return v;
    }
    memcpy(&v, in_.data() + at_, sizeof(v));
    at_ += sizeof(v);
    return v;
  }
  std::string GetString() {
    uint64_t n = Get<uint64_t>();
    if (!ok_ || in_.size() - at_ < n) {
      ok_ = false;
      return "";
    }
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::vector<std::string> GetStrings() {
    uint64_t n = Get<uint64_t>();
    std::vector<std::string> v;
    for (uint64_t i = 0; ok_ && i < n; ++i) v.push_back(GetString());
    return v;
  }
  bool ok() const { return ok_ && at_ == in_.size(); }

 private:
  const std::string& in_;
  size_t at_ = 0;
  bool ok_ = true;
};

std::string EncodeCommand(const WorkerCommand& c) {
  Encoder e;
  e.Put<uint8_t>(static_cast<uint8_t>(c.op));
  e.PutString(c.path);
  e.PutString(c.path2);
  e.Put(c.flags);
  e.Put(c.slot);
  e.Put(c.offset);
  e.Put(c.length);
  e.PutString(c.data);
  e.PutStrings(c.paths);
  return e.bytes();
}

bool DecodeCommand(const std::string& wire, WorkerCommand* c) {
  Decoder d(wire);
  c->op = static_cast<WorkerOp>(d.Get<uint8_t>());
  c->path = d.GetString();
  c->path2 = d.GetString();
  c->flags = d.Get<uint32_t>();
  c->slot = d.Get<int32_t>();
  c->offset = d.Get<int64_t>();
  c->length = d.Get<int64_t>();
  c->data = d.GetString();
  c->paths = d.GetStrings();
  return d.ok();
}

std::string EncodeResults(const std::vector<WorkerResult>& results) {
  Encoder e;
  e.Put<uint64_t>(results.size());
  for (const WorkerResult& r : results) {
    e.Put(r.err);
    e.Put(r.mode);
    e.Put(r.size);
    e.Put(r.hash);
    e.PutStrings(r.names);
  }
  return e.bytes();
}

bool DecodeResults(const std::string& wire, std::vector<WorkerResult>* results) {
  Decoder d(wire);
  uint64_t n = d.Get<uint64_t>();
  for (uint64_t i = 0; i < n && i < 100000; ++i) {
    WorkerResult r;
    r.err = d.Get<int32_t>();
    r.mode = d.Get<uint32_t>();
    r.size = d.Get<int64_t>();
    r.hash = d.Get<uint64_t>();
    r.names = d.GetStrings();
    results->push_back(std::move(r));
  }
  return d.ok();
}

WorkerResult Errno() {
  WorkerResult r;
  r.err = errno;
  return r;
}

WorkerResult OfStat(const struct stat& st) {
  WorkerResult r;
  r.mode = st.st_mode;
  r.size = st.st_size;
  return r;
}

// Reads the fd from offset 0 to its end.
WorkerResult ReadAll(int fd) {
  WorkerResult r;
  std::string data;
  char buf[1 << 16];
  for (off_t at = 0;;) {
    ssize_t n = pread(fd, buf, sizeof(buf), at);
    if (n < 0) {
      r.err = errno;
      return r;
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    at += n;
  }
  r.size = static_cast<int64_t>(data.size());
  r.hash = ContentHash(data);
  return r;
}

bool WriteAllAt(int fd, const std::string& data, off_t offset) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = pwrite(fd, data.data() + done, data.size() - done, offset + done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

WorkerResult List(const std::string& path) {
  int fd = open(path.empty() ? "." : path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno();
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    WorkerResult r = Errno();
    close(fd);
    return r;
  }
  WorkerResult r;
  errno = 0;
  while (dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) r.names.push_back(e->d_name);
  }
  r.err = errno;
  closedir(d);
  std::sort(r.names.begin(), r.names.end());
  return r;
}

WorkerResult Modify(const WorkerCommand& c) {
  int fd = open(c.path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Errno();
  WorkerResult r;
  switch (c.flags) {
    case kPwrite:
      if (!WriteAllAt(fd, c.data, c.offset)) r.err = errno;
      break;
    case kTruncate:
      if (ftruncate(fd, c.length) != 0) r.err = errno;
      break;
    case kFallocate:
      if (fallocate(fd, 0, c.offset, c.length) != 0) r.err = errno;
      break;
    case kMmapWrite: {
      // Within the file's size only (a mapping past the end faults).
      void* p = mmap(nullptr, c.offset + c.data.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        r.err = errno;
        break;
      }
      memcpy(static_cast<char*>(p) + c.offset, c.data.data(), c.data.size());
      if (msync(p, c.offset + c.data.size(), MS_SYNC) != 0) r.err = errno;
      munmap(p, c.offset + c.data.size());
      break;
    }
    default:
      r.err = EINVAL;
  }
  if (close(fd) != 0 && r.err == 0) r.err = errno;
  return r;
}

WorkerResult StatPath(const std::string& path, uint32_t how) {
  const char* p = path.empty() ? "." : path.c_str();
  if (how == kStatxDontSync) {
    struct statx stx;
    if (statx(AT_FDCWD, p, AT_STATX_DONT_SYNC, STATX_BASIC_STATS, &stx) != 0) return Errno();
    WorkerResult r;
    r.mode = stx.stx_mode;
    r.size = static_cast<int64_t>(stx.stx_size);
    return r;
  }
  struct stat st;
  int rc = how == kLstat ? lstat(p, &st) : stat(p, &st);
  return rc == 0 ? OfStat(st) : Errno();
}

std::vector<WorkerResult> Serve(const WorkerCommand& c, std::map<int, int>* held) {
  switch (c.op) {
    case WorkerOp::kStat:
      return {StatPath(c.path, c.flags)};
    case WorkerOp::kRead: {
      int fd = open(c.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return {Errno()};
      WorkerResult r = ReadAll(fd);
      if (close(fd) != 0 && r.err == 0) r.err = errno;
      return {r};
    }
    case WorkerOp::kCreate: {
      int fd = open(c.path.c_str(), static_cast<int>(c.flags) | O_CLOEXEC, 0644);
      if (fd < 0) return {Errno()};
      WorkerResult r;
      if (!WriteAllAt(fd, c.data, 0)) r.err = errno;
      if (close(fd) != 0 && r.err == 0) r.err = errno;
      return {r};
    }
    case WorkerOp::kModify:
      return {Modify(c)};
    case WorkerOp::kUnlink:
      return {unlink(c.path.c_str()) == 0 ? WorkerResult() : Errno()};
    case WorkerOp::kMkdir:
      return {mkdir(c.path.c_str(), 0755) == 0 ? WorkerResult() : Errno()};
    case WorkerOp::kRmdir:
      return {rmdir(c.path.c_str()) == 0 ? WorkerResult() : Errno()};
    case WorkerOp::kRename:
      return {renameat2(AT_FDCWD, c.path.c_str(), AT_FDCWD, c.path2.c_str(), c.flags) == 0
                  ? WorkerResult()
                  : Errno()};
    case WorkerOp::kHold: {
      if (held->count(c.slot)) {
        WorkerResult r;
        r.err = EBUSY;
        return {r};
      }
      int fd = open(c.path.c_str(), static_cast<int>(c.flags) | O_CLOEXEC);
      if (fd < 0) return {Errno()};
      (*held)[c.slot] = fd;
      return {WorkerResult()};
    }
    case WorkerOp::kHeldStat:
    case WorkerOp::kHeldRead:
    case WorkerOp::kClose: {
      auto it = held->find(c.slot);
      if (it == held->end()) {
        WorkerResult r;
        r.err = EBADF;
        return {r};
      }
      if (c.op == WorkerOp::kHeldRead) return {ReadAll(it->second)};
      if (c.op == WorkerOp::kHeldStat) {
        struct stat st;
        return {fstat(it->second, &st) == 0 ? OfStat(st) : Errno()};
      }
      int rc = close(it->second);
      held->erase(it);
      return {rc == 0 ? WorkerResult() : Errno()};
    }
    case WorkerOp::kCloseAll:
      for (auto& [slot, fd] : *held) close(fd);
      held->clear();
      return {WorkerResult()};
    case WorkerOp::kList:
      return {List(c.path)};
    case WorkerOp::kProbe: {
      std::vector<WorkerResult> out;
      for (const std::string& path : c.paths) {
        WorkerResult st = StatPath(path, kStatPlain);
        WorkerResult second;
        if (st.err == 0 && S_ISDIR(st.mode)) {
          second = List(path);
        } else if (st.err == 0) {
          second = Serve(Command(WorkerOp::kRead, path), held)[0];
        } else {
          second.err = st.err;
        }
        out.push_back(std::move(st));
        out.push_back(std::move(second));
      }
      return out;
    }
  }
  WorkerResult r;
  r.err = EINVAL;
  return {r};
}

[[noreturn]] void WorkerMain(int sock) {
  std::map<int, int> held;  // slot -> fd
  std::string buf(kMaxMessage, '\0');
  for (;;) {
    ssize_t n = recv(sock, buf.data(), buf.size(), 0);
    if (n <= 0) _exit(0);
    WorkerCommand command;
    std::string wire = buf.substr(0, static_cast<size_t>(n));
    if (!DecodeCommand(wire, &command)) _exit(3);
    std::string reply = EncodeResults(Serve(command, &held));
    if (send(sock, reply.data(), reply.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(reply.size())) {
      _exit(4);
    }
  }
}

}  // namespace

WorkerCommand Command(WorkerOp op, std::string path, std::string path2, uint32_t flags,
                      int32_t slot) {
  WorkerCommand c;
  c.op = op;
  c.path = std::move(path);
  c.path2 = std::move(path2);
  c.flags = flags;
  c.slot = slot;
  return c;
}

uint64_t ContentHash(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

absl::StatusOr<std::unique_ptr<AppWorker>> AppWorker::Start(uid_t uid,
                                                            const std::string& mountpoint,
                                                            absl::Duration answer_timeout) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  int size = kMaxMessage;
  setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  pid_t parent = getpid();
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    close(sv[0]);
    // The cwd is entered as root: the mount point sits in root's private temp directory.
    if (chdir(mountpoint.c_str()) != 0) _exit(124);
    if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 ||
        setresuid(uid, uid, uid) != 0) {
      _exit(125);
    }
    WorkerMain(sv[1]);
  }
  close(sv[1]);
  return std::unique_ptr<AppWorker>(new AppWorker(uid, pid, sv[0], answer_timeout));
}

AppWorker::~AppWorker() {
  close(fd_);
  kill(pid_, SIGKILL);
  int status;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::vector<WorkerResult> AppWorker::Call(const WorkerCommand& command) {
  auto gone = [] {
    WorkerResult r;
    r.err = WorkerResult::kWorkerGone;
    return std::vector<WorkerResult>{r};
  };
  std::string wire = EncodeCommand(command);
  if (send(fd_, wire.data(), wire.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(wire.size())) {
    return gone();
  }
  pollfd p = {fd_, POLLIN, 0};
  int ms = static_cast<int>(absl::ToInt64Milliseconds(timeout_));
  int rc;
  do {
    rc = poll(&p, 1, ms);
  } while (rc < 0 && errno == EINTR);
  if (rc != 1) return gone();
  std::string buf(kMaxMessage, '\0');
  ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
  if (n <= 0) return gone();
  buf.resize(static_cast<size_t>(n));
  std::vector<WorkerResult> results;
  if (!DecodeResults(buf, &results) || results.empty()) return gone();
  return results;
}

}  // namespace scopedfs::tests
