// SipHash-2-4 against the reference vectors, and the properties inode numbers need.
#include "daemon/tables/inode_numbers.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

// Key 00 01 .. 0f as two little-endian words.
constexpr std::array<uint64_t, 2> kReferenceKey = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};

std::vector<uint8_t> Counting(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i);
  return v;
}

TEST(SipHash24Test, MatchesTheReferenceVectors) {
  // The paper's example (15 bytes), the empty message and a whole block (the reference
  // implementation's vectors[0] and vectors[8], read little-endian).
  EXPECT_EQ(SipHash24(kReferenceKey, Counting(15)), 0xa129ca6149be45e5ULL);
  EXPECT_EQ(SipHash24(kReferenceKey, Counting(0)), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(SipHash24(kReferenceKey, Counting(8)), 0x93f5f5799a932462ULL);
}

TEST(InodeNumbersTest, StablePerObjectAndKeyedPerRun) {
  InodeNumbers a({1, 2}), b({3, 4});
  EXPECT_EQ(a.Of(5, 100), a.Of(5, 100));
  EXPECT_NE(a.Of(5, 100), a.Of(5, 101));
  EXPECT_NE(a.Of(5, 100), a.Of(6, 100));
  EXPECT_NE(a.Of(5, 100), b.Of(5, 100));
}

TEST(InodeNumbersTest, ConsecutiveLowerNumbersAreNotConsecutive) {
  InodeNumbers n = InodeNumbers::WithRandomKey();
  int ordered = 0;
  for (ino_t i = 1000; i < 1100; ++i) ordered += n.Of(7, i) < n.Of(7, i + 1);
  // A hash orders about half the pairs; a sequence would order all 100.
  EXPECT_GT(ordered, 20);
  EXPECT_LT(ordered, 80);
}

}  // namespace
}  // namespace scopedfs::daemon
