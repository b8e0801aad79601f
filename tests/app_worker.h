// A long-lived app process for tests that hold files across steps: forked from the test, it drops
// to the app's uid and serves one command at a time over a SOCK_SEQPACKET socketpair (one message
// each way), so an fd it opened (O_PATH too) stays open until a later command closes it.
#ifndef SCOPEDFS_TESTS_APP_WORKER_H_
#define SCOPEDFS_TESTS_APP_WORKER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace scopedfs::tests {

enum class WorkerOp : uint8_t {
  kStat,    // flags: kStatPlain, kStatxDontSync or kLstat
  kRead,    // open O_RDONLY, read all: size and hash
  kCreate,  // open(path, flags, 0644), write data, close
  kModify,  // open O_RDWR, then flags: kPwrite/kTruncate/kFallocate/kMmapWrite, then close
  kUnlink,
  kMkdir,
  kRmdir,
  kRename,    // path -> path2, renameat2 flags
  kHold,      // open(path, flags) and keep the fd in slot `slot`
  kHeldStat,  // fstat of slot
  kHeldRead,  // pread of slot from 0: size and hash
  kClose,     // close slot
  kCloseAll,
  kList,   // readdir: sorted names without . and ..
  kProbe,  // for each of paths: stat, then read (file) or list (dir); two results each
};

inline constexpr uint32_t kStatPlain = 0;
inline constexpr uint32_t kStatxDontSync = 1;
inline constexpr uint32_t kLstat = 2;
inline constexpr uint32_t kPwrite = 0;
inline constexpr uint32_t kTruncate = 1;
inline constexpr uint32_t kFallocate = 2;
inline constexpr uint32_t kMmapWrite = 3;

struct WorkerCommand {
  WorkerOp op = WorkerOp::kStat;
  std::string path;
  std::string path2;
  uint32_t flags = 0;
  int32_t slot = 0;
  int64_t offset = 0;
  int64_t length = 0;
  std::string data;
  std::vector<std::string> paths;  // kProbe
};

// A command of the ops that take no data; set the other fields after.
WorkerCommand Command(WorkerOp op, std::string path = "", std::string path2 = "",
                      uint32_t flags = 0, int32_t slot = 0);

// One call's outcome. err: 0, the errno, or kWorkerGone (the process died or did not answer).
struct WorkerResult {
  static constexpr int kWorkerGone = -1;
  int32_t err = 0;
  uint32_t mode = 0;
  int64_t size = 0;
  uint64_t hash = 0;
  std::vector<std::string> names;
};

// FNV-1a 64 of the bytes: what kRead reports instead of the bytes.
uint64_t ContentHash(const std::string& bytes);

class AppWorker {
 public:
  // Forks the worker: it enters `mountpoint` as root (its cwd; paths are relative to it), drops
  // to `uid` (gid too, no supplementary groups) and serves until its socket closes. A worker that
  // does not answer one command within `answer_timeout` is reported gone (a hung daemon).
  static absl::StatusOr<std::unique_ptr<AppWorker>> Start(
      uid_t uid, const std::string& mountpoint, absl::Duration answer_timeout = absl::Seconds(60));
  ~AppWorker();  // SIGKILLs and reaps the process
  AppWorker(const AppWorker&) = delete;
  AppWorker& operator=(const AppWorker&) = delete;

  uid_t uid() const { return uid_; }
  pid_t pid() const { return pid_; }
  // One result for every command but kProbe, two per path for kProbe.
  std::vector<WorkerResult> Call(const WorkerCommand& command);

 private:
  AppWorker(uid_t uid, pid_t pid, int fd, absl::Duration timeout)
      : uid_(uid), pid_(pid), fd_(fd), timeout_(timeout) {}
  uid_t uid_;
  pid_t pid_;
  int fd_;
  absl::Duration timeout_;
};

}  // namespace scopedfs::tests

#endif  // SCOPEDFS_TESTS_APP_WORKER_H_
