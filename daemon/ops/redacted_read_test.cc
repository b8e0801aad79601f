// The facts cache and the redacted read path on temp files (no mount): a redacted read of a real
// geotagged photo is the original with exactly the parsers' ranges filled, at every offset; a
// rewrite is judged afresh; a file that cannot be vouched for is filled; the cache scans once per
// version and forgets on invalidation.
#include "daemon/ops/redacted_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "daemon/judge/facts_cache.h"
#include "daemon/judge/facts_record.h"
#include "daemon/tables/object_id.h"
#include "gtest/gtest.h"
#include "media/content_facts.h"
#include "media/location/location.h"

namespace scopedfs::daemon {
namespace {

std::string ReadSample(const std::string& name) {
  std::ifstream in("tests/media/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

// The original with every location range the parsers find filled.
std::string Expected(const std::string& bytes) {
  absl::Span<const uint8_t> span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  media::MediaFormat format = media::SniffFormat(span.subspan(0, media::kSniffBytes));
  media::MemorySource source(span);
  media::LocationScan scan = media::ScanLocation(format, source);
  uint32_t all = media::kAllLocationKinds;
  std::string out = bytes;
  media::ApplyFills(media::PlanFills(scan.ranges, all), 0,
                    absl::MakeSpan(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  return out;
}

class RedactedReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/redacted_read_test_" + std::to_string(getpid());
    Write(ReadSample("gps.jpg"));
    node_fd_ = open(path_.c_str(), O_PATH | O_CLOEXEC);
    fd_ = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(node_fd_, 0);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    close(fd_);
    close(node_fd_);
    unlink(path_.c_str());
  }
  void Write(const std::string& bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  // Everything, read in windows of `window` bytes.
  std::string ReadAll(size_t window) {
    std::string out;
    std::string buf(window, '\0');
    for (off_t off = 0;; off += static_cast<off_t>(window)) {
      size_t got = 0;
      EXPECT_EQ(ReadRedacted(plans_, fd_, kApp, &plan_, window, off, buf.data(), &got), 0);
      out.append(buf.data(), got);
      if (got < window) break;
    }
    return out;
  }

  static constexpr uid_t kApp = 10062;
  Stats stats_;
  FactsCache facts_{&stats_};
  AppBudget budget_{AppBudget::ForFdLimit(1024)};
  PlanTable plans_{&facts_, &budget_};
  RedactionPlan plan_;
  std::string path_;
  int node_fd_ = -1;
  int fd_ = -1;
};

TEST_F(RedactedReadTest, FillsExactlyTheParsersRangesAtAnyWindow) {
  std::string original = ReadSample("gps.jpg");
  std::string expected = Expected(original);
  ASSERT_NE(expected, original) << "the sample carries location";
  for (size_t window : {1u, 7u, 100u, 4096u, 1u << 20}) {
    SCOPED_TRACE(window);
    EXPECT_EQ(ReadAll(window), expected);
  }
  EXPECT_EQ(stats_.location_scans.load(), 1u) << "one scan for one version";
}

TEST_F(RedactedReadTest, ARewriteIsJudgedAfresh) {
  EXPECT_EQ(ReadAll(4096), Expected(ReadSample("gps.jpg")));
  std::string clean = ReadSample("clean.jpg");
  Write(clean);
  EXPECT_EQ(ReadAll(4096), clean);
  std::string le = ReadSample("gps_le.jpg");
  Write(le);
  EXPECT_EQ(ReadAll(4096), Expected(le));
}

TEST_F(RedactedReadTest, AFileThatCannotBeVouchedForIsFilled) {
  std::string cut = ReadSample("gps.jpg").substr(0, 200);  // ends inside the Exif segment
  Write(cut);
  std::string got = ReadAll(4096);
  ASSERT_EQ(got.size(), cut.size());
  EXPECT_NE(got, cut);
  EXPECT_EQ(got.substr(0, 2), cut.substr(0, 2)) << "the JPEG marker itself is no location";
}

TEST_F(RedactedReadTest, NonCarriersAreServedAsTheyAre) {
  std::string pdf = "%PDF-1.7\n" + std::string(5000, 'x');
  Write(pdf);
  EXPECT_EQ(ReadAll(4096), pdf);
}

// Two handles reading one version share one plan, charged once to the app that made it, and
// given back when the last handle lets go; a rewrite gets a plan of its own.
TEST_F(RedactedReadTest, HandlesOfOneVersionShareOnePlan) {
  int fd2 = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd2, 0);
  {
    RedactionPlan a, b;
    struct stat st;
    ASSERT_EQ(fstat(fd_, &st), 0);
    FillPlan pa, pb;
    ASSERT_EQ(a.For(plans_, fd_, kApp, &st, &pa), 0);
    ASSERT_EQ(b.For(plans_, fd2, 10063u, &st, &pb), 0);
    EXPECT_EQ(pa.get(), pb.get()) << "one copy per version, not per handle";
    EXPECT_FALSE(pa->empty());
    EXPECT_EQ(plans_.size(), 1u);
    EXPECT_GT(budget_.held(AppBudget::kBytes, kApp), 0u) << "charged to the app that made it";
    EXPECT_EQ(budget_.held(AppBudget::kBytes, 10063u), 0u);
    pa.reset();
    pb.reset();
    EXPECT_EQ(plans_.size(), 1u) << "the handles still hold it";
  }
  EXPECT_EQ(plans_.size(), 0u);
  EXPECT_EQ(budget_.held(AppBudget::kBytes), 0u);
  close(fd2);
}

// A handle that knows its object (an open through a node: OpenFile) finds the plan under the same
// key as one that reads the object from its fd, and after a rewrite, which the stat after its read
// shows, reads the new version with a new plan.
TEST_F(RedactedReadTest, AHandleThatKnowsItsObjectSharesThePlanAndSeesARewrite) {
  struct stat st;
  ASSERT_EQ(fstat(fd_, &st), 0);
  RedactionPlan known(ObjectIdOf(fd_, st));
  FillPlan from_fd, from_node;
  ASSERT_EQ(plan_.For(plans_, fd_, kApp, &st, &from_fd), 0);
  ASSERT_EQ(known.For(plans_, fd_, kApp, &st, &from_node), 0);
  EXPECT_EQ(from_fd.get(), from_node.get());
  std::string le = ReadSample("gps_le.jpg");
  for (const std::string& bytes : {ReadSample("gps.jpg"), ReadSample("clean.jpg"), le}) {
    Write(bytes);
    std::string got(bytes.size() + 10, '\0');
    size_t n = 0;
    ASSERT_EQ(ReadRedacted(plans_, fd_, kApp, &known, got.size(), 0, got.data(), &n), 0);
    EXPECT_EQ(got.substr(0, n), Expected(bytes));
  }
}

// Past its memory budget, an app's read that needs a new plan is refused (ENOMEM); another app
// is not affected.
TEST_F(RedactedReadTest, APlanPastTheAppsBudgetIsRefused) {
  ASSERT_TRUE(budget_.Take(AppBudget::kBytes, kApp, budget_.limits().bytes.per_app));
  RedactionPlan plan;
  struct stat st;
  ASSERT_EQ(fstat(fd_, &st), 0);
  FillPlan fills;
  EXPECT_EQ(plan.For(plans_, fd_, kApp, &st, &fills), ENOMEM);
  EXPECT_EQ(plan.For(plans_, fd_, 10063u, &st, &fills), 0);
  budget_.Release(AppBudget::kBytes, kApp, budget_.limits().bytes.per_app);
}

// At a time the test gives (UntilSettledAt), not the clock's: no window to hit.
TEST(UntilSettledTest, AFreshChangeWaitsAboutATickAnOldOneNot) {
  struct stat st = {};
  const absl::Time changed = absl::FromUnixSeconds(1700000000) + absl::Nanoseconds(123457);
  st.st_ctim = st.st_mtim = absl::ToTimespec(changed);  // nanosecond timestamps
  absl::Duration fresh = UntilSettledAt(st, changed);
  EXPECT_GT(fresh, absl::ZeroDuration());
  EXPECT_LT(fresh, absl::Milliseconds(100));
  // The wait counts down with the clock, and ends at the tick's end.
  EXPECT_EQ(UntilSettledAt(st, changed + fresh / 2), fresh - fresh / 2);
  EXPECT_EQ(UntilSettledAt(st, changed + fresh), absl::ZeroDuration());
  EXPECT_EQ(UntilSettledAt(st, changed + absl::Seconds(10)), absl::ZeroDuration());
  // One-second timestamps: a whole second more.
  st.st_ctim.tv_nsec = st.st_mtim.tv_nsec = 0;
  const absl::Time second = absl::FromUnixSeconds(1700000000);
  EXPECT_EQ(UntilSettledAt(st, second), fresh + absl::Seconds(1));
  EXPECT_EQ(UntilSettledAt(st, second + absl::Seconds(1) + fresh), absl::ZeroDuration());
  // A ctime in the future (a clock set back) is waited for no longer than the cap.
  EXPECT_EQ(UntilSettledAt(st, second - absl::Hours(1)), absl::Seconds(2));
}

TEST(FactsCacheTest, ScansOncePerVersionAndForgetsOnInvalidation) {
  std::string path = ::testing::TempDir() + "/facts_cache_test_" + std::to_string(getpid());
  {
    std::ofstream out(path, std::ios::binary);
    out << ReadSample("gps.jpg");
  }
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  absl::SleepFor(UntilSettled(st));  // a version that has not settled is not cached
  Stats stats;
  FactsCache cache(&stats);
  cache.set_records(false);  // the cache alone: records are FactsRecordsStandForTheBytes's
  FileInfo a = cache.Lookup(fd, st, "a.jpg");
  FileInfo b = cache.Lookup(fd, st, "b.txt");
  EXPECT_EQ(stats.location_scans.load(), 1u);
  EXPECT_EQ(stats.location_found.load(), 1u);
  EXPECT_EQ(a.facts.media_class, MEDIA_CLASS_IMAGE);
  EXPECT_EQ(b.facts.media_class, MEDIA_CLASS_NONE) << "the class is judged under each name";
  EXPECT_EQ(b.facts.location, media::LocationPresence::kPresent) << "the bytes' location stays";
  cache.Invalidate(ObjectIdOf(fd, st));
  cache.Lookup(fd, st, "a.jpg");
  EXPECT_EQ(stats.location_scans.load(), 2u);
  EXPECT_EQ(cache.size(), 1u);
  close(fd);
  unlink(path.c_str());
}

// A new cache (a restarted daemon) takes the facts a first one recorded on the file instead of
// reading it, while the file's version matches; a change of the bytes (size) is read again.
TEST(FactsCacheTest, FactsRecordsStandForTheBytes) {
  std::string path = ::testing::TempDir() + "/facts_record_test_" + std::to_string(getpid());
  std::string photo = ReadSample("gps.jpg");
  {
    std::ofstream out(path, std::ios::binary);
    out << photo;
  }
  // Records are trusted.* attributes: whether this filesystem keeps them for this process is
  // asked first, so that a record not written for any other reason fails the test.
  if (setxattr(path.c_str(), "trusted.scopedfs.probe", "1", 1, 0) != 0) {
    int err = errno;
    unlink(path.c_str());
    GTEST_SKIP() << "no trusted.* attributes here (needs root and a filesystem that keeps them): "
                 << strerror(err);
  }
  ASSERT_EQ(removexattr(path.c_str(), "trusted.scopedfs.probe"), 0) << strerror(errno);
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  // Settled, and old enough to be recorded at once (a younger version's record waits).
  absl::SleepFor(std::max(UntilSettled(st),
                          absl::TimeFromTimespec(st.st_ctim) + kRecordQuietAge - absl::Now()));
  if (!StampsEveryChange(fd, st)) {
    close(fd);
    unlink(path.c_str());
    GTEST_SKIP() << "records are kept only where every change stamps a later ctime";
  }
  Stats first_stats;
  {
    FactsCache first(&first_stats);
    FileInfo info = first.Lookup(fd, st, "a.jpg");
    EXPECT_EQ(info.facts.location, media::LocationPresence::kPresent);
    first.DrainRecords();  // written on the record writer's thread; a cache's end drops the rest
  }
  EXPECT_EQ(first_stats.location_scans.load(), 1u);
  ASSERT_EQ(first_stats.facts_records_written.load(), 1u);
  ASSERT_EQ(fstat(fd, &st), 0) << "the record's write moved the ctime";
  Stats second_stats;
  FactsCache second(&second_stats);
  FileInfo info = second.Lookup(fd, st, "a.jpg");
  EXPECT_EQ(second_stats.location_scans.load(), 0u);
  EXPECT_EQ(second_stats.content_reads.load(), 0u);
  EXPECT_EQ(second_stats.facts_from_records.load(), 1u);
  EXPECT_EQ(info.facts.media_class, MEDIA_CLASS_IMAGE);
  EXPECT_EQ(info.facts.location, media::LocationPresence::kPresent);
  ASSERT_NE(info.scan, nullptr);
  EXPECT_FALSE(info.scan->ranges.empty());
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << "x";
  }
  ASSERT_EQ(fstat(fd, &st), 0);
  absl::SleepFor(UntilSettled(st));
  Stats third_stats;
  FactsCache third(&third_stats);
  third.Lookup(fd, st, "a.jpg");
  EXPECT_EQ(third_stats.facts_records_stale.load(), 1u);
  EXPECT_EQ(third_stats.location_scans.load(), 1u);
  close(fd);
  unlink(path.c_str());
}

// What a policy never looks at is never read: no scan and no owner attribute without the needs;
// the owner is the file's uid under POSIX; a later caller that needs content gets it scanned.
TEST(FactsCacheTest, ReadsOnlyWhatIsNeeded) {
  std::string path = ::testing::TempDir() + "/facts_needs_test_" + std::to_string(getpid());
  {
    std::ofstream out(path, std::ios::binary);
    out << ReadSample("gps.jpg");
  }
  if (setxattr(path.c_str(), kOwnerXattr, "10065", 5, 0) != 0) {
    int err = errno;
    unlink(path.c_str());
    GTEST_SKIP() << "cannot set " << kOwnerXattr << " here (needs root and a filesystem with "
                 << "trusted.* attributes): " << strerror(err);
  }
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  absl::SleepFor(UntilSettled(st));  // a version that has not settled is not cached
  Stats stats;
  FactsCache cache(&stats);
  FileInfo none = cache.Lookup(fd, st, "a.jpg", FactNeeds{false, false, false});
  EXPECT_EQ(stats.location_scans.load(), 0u);
  EXPECT_FALSE(none.owner.has_value());
  EXPECT_FALSE(none.content_read);
  EXPECT_EQ(none.facts.media_class,
            media::FactsFromFormat("a.jpg", media::MediaFormat::kUnknown).media_class)
      << "what the name alone vouches for, as for content that was not read";
  FileInfo posix = cache.Lookup(fd, st, "a.jpg", FactNeeds{true, false, true});
  EXPECT_EQ(posix.owner, std::optional<uint32_t>(st.st_uid));
  EXPECT_EQ(stats.location_scans.load(), 0u);
  FileInfo owner_only = cache.Lookup(fd, st, "a.jpg", FactNeeds{true, false, false});
  EXPECT_EQ(owner_only.owner, std::optional<uint32_t>(10065));
  EXPECT_EQ(stats.location_scans.load(), 0u);
  FileInfo all = cache.Lookup(fd, st, "a.jpg");
  EXPECT_EQ(stats.location_scans.load(), 1u);
  EXPECT_TRUE(all.content_read);
  EXPECT_EQ(all.facts.location, media::LocationPresence::kPresent);
  EXPECT_EQ(all.owner, std::optional<uint32_t>(10065)) << "kept from the owner-only lookup";
  close(fd);
  unlink(path.c_str());
}

}  // namespace
}  // namespace scopedfs::daemon
