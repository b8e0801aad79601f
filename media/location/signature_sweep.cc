// Signature sweeps (see signature_sweep.h). The sweep looks at every byte once through a table of
// the first bytes signatures can start with, so it runs near memory speed on compressed data.
// Signatures short enough to occur by chance carry a plausibility check (a TIFF header's first IFD
// offset, a box's size field, an ID3 header's syncsafe size), so that audio frames or text do not
// trip it.
#include "media/location/signature_sweep.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace scopedfs::policy {
namespace {

struct Literal {
  absl::string_view bytes;
  absl::string_view name;
};

constexpr Literal kLiterals[] = {
    {absl::string_view("Exif\0", 5), "Exif header"},
    {"<x:xmpmeta", "XMP packet"},
    {"<?xpacket", "XMP packet"},
    {"<rdf:RDF", "XMP packet"},
    {"http://ns.adobe.com/xap/1.0/", "XMP identifier"},
    {"\xA9xyz", "QuickTime location atom"},
    {"GPS5", "GPMF GPS stream"},
    {"GPS9", "GPMF GPS stream"},
    {absl::string_view("DEVC\0", 5), "GPMF device"},
    {"_PMX", "RIFF XMP chunk"},
};

// Box types that are recognised only with a plausible size field in the four bytes before them.
constexpr absl::string_view kBoxTypes[] = {"udta", "meta", "loci", "GPMF", "jumb", "jumd", "XMP_"};

// Bytes a match may need past its first byte ("http://ns.adobe.com/xap/1.0/" is the longest).
constexpr size_t kTail = 32;
// Bytes a match may need before its first byte (a box's size field).
constexpr size_t kBack = 4;
// The first IFD of a real TIFF lies within 256 MiB; four random bytes rarely say so.
constexpr uint32_t kMaxIfdOffset = 1u << 28;

constexpr std::array<bool, 256> FirstBytes() {
  std::array<bool, 256> t{};
  for (const Literal& l : kLiterals) t[static_cast<uint8_t>(l.bytes[0])] = true;
  for (absl::string_view type : kBoxTypes) t[static_cast<uint8_t>(type[0])] = true;
  t['I'] = t['M'] = true;  // TIFF
  return t;
}

constexpr std::array<bool, 256> kFirst = FirstBytes();

uint32_t Be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

uint32_t Le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// Whether a signature starts at b[0]. `after` bytes are readable from b, `before` before it;
// `left` is how many bytes the swept region has from b[0] on (for size plausibility).
std::optional<SignatureHit> MatchAt(const uint8_t* b, size_t after, size_t before, uint64_t left) {
  const absl::string_view here(reinterpret_cast<const char*>(b), after);
  for (const Literal& l : kLiterals) {
    if (here.substr(0, l.bytes.size()) == l.bytes) return SignatureHit{0, l.name};
  }
  if (after >= 8 && ((b[0] == 'I' && b[1] == 'I' && b[2] == '*' && b[3] == 0) ||
                     (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && b[3] == '*'))) {
    uint32_t ifd = b[0] == 'I' ? Le32(b + 4) : Be32(b + 4);
    if (ifd >= 8 && ifd < kMaxIfdOffset) return SignatureHit{0, "TIFF header"};
  }
  if (after >= 10 && b[0] == 'I' && b[1] == 'D' && b[2] == '3' && b[3] >= 2 && b[3] <= 4 &&
      b[4] != 0xFF && b[6] < 0x80 && b[7] < 0x80 && b[8] < 0x80 && b[9] < 0x80) {
    return SignatureHit{0, "ID3 tag"};
  }
  if (before >= kBack && after >= 4) {
    for (absl::string_view type : kBoxTypes) {
      if (here.substr(0, 4) != type) continue;
      uint32_t size = Be32(b - kBack);
      if (size >= 8 && size <= left + kBack) return SignatureHit{0, "ISO-BMFF metadata box"};
    }
  }
  return std::nullopt;
}

// Tests start positions [from, to) of buf (which holds the swept bytes [buf_at, buf_at + len)).
std::optional<SignatureHit> MatchRange(const uint8_t* buf, size_t len, size_t from, size_t to,
                                       uint64_t buf_at, uint64_t end) {
  for (size_t p = from; p < to; ++p) {
    if (!kFirst[buf[p]]) continue;
    auto hit = MatchAt(buf + p, len - p, std::min(p, kBack), end - (buf_at + p));
    if (hit) {
      hit->offset = buf_at + p;
      // A box is reported at its size field, where the box starts.
      if (hit->name == "ISO-BMFF metadata box") hit->offset -= kBack;
      return hit;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<SignatureHit> FindMetadataSignature(absl::string_view bytes) {
  const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
  return MatchRange(b, bytes.size(), 0, bytes.size(), 0, bytes.size());
}

bool SweepForMetadata(ScanReader& r, uint64_t begin, uint64_t end,
                      std::optional<SignatureHit>* hit) {
  hit->reset();
  if (end <= begin) return r.ok();
  if (!r.CanSweep(begin, end)) return false;
  constexpr size_t kBlock = 64 << 10;
  std::vector<uint8_t> buf(kBack + kTail + kBlock);
  uint64_t buf_at = begin;  // file offset of buf[0]
  uint64_t next = begin;    // next byte to read
  size_t len = 0, from = 0;
  while (true) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, end - next));
    if (!r.ReadSwept(next, n, buf.data() + len)) return false;
    len += n;
    next += n;
    const bool last = next == end;
    // Positions too close to the block's end to be matched whole wait for the next block.
    const size_t to = last ? len : len - kTail;
    *hit = MatchRange(buf.data(), len, from, to, buf_at, end);
    if (hit->has_value() || last) return true;
    const size_t keep_from = to - kBack;
    memmove(buf.data(), buf.data() + keep_from, len - keep_from);
    buf_at += keep_from;
    len -= keep_from;
    from = kBack;
  }
}

}  // namespace scopedfs::policy
