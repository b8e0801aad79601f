// SipHash-2-4 and the inode numbers built on it (see inode_numbers.h). Written from the
// algorithm's description (Aumasson and Bernstein, 2012): abseil and libc have no keyed hash
// whose output is stable and documented.
#include "daemon/tables/inode_numbers.h"

#include <sys/random.h>

#include <cstring>

namespace scopedfs::daemon {

namespace {

inline uint64_t Rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct SipState {
  uint64_t v0, v1, v2, v3;
  void Round() {
    v0 += v1;
    v1 = Rotl(v1, 13);
    v1 ^= v0;
    v0 = Rotl(v0, 32);
    v2 += v3;
    v3 = Rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = Rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = Rotl(v1, 17);
    v1 ^= v2;
    v2 = Rotl(v2, 32);
  }
  void Absorb(uint64_t m) {
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }
};

uint64_t LoadLittleEndian(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

uint64_t SipHash24(const std::array<uint64_t, 2>& key, absl::Span<const uint8_t> data) {
  SipState s{key[0] ^ 0x736f6d6570736575ULL, key[1] ^ 0x646f72616e646f6dULL,
             key[0] ^ 0x6c7967656e657261ULL, key[1] ^ 0x7465646279746573ULL};
  size_t whole = data.size() / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) s.Absorb(LoadLittleEndian(data.data() + i, 8));
  // The last block: the remaining bytes, and the length's low byte on top.
  uint64_t last = LoadLittleEndian(data.data() + whole, data.size() - whole) |
                  (static_cast<uint64_t>(data.size() & 0xff) << 56);
  s.Absorb(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.Round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

InodeNumbers InodeNumbers::WithRandomKey() {
  std::array<uint64_t, 2> key{};
  uint8_t bytes[sizeof(key)];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  std::memcpy(key.data(), bytes, sizeof(bytes));
  return InodeNumbers(key);
}

ino_t InodeNumbers::Of(dev_t dev, ino_t ino) const {
  uint8_t buf[16];
  uint64_t d = dev, i = ino;
  for (int b = 0; b < 8; ++b) {
    buf[b] = static_cast<uint8_t>(d >> (8 * b));
    buf[8 + b] = static_cast<uint8_t>(i >> (8 * b));
  }
  uint64_t h = SipHash24(key_, absl::MakeConstSpan(buf, sizeof(buf)));
  return static_cast<ino_t>(h != 0 ? h : 1);
}

}  // namespace scopedfs::daemon
