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

namespace scopedfs::media {
namespace {

// The name a box hit is reported under; its offset is moved back to the box's size field.
constexpr absl::string_view kBoxHit = "ISO-BMFF metadata box";

// Bytes a match may need past its first byte ("http://ns.adobe.com/xap/1.0/" is the longest).
constexpr size_t kTail = 32;
// Bytes a match may need before its first byte (a box's size field).
constexpr size_t kBack = 4;
// The first IFD of a real TIFF lies within 256 MiB; four random bytes rarely say so.
constexpr uint32_t kMaxIfdOffset = 1u << 28;

// The bytes MatchAt dispatches on.
constexpr std::array<bool, 256> FirstBytes() {
  std::array<bool, 256> t{};
  for (unsigned char c : absl::string_view("E<h\xA9GD_umljXIM")) t[c] = true;
  return t;
}

constexpr std::array<bool, 256> kFirst = FirstBytes();

uint32_t Be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

uint32_t Le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

bool Has(const uint8_t* b, size_t after, absl::string_view literal) {
  return after >= literal.size() && memcmp(b, literal.data(), literal.size()) == 0;
}

// A box type at b[0] whose size field, in the four bytes before it, fits the swept region.
bool PlausibleBox(const uint8_t* b, size_t after, size_t before, uint64_t left,
                  absl::string_view type) {
  if (before < kBack || !Has(b, after, type)) return false;
  const uint32_t size = Be32(b - kBack);
  return size >= 8 && size <= left + kBack;
}

// Whether a signature starts at b[0]. `after` bytes are readable from b, `before` before it;
// `left` is how many bytes the swept region has from b[0] on (for size plausibility). Dispatched on
// the first byte, since this runs at every byte the first-byte table lets through.
std::optional<SignatureHit> MatchAt(const uint8_t* b, size_t after, size_t before, uint64_t left) {
  auto literal = [&](absl::string_view bytes,
                     absl::string_view name) -> std::optional<SignatureHit> {
    if (Has(b, after, bytes)) return SignatureHit{0, name};
    return std::nullopt;
  };
  auto box = [&](absl::string_view type) -> std::optional<SignatureHit> {
    if (PlausibleBox(b, after, before, left, type)) return SignatureHit{0, kBoxHit};
    return std::nullopt;
  };
  std::optional<SignatureHit> hit;
  switch (b[0]) {
    case 'E':
      return literal(absl::string_view("Exif\0", 5), "Exif header");
    case '<':
      if ((hit = literal("<x:xmpmeta", "XMP packet"))) return hit;
      if ((hit = literal("<?xpacket", "XMP packet"))) return hit;
      return literal("<rdf:RDF", "XMP packet");
    case 'h':
      return literal("http://ns.adobe.com/xap/1.0/", "XMP identifier");
    case 0xA9:
      return literal("\xA9xyz", "QuickTime location atom");
    case 'G':
      if ((hit = literal("GPS5", "GPMF GPS stream"))) return hit;
      if ((hit = literal("GPS9", "GPMF GPS stream"))) return hit;
      return box("GPMF");
    case 'D':
      return literal(absl::string_view("DEVC\0", 5), "GPMF device");
    case '_':
      return literal("_PMX", "RIFF XMP chunk");
    case 'u':
      return box("udta");
    case 'm':
      return box("meta");
    case 'l':
      return box("loci");
    case 'j':
      if ((hit = box("jumb"))) return hit;
      return box("jumd");
    case 'X':
      return box("XMP_");
    case 'I':
      if (after >= 10 && b[1] == 'D' && b[2] == '3' && b[3] >= 2 && b[3] <= 4 && b[4] != 0xFF &&
          b[6] < 0x80 && b[7] < 0x80 && b[8] < 0x80 && b[9] < 0x80) {
        return SignatureHit{0, "ID3 tag"};
      }
      if (after >= 8 && b[1] == 'I' && b[2] == '*' && b[3] == 0) {
        const uint32_t ifd = Le32(b + 4);
        if (ifd >= 8 && ifd < kMaxIfdOffset) return SignatureHit{0, "TIFF header"};
      }
      return std::nullopt;
    case 'M':
      if (after >= 8 && b[1] == 'M' && b[2] == 0 && b[3] == '*') {
        const uint32_t ifd = Be32(b + 4);
        if (ifd >= 8 && ifd < kMaxIfdOffset) return SignatureHit{0, "TIFF header"};
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
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
      if (hit->name == kBoxHit) hit->offset -= kBack;
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

}  // namespace scopedfs::media
