// The exploring tester (tests/explorer.h) in CI: a few fixed seeds and one seed of the day, under
// both Android policies (strict and listing visibility), on a tmpfs and an ext4 lower tree (ext4
// reuses a freed inode number at once). A failure prints its seed, a shrunk sequence of steps and
// the commands that replay both. tools/explore.sh runs many seeds through the environment:
//   SCOPEDFS_EXPLORE_SEEDS=first:count or a comma list; SCOPEDFS_EXPLORE_STEPS=n;
//   SCOPEDFS_EXPLORE_POLICY=android-strict|android; SCOPEDFS_EXPLORE_LOWER=tmpfs|ext4;
//   SCOPEDFS_EXPLORE_REPLAY=file of steps (one StepToString line each);
//   SCOPEDFS_EXPLORE_SHRINK_RUNS=n (replays spent shrinking a failure, default 80).
// Needs root and /dev/fuse; skips, saying so, without them.
#include <fcntl.h>
#include <stdlib.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/explorer.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests::explore {
namespace {

constexpr uint64_t kFixedSeeds[] = {1, 2, 3};
constexpr int kDefaultSteps = 100;
constexpr int kDefaultShrinkRuns = 80;

std::string Env(const char* name) {
  const char* v = getenv(name);
  return v == nullptr ? "" : v;
}

int EnvInt(const char* name, int fallback) {
  int v;
  return absl::SimpleAtoi(Env(name), &v) ? v : fallback;
}

// The seed of the day (UTC), e.g. 20261128: a new sequence every day, the same all day long.
uint64_t DailySeed() {
  absl::CivilDay day = absl::ToCivilDay(absl::Now(), absl::UTCTimeZone());
  return static_cast<uint64_t>(day.year() * 10000 + day.month() * 100 + day.day());
}

std::vector<uint64_t> Seeds() {
  std::string spec = Env("SCOPEDFS_EXPLORE_SEEDS");
  std::vector<uint64_t> seeds;
  if (spec.empty()) {
    seeds.assign(std::begin(kFixedSeeds), std::end(kFixedSeeds));
    seeds.push_back(DailySeed());
    return seeds;
  }
  std::pair<std::string, std::string> range = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  uint64_t first, count;
  if (!range.second.empty() && absl::SimpleAtoi(range.first, &first) &&
      absl::SimpleAtoi(range.second, &count)) {
    for (uint64_t i = 0; i < count; ++i) seeds.push_back(first + i);
    return seeds;
  }
  for (absl::string_view s : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
    uint64_t seed;
    if (absl::SimpleAtoi(s, &seed)) seeds.push_back(seed);
  }
  return seeds;
}

struct Param {
  std::string policy;
  LowerKind lower;
};

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  std::string name = absl::StrCat(info.param.policy, "_", LowerKindName(info.param.lower));
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

class ExploreMountTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
    std::string policy = Env("SCOPEDFS_EXPLORE_POLICY");
    std::string lower = Env("SCOPEDFS_EXPLORE_LOWER");
    if (!policy.empty() && policy != GetParam().policy) GTEST_SKIP() << "SCOPEDFS_EXPLORE_POLICY";
    if (!lower.empty() && lower != LowerKindName(GetParam().lower)) {
      GTEST_SKIP() << "SCOPEDFS_EXPLORE_LOWER";
    }
    config_.policy = GetParam().policy;
    config_.lower = GetParam().lower;
    config_.steps = EnvInt("SCOPEDFS_EXPLORE_STEPS", kDefaultSteps);
  }

  std::string Where() const {
    return absl::StrCat("SCOPEDFS_EXPLORE_POLICY=", config_.policy,
                        " SCOPEDFS_EXPLORE_LOWER=", LowerKindName(config_.lower));
  }

  // Shrinks a failing sequence, writes it where bazel keeps test outputs, and fails the test
  // with everything needed to replay it.
  void Report(const std::string& what, const RunResult& run) {
    std::vector<Step> failing(run.steps.begin(), run.steps.begin() + run.failure->step + 1);
    std::vector<Step> shrunk =
        Shrink(config_, failing, EnvInt("SCOPEDFS_EXPLORE_SHRINK_RUNS", kDefaultShrinkRuns));
    RunResult again = Replay(config_, shrunk);
    std::ostringstream steps;
    for (const Step& s : shrunk) steps << "  " << StepToString(s) << "\n";
    std::string dir = Env("TEST_UNDECLARED_OUTPUTS_DIR");
    if (dir.empty()) dir = ::testing::TempDir();
    std::string file =
        absl::StrCat(dir, "/explore_", config_.policy, "_", LowerKindName(config_.lower), "_seed",
                     what.substr(what.find(' ') + 1), ".steps");
    {
      std::ofstream out(file);
      for (const Step& s : shrunk) out << StepToString(s) << "\n";
    }
    ADD_FAILURE() << what << " failed at step " << run.failure->step << " of " << run.steps.size()
                  << ":\n  " << run.failure->message << "\nshrunk to " << shrunk.size()
                  << " steps, which fail with:\n  "
                  << (again.failure ? again.failure->message : "(no failure on the last replay)")
                  << "\n"
                  << steps.str()
                  << "replay the seed:   tools/explore.sh --policy=" << config_.policy
                  << " --lower=" << LowerKindName(config_.lower)
                  << " --seed=" << what.substr(what.find(' ') + 1) << " --steps=" << config_.steps
                  << "\nreplay the steps:  tools/explore.sh --policy=" << config_.policy
                  << " --lower=" << LowerKindName(config_.lower) << " --replay=" << file
                  << "\nthe daemon's last lines:\n"
                  << (again.failure ? again.failure->daemon_log : run.failure->daemon_log);
  }

  Config config_;
};

TEST_P(ExploreMountTest, EveryAppSeesWhatTheModelSays) {
  std::string replay = Env("SCOPEDFS_EXPLORE_REPLAY");
  if (!replay.empty()) {
    std::ifstream in(replay);
    ASSERT_TRUE(in.good()) << "cannot read " << replay;
    std::vector<Step> steps;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      absl::StatusOr<Step> step = ParseStep(line);
      ASSERT_TRUE(step.ok()) << step.status();
      steps.push_back(*step);
    }
    RunResult run = Replay(config_, steps);
    ASSERT_FALSE(run.failure && run.failure->step < 0) << run.failure->message;
    EXPECT_FALSE(run.failure.has_value())
        << "step " << run.failure->step << ": " << run.failure->message << "\n"
        << run.failure->daemon_log;
    return;
  }
  std::vector<uint64_t> seeds = Seeds();
  ASSERT_FALSE(seeds.empty()) << "SCOPEDFS_EXPLORE_SEEDS names no seed";
  int failed = 0;
  for (uint64_t seed : seeds) {
    absl::Time start = absl::Now();
    RunResult run = RunSeed(config_, seed);
    if (run.failure && run.failure->step < 0) FAIL() << "setup: " << run.failure->message;
    std::cerr << "[ explore ] " << Where() << " seed " << seed << ": " << run.steps.size()
              << " steps, " << (run.failure ? "FAILED" : "ok") << " in "
              << absl::ToDoubleSeconds(absl::Now() - start) << " s;";
    for (const auto& [what, n] : run.counts) std::cerr << " " << what << " " << n << ";";
    std::cerr << "\n";
    if (run.failure) {
      ++failed;
      Report(absl::StrCat("seed ", seed), run);
      // A long run reports every failing seed; shrinking each is the costly part.
      if (failed >= EnvInt("SCOPEDFS_EXPLORE_MAX_FAILURES", 3)) break;
    }
  }
}

// The tester's checks can fail: a lower change the model is not told of, and an oracle that
// believes in a grant the daemon does not give, are each caught at the step that shows them.
TEST(ExploreSelfTest, AnUntoldLowerChangeIsCaught) {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  Config config;
  std::vector<Step> steps(2);
  steps[0].kind = StepKind::kCreate;
  steps[0].uid = kNotes;
  steps[0].path = "Download/a.txt";
  steps[0].flags = O_WRONLY | O_CREAT | O_EXCL;
  steps[0].length = 100;
  steps[1].kind = StepKind::kLowerCorrupt;
  steps[1].path = "Download/a.txt";
  RunResult run = Replay(config, steps);
  ASSERT_TRUE(run.failure.has_value());
  EXPECT_EQ(run.failure->step, 1) << run.failure->message;
  EXPECT_TRUE(absl::StrContains(run.failure->message, "first difference at 99"))
      << run.failure->message;
}

TEST(ExploreSelfTest, AnOracleThatDisagreesWithThePolicyIsCaught) {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  Config config;
  config.skew_oracle = true;
  std::vector<Step> steps(2);
  steps[0].kind = StepKind::kStat;
  steps[0].uid = kCamera;
  steps[0].path = "DCIM";
  steps[1].kind = StepKind::kCreate;
  steps[1].uid = kGallery;
  steps[1].path = "Pictures/a.jpg";
  steps[1].flags = O_WRONLY | O_CREAT | O_EXCL;
  steps[1].length = 500;
  RunResult run = Replay(config, steps);
  ASSERT_TRUE(run.failure.has_value());
  EXPECT_EQ(run.failure->step, 1) << run.failure->message;
  EXPECT_TRUE(absl::StrContains(run.failure->message, "uid 10065 Pictures"))
      << run.failure->message;
}

// A daemon SIGKILLed while apps hold fds (O_PATH ones too) and restarted at once serves again,
// 40 times in a row. Over FUSE over io_uring a restart used to fail now and then ("mount point:
// ECANCELED"): the dead mount's root answered ECANCELED while the kernel cancelled the killed
// daemon's ring entries, which the restart did not take for a dead mount.
TEST(ExploreRegressionTest, SigkillRestartsWhileAppsHoldFds) {
  SCOPEDFS_SKIP_UNLESS_MOUNTABLE();
  std::vector<Step> steps;
  for (int i = 0; i < 40; ++i) {
    Step create;
    create.kind = StepKind::kCreate;
    create.uid = kNotes;
    create.path = absl::StrCat("Download/r", i, ".txt");
    create.flags = O_WRONLY | O_CREAT | O_TRUNC;
    create.length = 100;
    Step hold;
    hold.kind = StepKind::kHold;
    hold.uid = kNotes;
    hold.path = create.path;
    hold.flags = O_PATH;
    Step restart;
    restart.kind = StepKind::kRestart;
    restart.flags = 1;
    steps.insert(steps.end(), {create, hold, restart});
  }
  Config config;
  RunResult run = Replay(config, steps);
  EXPECT_FALSE(run.failure.has_value())
      << "step " << run.failure->step << ": " << run.failure->message;
}

INSTANTIATE_TEST_SUITE_P(Lowers, ExploreMountTest,
                         ::testing::Values(Param{"android-strict", LowerKind::kTmpfs},
                                           Param{"android-strict", LowerKind::kExt4},
                                           Param{"android", LowerKind::kTmpfs},
                                           Param{"android", LowerKind::kExt4}),
                         ParamName);

}  // namespace
}  // namespace scopedfs::tests::explore
