// Facts records: what is written reads back the same, every malformed byte string is refused,
// and a record holds only for the version it names, its ctime within the bound.
#include "daemon/judge/facts_record.h"

#include <sys/stat.h>

#include <string>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

FactsRecord Sample() {
  FactsRecord r;
  r.ino = 1234;
  r.generation = 0x1122334455667788;
  r.size = 5000;
  r.mtime_ns = 1700000000123456789;
  r.ctime_bound_ns = 1700000001000000000;
  r.format = media::MediaFormat::kJpeg;
  auto scan = std::make_shared<media::LocationScan>();
  scan->ranges = {{100, 200, REDACTION_EXIF_GPS},
                  {150, 180, REDACTION_XMP_GPS},
                  {300, 400, REDACTION_EXIF_GPS}};
  scan->content_class = MEDIA_CLASS_IMAGE;
  r.scan = scan;
  return r;
}

struct stat StatOf(const FactsRecord& r, int64_t ctime_ns) {
  struct stat st = {};
  st.st_mode = S_IFREG | 0644;
  st.st_ino = r.ino;
  st.st_size = r.size;
  st.st_mtim = {r.mtime_ns / 1000000000, r.mtime_ns % 1000000000};
  st.st_ctim = {ctime_ns / 1000000000, ctime_ns % 1000000000};
  return st;
}

TEST(FactsRecordTest, RoundTrips) {
  FactsRecord r = Sample();
  absl::StatusOr<FactsRecord> back = DecodeFactsRecord(EncodeFactsRecord(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ino, r.ino);
  EXPECT_EQ(back->generation, r.generation);
  EXPECT_EQ(back->size, r.size);
  EXPECT_EQ(back->mtime_ns, r.mtime_ns);
  EXPECT_EQ(back->ctime_bound_ns, r.ctime_bound_ns);
  EXPECT_EQ(back->format, r.format);
  ASSERT_NE(back->scan, nullptr);
  EXPECT_EQ(back->scan->ranges, r.scan->ranges);
  EXPECT_EQ(back->scan->content_class, MEDIA_CLASS_IMAGE);
  EXPECT_FALSE(back->scan->malformed);
}

TEST(FactsRecordTest, AFormatAloneHasNoScan) {
  FactsRecord r = Sample();
  r.scan = nullptr;
  absl::StatusOr<FactsRecord> back = DecodeFactsRecord(EncodeFactsRecord(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->format, media::MediaFormat::kJpeg);
  EXPECT_EQ(back->scan, nullptr);
}

TEST(FactsRecordTest, WhatCannotBeVouchedForIsNotRecorded) {
  FactsRecord r = Sample();
  auto malformed = std::make_shared<media::LocationScan>(*r.scan);
  malformed->malformed = true;
  r.scan = malformed;
  EXPECT_EQ(EncodeFactsRecord(r), "");
  auto many = std::make_shared<media::LocationScan>();
  for (uint64_t i = 0; i <= kMaxRecordRanges; ++i) {
    many->ranges.push_back({i * 10, i * 10 + 5, REDACTION_EXIF_GPS});
  }
  r.scan = many;
  EXPECT_EQ(EncodeFactsRecord(r), "");
}

TEST(FactsRecordTest, EveryTruncationAndBadFieldIsRefused) {
  const std::string good = EncodeFactsRecord(Sample());
  ASSERT_TRUE(DecodeFactsRecord(good).ok());
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_FALSE(DecodeFactsRecord(good.substr(0, len)).ok()) << "truncated to " << len;
  }
  EXPECT_FALSE(DecodeFactsRecord(good + "x").ok()) << "a byte too many";
  EXPECT_FALSE(DecodeFactsRecord(std::string(kMaxRecordBytes + 1, 'S')).ok());
  auto with = [&](size_t at, char byte) {
    std::string s = good;
    s[at] = byte;
    return DecodeFactsRecord(s);
  };
  EXPECT_FALSE(with(0, 'X').ok()) << "magic";
  EXPECT_FALSE(with(27, '\x80').ok()) << "negative size";
  EXPECT_FALSE(with(44, '\x7f').ok()) << "unknown format";
  EXPECT_FALSE(with(45, '\x7f').ok()) << "unknown class";
  EXPECT_FALSE(with(46, '\x02').ok()) << "unknown flag";
  EXPECT_FALSE(with(47, '\x01').ok()) << "reserved byte";
  EXPECT_FALSE(with(48, '\x04').ok()) << "a count the length does not hold";
  constexpr size_t kFirstRange = 50;
  EXPECT_FALSE(with(kFirstRange + 16, '\x00').ok()) << "kind unspecified";
  EXPECT_FALSE(with(kFirstRange + 16, '\x7f').ok()) << "unknown kind";
  EXPECT_FALSE(with(kFirstRange + 8, '\x10').ok()) << "end before begin";
  EXPECT_FALSE(with(kFirstRange + 13, '\x01').ok()) << "end past the file";
  EXPECT_FALSE(with(kFirstRange + 17, '\x50').ok()) << "out of order";
  EXPECT_FALSE(with(kFirstRange + 9, '\x01').ok()) << "overlap within a kind";
}

TEST(FactsRecordTest, HoldsOnlyForItsVersionAndCtimeBound) {
  FactsRecord r = Sample();
  ObjectId id{1, r.ino, r.generation};
  struct stat st = StatOf(r, r.ctime_bound_ns);
  EXPECT_TRUE(RecordMatches(r, id, st)) << "a ctime at the bound";
  struct stat later = StatOf(r, r.ctime_bound_ns + 1);
  EXPECT_FALSE(RecordMatches(r, id, later)) << "mtime put back, ctime moved past the bound";
  struct stat resized = st;
  resized.st_size += 1;
  EXPECT_FALSE(RecordMatches(r, id, resized));
  struct stat touched = st;
  touched.st_mtim.tv_nsec += 1;
  EXPECT_FALSE(RecordMatches(r, id, touched));
  struct stat other = st;
  other.st_ino += 1;
  EXPECT_FALSE(RecordMatches(r, id, other));
  EXPECT_FALSE(RecordMatches(r, ObjectId{1, r.ino, r.generation + 1}, st)) << "a reused number";
  EXPECT_FALSE(RecordMatches(r, ObjectId{1, r.ino, 0}, st)) << "no handle: no identity";
}

}  // namespace
}  // namespace scopedfs::daemon
