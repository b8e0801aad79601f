// Stats: nearest-rank percentiles over the log2 buckets (known samples, empty, one sample, bucket
// edges), counts under concurrent Records, and the copy into the control protocol's message.
#include "daemon/observe/stats.h"

#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/control.pb.h"

namespace scopedfs::daemon {
namespace {

void RecordN(Stats& stats, OpKind kind, uint64_t nanos, int n) {
  for (int i = 0; i < n; ++i) stats.Record(kind, nanos);
}

TEST(StatsPercentileTest, EmptyIsZero) {
  Stats stats;
  EXPECT_EQ(stats.Count(OpKind::kLookup), 0u);
  EXPECT_EQ(stats.Percentile(OpKind::kLookup, 0.50), 0u);
  EXPECT_EQ(stats.Percentile(OpKind::kLookup, 0.99), 0u);
}

TEST(StatsPercentileTest, OneSampleIsEveryPercentile) {
  Stats stats;
  stats.Record(OpKind::kOpen, 1000);  // bucket [512, 1024)
  EXPECT_EQ(stats.Percentile(OpKind::kOpen, 0.0), 1024u);
  EXPECT_EQ(stats.Percentile(OpKind::kOpen, 0.50), 1024u);
  EXPECT_EQ(stats.Percentile(OpKind::kOpen, 0.99), 1024u);
  EXPECT_EQ(stats.Percentile(OpKind::kOpen, 1.0), 1024u);
}

// 100 samples in four buckets: 50 at 100 ns, 40 at 1 us, 9 at 10 us, 1 at 1 ms.
TEST(StatsPercentileTest, KnownSamples) {
  Stats stats;
  RecordN(stats, OpKind::kRead, 100, 50);     // [64, 128)
  RecordN(stats, OpKind::kRead, 1000, 40);    // [512, 1024)
  RecordN(stats, OpKind::kRead, 10000, 9);    // [8192, 16384)
  RecordN(stats, OpKind::kRead, 1000000, 1);  // [524288, 1048576)
  EXPECT_EQ(stats.Count(OpKind::kRead), 100u);
  EXPECT_EQ(stats.Percentile(OpKind::kRead, 0.50), 128u);   // 50th sample
  EXPECT_EQ(stats.Percentile(OpKind::kRead, 0.51), 1024u);  // 51st
  EXPECT_EQ(stats.Percentile(OpKind::kRead, 0.90), 1024u);  // 90th
  EXPECT_EQ(stats.Percentile(OpKind::kRead, 0.99), 16384u);
  EXPECT_EQ(stats.Percentile(OpKind::kRead, 1.0), 1048576u);  // the slowest one
}

TEST(StatsPercentileTest, FractionsOutsideZeroToOneAreClamped) {
  Stats stats;
  stats.Record(OpKind::kRead, 100);
  stats.Record(OpKind::kRead, 10000);
  EXPECT_EQ(stats.Percentile(OpKind::kRead, -1.0), 128u);
  EXPECT_EQ(stats.Percentile(OpKind::kRead, 2.0), 16384u);
  EXPECT_EQ(stats.Percentile(OpKind::kRead, std::numeric_limits<double>::quiet_NaN()), 128u);
}

TEST(StatsPercentileTest, BucketEdges) {
  auto p50_of = [](uint64_t nanos) {
    Stats stats;
    stats.Record(OpKind::kOther, nanos);
    return stats.Percentile(OpKind::kOther, 0.5);
  };
  EXPECT_EQ(p50_of(0), 2u);
  EXPECT_EQ(p50_of(1), 2u);
  EXPECT_EQ(p50_of(2), 4u);
  EXPECT_EQ(p50_of(1023), 1024u);
  EXPECT_EQ(p50_of(1024), 2048u);
  // Everything from 2^39 ns (about 9 minutes) on shares the last bucket.
  EXPECT_EQ(p50_of(std::numeric_limits<uint64_t>::max()), uint64_t{1} << 40);
}

TEST(StatsPercentileTest, KindsAreSeparate) {
  Stats stats;
  stats.Record(OpKind::kLookup, 100);
  stats.Record(OpKind::kWrite, 100000);
  EXPECT_EQ(stats.Count(OpKind::kLookup), 1u);
  EXPECT_EQ(stats.Count(OpKind::kWrite), 1u);
  EXPECT_EQ(stats.Percentile(OpKind::kLookup, 0.5), 128u);
  EXPECT_EQ(stats.Percentile(OpKind::kWrite, 0.5), 131072u);
}

// FUSE worker threads record at once: no update may be lost.
TEST(StatsConcurrencyTest, ConcurrentRecordsAreAllCounted) {
  Stats stats;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&stats, t] {
      for (int i = 0; i < kPerThread; ++i) {
        // Thread 0 records the slow samples: 1 in 4 of all samples.
        stats.Record(OpKind::kRead, t == 0 ? 10000 : 100);
        stats.read_requests.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(stats.Count(OpKind::kRead), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(stats.read_requests.load(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(stats.Percentile(OpKind::kRead, 0.75), 128u);
  EXPECT_EQ(stats.Percentile(OpKind::kRead, 0.76), 16384u);
}

TEST(StatsToProtoTest, CopiesCountersAndEveryOp) {
  Stats stats;
  stats.open_passthrough = 17;
  stats.location_malformed = 3;
  stats.reloads = 2;
  stats.Record(OpKind::kLookup, 100);
  scopedfs::Stats out;
  stats.ToProto(&out);
  EXPECT_EQ(out.open_passthrough(), 17);
  EXPECT_EQ(out.location_malformed(), 3);
  EXPECT_EQ(out.reloads(), 2);
  EXPECT_EQ(out.open_denied(), 0);
  ASSERT_EQ(out.ops_size(), static_cast<int>(OpKind::kCount));
  EXPECT_EQ(out.ops(0).op(), "lookup");
  EXPECT_EQ(out.ops(0).count(), 1);
  EXPECT_EQ(out.ops(0).p50_ns(), 128);
  EXPECT_EQ(out.ops(static_cast<int>(OpKind::kOther)).op(), "other");
  stats.ToProto(&out);  // refilling replaces the op table instead of appending to it
  EXPECT_EQ(out.ops_size(), static_cast<int>(OpKind::kCount));
}

// What `scopedfsctl stats --json` prints: numbers as JSON numbers (proto3 JSON would quote a
// uint64), and a policy name with a quote and a non-ASCII letter as a JSON string that reads back.
TEST(StatsToProtoTest, JsonHasNumbersAndAnEscapedName) {
  Stats stats;
  stats.open_passthrough = 17;
  stats.read_requests = uint64_t{1} << 40;
  scopedfs::Stats out;
  stats.ToProto(&out);
  out.set_policy("it's \"café\"\n");
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(out, &json, options).ok());
  EXPECT_NE(json.find("\"open_passthrough\":17,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"read_requests\":1099511627776,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"open_denied\":0,"), std::string::npos) << json;
  scopedfs::Stats back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok()) << json;
  EXPECT_EQ(back.policy(), "it's \"café\"\n");
  EXPECT_EQ(back.read_requests(), static_cast<double>(uint64_t{1} << 40));
}

}  // namespace
}  // namespace scopedfs::daemon
