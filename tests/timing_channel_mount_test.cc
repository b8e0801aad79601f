// What a LOOKUP's time tells an app about names it may not see. The answer about a hidden name
// must not cost a time that depends on what is there: whether another package is installed (its
// Android/data directory exists), or how large a hidden file is. Each test measures, as a real
// app through the mount, many stats of two kinds of name interleaved, and asks how well the best
// ordering classifier separates them (the area under the ROC curve: 0.5 is chance, 1.0 a perfect
// classifier). It fails when the classes separate clearly (AUC beyond 0.5 +/- 0.25, more than four
// standard deviations of chance for these sample sizes); before the daemon answered these names
// alike, installed and absent packages separated with an AUC of 1.0 and hidden files of 10 kB and
// 1 MB as well.
//
// Times are each the fastest of several stats in a row (of one name; a hidden file's first stat
// is timed alone), which removes most of a noisy machine's scheduling delay, and both classes are
// measured alternately, so load affects both alike. This
// is a test of behaviour (whether the two paths are the same), not of speed.
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/mount_harness.h"

namespace scopedfs::tests {
namespace {

constexpr int kTrials = 60;

int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// The fastest of `stats` stats of `path` (each must fail ENOENT), in ns; -1 otherwise.
int64_t Sample(const std::string& path, int stats) {
  int64_t best = INT64_MAX;
  for (int i = 0; i < stats; ++i) {
    struct stat st;
    int64_t start = NowNs();
    int rc = stat(path.c_str(), &st);
    int64_t took = NowNs() - start;
    if (rc == 0 || errno != ENOENT) return -1;
    best = std::min(best, took);
  }
  return best;
}

// Samples of a[i] and b[i], alternately, each the fastest of `stats` stats: "a1,a2,...;b1,..." in
// AppResult::data.
AppResult Measure(const App& app, const std::vector<std::string>& a,
                  const std::vector<std::string>& b, int stats) {
  return app.Run("timing of " + a[0] + " and " + b[0], [a, b, stats] {
    AppResult r;
    std::vector<int64_t> sa, sb;
    for (size_t t = 0; t < a.size() && t < b.size(); ++t) {
      bool a_first = (t % 2) == 0;
      int64_t first = Sample(a_first ? a[t] : b[t], stats);
      int64_t second = Sample(a_first ? b[t] : a[t], stats);
      if (first < 0 || second < 0) {
        r.err = EPROTO;  // a stat did not answer ENOENT
        return r;
      }
      (a_first ? sa : sb).push_back(first);
      (a_first ? sb : sa).push_back(second);
    }
    r.data = absl::StrCat(absl::StrJoin(sa, ","), ";", absl::StrJoin(sb, ","));
    return r;
  });
}

std::vector<int64_t> Parse(absl::string_view csv) {
  std::vector<int64_t> out;
  for (absl::string_view field : absl::StrSplit(csv, ',')) {
    int64_t v;
    if (absl::SimpleAtoi(field, &v)) out.push_back(v);
  }
  return out;
}

// P(a sample of `a` is slower than one of `b`), ties counting half: the AUC of the best
// threshold classifier's ordering.
double Auc(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  double wins = 0;
  for (int64_t x : a) {
    for (int64_t y : b) wins += x > y ? 1.0 : x == y ? 0.5 : 0.0;
  }
  return wins / (static_cast<double>(a.size()) * static_cast<double>(b.size()));
}

int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Runs the measurement and checks that the two classes do not separate.
void ExpectIndistinguishable(const App& app, const std::vector<std::string>& a,
                             const std::vector<std::string>& b, int stats) {
  AppResult r = Measure(app, a, b, stats);
  ASSERT_TRUE(r.ok()) << r;
  std::vector<std::string> halves = absl::StrSplit(r.data, ';');
  ASSERT_EQ(halves.size(), 2u) << r.data;
  std::vector<int64_t> sa = Parse(halves[0]);
  std::vector<int64_t> sb = Parse(halves[1]);
  ASSERT_EQ(sa.size(), a.size());
  ASSERT_EQ(sb.size(), b.size());
  double auc = Auc(sa, sb);
  std::string figures = absl::StrCat(a[0], ": median ", Median(sa) / 1000.0, " us; ", b[0],
                                     ": median ", Median(sb) / 1000.0, " us; AUC ", auc);
  std::cout << figures << "\n";
  EXPECT_GT(auc, 0.25) << figures;
  EXPECT_LT(auc, 0.75) << figures;
}

// The same name, kTrials samples of the fastest of 5 stats (a refused name is never cached).
void ExpectIndistinguishable(const App& app, const std::string& a, const std::string& b) {
  (void)Sample(a, 1);  // warm what both share (the parent's entries)
  ExpectIndistinguishable(app, std::vector<std::string>(kTrials, a),
                          std::vector<std::string>(kTrials, b), 5);
}

class TimingChannelTest : public MountTest, public ::testing::WithParamInterface<const char*> {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.policy = GetParam();
    return options;
  }
};

// Another package's Android/data directory is ENOENT whether the package is installed (the
// directory exists) or not, and the two answers take the same path.
TEST_P(TimingChannelTest, InstalledAndAbsentPackagesCostTheSame) {
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower("Android/data/com.example.notes/files", kNotes));
  SCOPEDFS_ASSERT_OK(
      storage_.WriteLower("Android/data/com.example.notes/files/n.txt", "note", kNotes));
  ExpectIndistinguishable(As(kMusic), "Android/data/com.example.notes",
                          "Android/data/com.example.absent");
  // In another case, which the daemon resolves to the lower spelling before it can judge.
  ExpectIndistinguishable(As(kMusic), "Android/data/COM.example.NOTES",
                          "Android/data/COM.example.ABSENT");
  // Inside the area too: a 3 MB file, a 2-byte file and a missing name.
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Android/data/com.example.notes/files/big.bin",
                                         Pattern(3 << 20, 7), kNotes));
  ExpectIndistinguishable(As(kMusic), "Android/data/com.example.notes/files/big.bin",
                          "Android/data/com.example.notes/files/none.bin");
  // And once its owner has looked at it (its facts are cached).
  ASSERT_TRUE(Succeeds(As(kNotes).Stat("Android/data/com.example.notes/files/big.bin")));
  ExpectIndistinguishable(As(kMusic), "Android/data/com.example.notes/files/big.bin",
                          "Android/data/com.example.notes/files/none.bin");
}

// An installed package whose app just walked into its own Android/data directory (its dentry is
// in the kernel's cache, positive): another app's first stat there must still cost what a stat of
// an absent package's does. Each trial: the owner's stat, then one first stat of each, in
// alternating order, in one process of the other app.
TEST_P(TimingChannelTest, AnActivePackageCostsWhatAnAbsentOneDoes) {
  const std::string own = "Android/data/com.example.notes";
  SCOPEDFS_ASSERT_OK(storage_.MkdirLower(own + "/files", kNotes));
  std::vector<int64_t> installed, absent;
  (void)As(kMusic).Stat("Android/data/com.example.warmup");  // warm what both share
  for (int t = 0; t < kTrials; ++t) {
    ASSERT_TRUE(Succeeds(As(kNotes).Stat(own + "/files")));
    std::string missing = absl::StrCat("Android/data/com.example.absent", t);
    bool installed_first = (t % 2) == 0;
    AppResult r = As(kMusic).Run("first stats", [&] {
      AppResult out;
      int64_t first = Sample(installed_first ? own : missing, 1);
      int64_t second = Sample(installed_first ? missing : own, 1);
      if (first < 0 || second < 0) {
        out.err = EPROTO;  // a stat did not answer ENOENT
        return out;
      }
      out.data = absl::StrCat(first, ",", second);
      return out;
    });
    ASSERT_TRUE(r.ok()) << r;
    std::vector<int64_t> pair = Parse(r.data);
    ASSERT_EQ(pair.size(), 2u) << r.data;
    installed.push_back(installed_first ? pair[0] : pair[1]);
    absent.push_back(installed_first ? pair[1] : pair[0]);
  }
  double auc = Auc(installed, absent);
  std::string figures =
      absl::StrCat("active package: median ", Median(installed) / 1000.0, " us; absent: median ",
                   Median(absent) / 1000.0, " us; AUC ", auc);
  std::cout << figures << "\n";
  EXPECT_GT(auc, 0.25) << figures;
  EXPECT_LT(auc, 0.75) << figures;
}

INSTANTIATE_TEST_SUITE_P(Policies, TimingChannelTest,
                         ::testing::Values("policy/configs/android-strict.textproto",
                                           "policy/configs/android.textproto"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.index == 0 ? "Strict" : "Listing");
                         });

// Under listing visibility these names are found; strict visibility hides them.
class StrictTimingChannelTest : public MountTest {
 protected:
  DaemonOptions Options() const override {
    DaemonOptions options;
    options.policy = "policy/configs/android-strict.textproto";
    options.control_socket = true;
    return options;
  }
  // The RELEASE requests the daemon served (its per-opcode counts, scopedfsctl stats --json).
  absl::StatusOr<int64_t> Releases() {
    absl::StatusOr<std::string> json = storage_.Ctl({"stats", "--json"});
    if (!json.ok()) return json.status();
    static const std::string kKey = "\"name\":\"RELEASE\",\"requests\":";
    size_t at = json->find(kKey);
    if (at == std::string::npos) return 0;
    absl::string_view rest = absl::string_view(*json).substr(at + kKey.size());
    int64_t n;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find_first_of(",}")), &n)) {
      return absl::DataLossError("unreadable RELEASE count");
    }
    return n;
  }
};

// Under strict visibility another app's file is hidden: its size must not show in the time of
// the ENOENT (no location scan before the name is found).
TEST_F(StrictTimingChannelTest, AHiddenFilesSizeDoesNotShow) {
  // Each file's first stat, where a scan would be taken: 30 files of 10 kB and 30 of 1 MB.
  constexpr int kFiles = 30;
  std::vector<std::string> small, large;
  for (int i = 0; i < kFiles; ++i) {
    small.push_back(absl::StrCat("Download/small-", i, ".bin"));
    large.push_back(absl::StrCat("Download/large-", i, ".bin"));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(small.back(), Pattern(10 << 10, i), kCamera));
    SCOPEDFS_ASSERT_OK(storage_.WriteLower(large.back(), Pattern(1 << 20, i), kCamera));
  }
  ExpectIndistinguishable(As(kMusic), small, large, 1);
}

// Under strict visibility another app's file is hidden, and once its facts are cached (its owner
// has looked at it; the attacker's own first stat caches them too) its ENOENT must cost what a
// missing name's does in the same directory, under the name's own spelling and under another.
// (On the tmpfs lower the suite mounts; an ext4 lower's failed lookups cost less than its
// successful ones, about 1 µs here: docs/security.md.)
TEST_F(StrictTimingChannelTest, HiddenAndMissingNamesCostTheSame) {
  SCOPEDFS_ASSERT_OK(storage_.WriteLower("Download/notes-2024.bin", Pattern(64 << 10, 3), kCamera));
  ASSERT_TRUE(Succeeds(As(kCamera).Stat("Download/notes-2024.bin")));
  ExpectIndistinguishable(As(kMusic), "Download/notes-2024.bin", "Download/notes-2025.bin");
  ExpectIndistinguishable(As(kMusic), "Download/Notes-2024.BIN", "Download/Notes-2025.BIN");
}

// A file its owner wrote through the mount: another app's first stat of it (its facts not yet
// looked at by anyone but the writer's close) must cost what a missing name's does. The daemon
// reads the head a lookup needs at the writer's RELEASE, writes a facts record and the audit line
// after its reply, not on the other app's way to its ENOENT. The stats spell the names in
// another case: the kernel still holds the writer's positive dentry of the name as spelled, and
// revalidating it costs a second LOOKUP before the ENOENT, which the daemon cannot spare
// (docs/security.md).
TEST_F(StrictTimingChannelTest, AHiddenFilesFirstStatCostsWhatAMissingNamesDoes) {
  constexpr int kFiles = 40;
  std::vector<std::string> written, missing;
  absl::StatusOr<int64_t> releases = Releases();
  ASSERT_TRUE(releases.ok()) << releases.status();
  for (int i = 0; i < kFiles; ++i) {
    std::string name = absl::StrCat("Download/report-", i, ".bin");
    ASSERT_TRUE(Succeeds(As(kCamera).Create(name, Pattern(64 << 10, i))));
    written.push_back(absl::StrCat("Download/REPORT-", i, ".BIN"));
    missing.push_back(absl::StrCat("Download/ABSENT-", i, ".BIN"));
  }
  // The kernel sends RELEASE after close returns: wait until the daemon has served every one.
  for (int round = 0; round < 500; ++round) {
    absl::StatusOr<int64_t> now = Releases();
    ASSERT_TRUE(now.ok()) << now.status();
    if (*now - *releases >= kFiles) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_GE(Releases().value_or(0) - *releases, kFiles) << "RELEASEs the daemon served";
  ExpectIndistinguishable(As(kMusic), written, missing, 1);
}

}  // namespace
}  // namespace scopedfs::tests
