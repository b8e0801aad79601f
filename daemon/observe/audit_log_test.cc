// The audit line format (fields, escaping of hostile names) and the rate limit (burst, refill,
// the dropped-lines count), with an injected clock and sink: no syslog, no sleeping.
#include "daemon/observe/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

AuditEvent Denied(absl::string_view path) {
  AuditEvent e;
  e.op = OP_READ;
  e.uid = 10057;
  e.pid = 42;
  e.package = "com.example.chat";
  e.path = path;
  e.rule = "media-images";
  e.err = ENOENT;
  return e;
}

TEST(AuditLine, DenialHasTheSelinuxLikeShape) {
  media::ContentFacts facts;
  facts.media_class = MEDIA_CLASS_IMAGE;
  facts.location = media::LocationPresence::kPresent;
  AuditEvent e = Denied("DCIM/a.jpg");
  e.content = &facts;
  e.owner = 10065;
  EXPECT_EQ(FormatAuditLine(e),
            "scopedfs: denied { read } uid=10057 pid=42 pkg=com.example.chat path=\"DCIM/a.jpg\" "
            "tclass=file media=image location=present owner=10065 rule=\"media-images\" "
            "errno=ENOENT");
}

TEST(AuditLine, RedactedOpenNamesWhatWasFilled) {
  AuditEvent e = Denied("DCIM/a.jpg");
  e.redacted = true;
  e.redact = (1u << REDACTION_EXIF_GPS) | (1u << REDACTION_XMP_GPS);
  EXPECT_EQ(FormatAuditLine(e),
            "scopedfs: redacted { read } uid=10057 pid=42 pkg=com.example.chat "
            "path=\"DCIM/a.jpg\" tclass=file owner=none rule=\"media-images\" "
            "redact=EXIF_GPS,XMP_GPS");
}

TEST(AuditLine, UnknownCallerAndDefaultAction) {
  AuditEvent e = Denied("Documents");
  e.package = "";
  e.rule = "";
  e.directory = true;
  e.err = EACCES;
  EXPECT_EQ(FormatAuditLine(e),
            "scopedfs: denied { read } uid=10057 pid=42 pkg=- path=\"Documents\" tclass=dir "
            "owner=none rule=\"(default action)\" errno=EACCES");
}

TEST(AuditLine, HostileNamesCannotForgeALineOrCloseTheQuotes) {
  std::string hostile = "a\"\nscopedfs: denied { read } uid=0 path=\"x\\\x1b[2J\x7f\xc3\xa9";
  std::string line = FormatAuditLine(Denied(hostile));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
  // Exactly the two quotes of path= and the two of rule= remain.
  EXPECT_EQ(std::count(line.begin(), line.end(), '"'), 4) << line;
  EXPECT_TRUE(absl::StrContains(line,
                                "path=\"a\\x22\\x0ascopedfs: denied { read } uid=0 "
                                "path=\\x22x\\x5c\\x1b[2J\\x7f\\xc3\\xa9\""))
      << line;
  // Only one "scopedfs: " begins a line: the forged one is inside the quoted value.
  EXPECT_TRUE(absl::StartsWith(line, "scopedfs: denied { read } uid=10057 "));
}

TEST(AuditLine, ErrnoNames) {
  EXPECT_EQ(AuditErrnoName(EPERM), "EPERM");
  EXPECT_EQ(AuditErrnoName(EXDEV), "EXDEV");
  EXPECT_EQ(AuditErrnoName(EIO), std::to_string(EIO));
}

TEST(TokenBucket, BurstThenRate) {
  TokenBucket bucket(3, 2);
  absl::Time t = absl::UnixEpoch();
  EXPECT_TRUE(bucket.Take(t));
  EXPECT_TRUE(bucket.Take(t));
  EXPECT_TRUE(bucket.Take(t));
  EXPECT_FALSE(bucket.Take(t));
  EXPECT_FALSE(bucket.Take(t + absl::Milliseconds(400)));  // 0.8 of a token
  EXPECT_TRUE(bucket.Take(t + absl::Milliseconds(500)));   // 1.0
  EXPECT_FALSE(bucket.Take(t + absl::Milliseconds(500)));
  // A long quiet period refills to the burst, not beyond.
  absl::Time later = t + absl::Hours(1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bucket.Take(later));
  EXPECT_FALSE(bucket.Take(later));
}

TEST(TokenBucket, AClockGoingBackwardsGrantsNothing) {
  TokenBucket bucket(1, 1);
  absl::Time t = absl::UnixEpoch() + absl::Seconds(10);
  EXPECT_TRUE(bucket.Take(t));
  EXPECT_FALSE(bucket.Take(t - absl::Seconds(5)));
  EXPECT_FALSE(bucket.Take(t));
}

class AuditLogTest : public ::testing::Test {
 protected:
  AuditLog::Options Options(double burst, double rate) {
    AuditLog::Options o;
    o.burst = burst;
    o.rate_per_second = rate;
    o.write_for_test = [this](absl::string_view line) { lines_.emplace_back(line); };
    o.clock_for_test = [this] { return now_; };
    return o;
  }
  std::vector<std::string> lines_;
  absl::Time now_ = absl::UnixEpoch();
};

TEST_F(AuditLogTest, ALoopingAppIsLimitedAndTheDropsAreCounted) {
  {
    AuditLog log(Options(100, 20));
    for (int i = 0; i < 1000; ++i) log.Record(Denied("Pictures/secret.jpg"));
    EXPECT_EQ(log.written(), 100u);
    EXPECT_EQ(log.dropped(), 900u);
    ASSERT_EQ(lines_.size(), 100u);
    // One second later 20 more lines may go; the first says how many were dropped.
    now_ += absl::Seconds(1);
    log.Record(Denied("Pictures/secret.jpg"));
    ASSERT_EQ(lines_.size(), 102u);
    EXPECT_EQ(lines_[100], "scopedfs: audit: 900 lines dropped (rate limit: burst 100, 20/s)");
    EXPECT_TRUE(absl::StartsWith(lines_[101], "scopedfs: denied { read }"));
    for (int i = 0; i < 30; ++i) log.Record(Denied("Pictures/secret.jpg"));
    EXPECT_EQ(log.written(), 101u + 19u);
  }
  // Closing the log reports the drops still unreported.
  EXPECT_EQ(lines_.back(), "scopedfs: audit: 11 lines dropped (rate limit: burst 100, 20/s)");
}

TEST_F(AuditLogTest, NoDropsNoDropLine) {
  {
    AuditLog log(Options(5, 1));
    for (int i = 0; i < 5; ++i) log.Record(Denied("a"));
  }
  EXPECT_EQ(lines_.size(), 5u);
  for (const std::string& line : lines_) EXPECT_FALSE(absl::StrContains(line, "dropped"));
}

TEST(AuditLogSink, Parse) {
  EXPECT_EQ(*AuditLog::ParseSink("stderr"), AuditLog::Sink::kStderr);
  EXPECT_EQ(*AuditLog::ParseSink("syslog"), AuditLog::Sink::kSyslog);
  EXPECT_EQ(*AuditLog::ParseSink("none"), AuditLog::Sink::kNone);
  EXPECT_EQ(AuditLog::ParseSink("journal").status().code(), absl::StatusCode::kInvalidArgument);
  AuditLog::Options none;
  none.sink = AuditLog::Sink::kNone;
  EXPECT_FALSE(AuditLog(none).enabled());
}

// The stderr sink is written by the log's own thread: a refusal returns while stderr cannot take a
// byte (a pipe nobody reads), and every line reaches it, in order, once it can.
TEST(AuditLogSink, ARefusalNeverWaitsForTheSink) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  // Fill the pipe, so that a write to it blocks.
  int flags = fcntl(pipe_fds[1], F_GETFL);
  ASSERT_EQ(fcntl(pipe_fds[1], F_SETFL, flags | O_NONBLOCK), 0);
  std::string block(4096, 'x');
  size_t filled = 0;
  for (;;) {
    ssize_t n = write(pipe_fds[1], block.data(), block.size());
    if (n <= 0) break;
    filled += static_cast<size_t>(n);
  }
  ASSERT_EQ(fcntl(pipe_fds[1], F_SETFL, flags), 0);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(dup2(pipe_fds[1], STDERR_FILENO), STDERR_FILENO);
  std::string got;
  {
    AuditLog::Options options;
    options.sink = AuditLog::Sink::kStderr;
    AuditLog log(options);
    absl::Time start = absl::Now();
    for (int i = 0; i < 5; ++i) log.Record(Denied(absl::StrCat("Pictures/", i, ".jpg")));
    absl::Duration took = absl::Now() - start;
    EXPECT_EQ(log.written(), 5u);
    // Blocked forever had the refusals written themselves; a loaded machine takes milliseconds.
    EXPECT_LT(took, absl::Seconds(5)) << "a refusal waited for the sink";
    // Drain the pipe until every line is through (the log's close waits for its writer).
    std::thread reader([&] {
      char buf[4096];
      size_t skipped = 0;
      for (;;) {
        ssize_t n = read(pipe_fds[0], buf, sizeof(buf));
        if (n <= 0) break;
        size_t from = 0;
        if (skipped < filled) {
          from = std::min(static_cast<size_t>(n), filled - skipped);
          skipped += from;
        }
        got.append(buf + from, static_cast<size_t>(n) - from);
        if (std::count(got.begin(), got.end(), '\n') >= 5) break;
      }
    });
    log.Flush();
    reader.join();
  }
  fflush(stderr);
  ASSERT_EQ(dup2(saved, STDERR_FILENO), STDERR_FILENO);
  close(saved);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  std::vector<std::string> lines = absl::StrSplit(got, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << got;
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(absl::StrContains(lines[i], absl::StrCat("path=\"Pictures/", i, ".jpg\"")))
        << lines[i];
  }
}

}  // namespace
}  // namespace scopedfs::daemon
