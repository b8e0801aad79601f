// The exploring tester: seeded random sequences of namespace and data operations by several apps
// at once (each a long-lived AppWorker, so fds are held across steps), lower-tree changes behind
// the daemon's back, policy reloads and daemon restarts. After every step the lower tree is
// compared with a model, and every app's view (stat, read, listing) with what the policy engine,
// linked in as the oracle, says that app should get. A failing sequence is shrunk by dropping
// steps while it still fails, and printed so that it replays.
#ifndef SCOPEDFS_TESTS_EXPLORER_H_
#define SCOPEDFS_TESTS_EXPLORER_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests::explore {

enum class StepKind {
  kCreate,  // open(path, flags) as uid, write `length` bytes of content `seed`, close
  kModify,  // flags: kPwrite, kTruncate, kFallocate or kMmapWrite at offset/length
  kUnlink,
  kMkdir,
  kRmdir,
  kRename,  // path -> path2 with renameat2 flags
  kHold,    // open(path, flags) kept in the app's slot until a kClose
  kClose,
  kStat,         // flags: kStatPlain, kStatxDontSync, kLstat
  kLowerCreate,  // as root on the lower tree: write content; creator `uid` unless it is 0
  kLowerUnlink,
  kLowerRename,
  kLowerAppend,
  kReload,   // the apps file toggles a grant; `scopedfsctl reload`
  kRestart,  // stop (flags 0: SIGTERM, 1: SIGKILL) and start the daemon
  // Never generated: flips the last byte of a lower file without telling the model, so the
  // tester's self-test can show that its checks notice.
  kLowerCorrupt,
};

struct Step {
  StepKind kind = StepKind::kStat;
  uid_t uid = 0;
  std::string path;
  std::string path2;
  uint32_t flags = 0;
  int32_t slot = 0;
  int64_t offset = 0;
  int64_t length = 0;
  uint32_t seed = 0;
};

// One line, e.g. `create uid=10061 path=Download/a.txt flags=0xc1 length=120 seed=7`.
std::string StepToString(const Step& step);
absl::StatusOr<Step> ParseStep(const std::string& line);

struct Config {
  // "android-strict" or "android" (listing visibility): policy/configs/<policy>.textproto.
  std::string policy = "android-strict";
  LowerKind lower = LowerKind::kTmpfs;
  int steps = 150;
  std::string transport;  // empty: the suite's (SCOPEDFS_TEST_TRANSPORT)
  // Self-test only: the oracle is given a grant the daemon's apps file lacks, so the view
  // checks must disagree with the daemon.
  bool skew_oracle = false;
};

struct Failure {
  int step = -1;  // index into the steps run; -1: setup
  std::string message;
  std::string daemon_log;  // its last lines
};

struct RunResult {
  std::vector<Step> steps;  // the steps that ran, as they ran (generated or replayed)
  std::optional<Failure> failure;
  // What the run did and checked: steps per kind, calls predicted to succeed or fail and
  // unpredicted, view and listing comparisons.
  std::map<std::string, int64_t> counts;
};

// Generates and runs `config.steps` steps from `seed` on a fresh storage and daemon.
RunResult RunSeed(const Config& config, uint64_t seed);
// Runs exactly `steps` (a step that no longer applies, as a close of a slot never held, is a
// no-op) on a fresh storage and daemon.
RunResult Replay(const Config& config, const std::vector<Step>& steps);
// Delta debugging: drops chunks of steps, then single steps, while the sequence still fails,
// at most `max_runs` replays. Returns the smallest failing sequence found.
std::vector<Step> Shrink(const Config& config, std::vector<Step> steps, int max_runs);

}  // namespace scopedfs::tests::explore

#endif  // SCOPEDFS_TESTS_EXPLORER_H_
