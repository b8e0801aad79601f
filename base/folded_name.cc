// The fold of folded_name.h: a cursor per name that yields the folded bytes one at a time, so
// that two names are compared without building either fold.
#include "base/folded_name.h"

#include <cstddef>
#include <cstdint>

namespace scopedfs::base {
namespace {

// Code points whose ext4 fold (NFD, then full case folding; Unicode 15 CaseFolding.txt statuses
// C and F) is all ASCII, and that fold.
struct AsciiFold {
  uint32_t code_point;
  const char* folded;
};
constexpr AsciiFold kAsciiFolds[] = {
    {0x00DF, "ss"},   // LATIN SMALL LETTER SHARP S (F)
    {0x017F, "s"},    // LATIN SMALL LETTER LONG S (C)
    {0x037E, ";"},    // GREEK QUESTION MARK (NFD: U+003B)
    {0x1E9E, "ss"},   // LATIN CAPITAL LETTER SHARP S (F)
    {0x1FEF, "`"},    // GREEK VARIA (NFD: U+0060)
    {0x212A, "k"},    // KELVIN SIGN (NFD: U+004B, then C)
    {0xFB00, "ff"},   // LATIN SMALL LIGATURE FF (F)
    {0xFB01, "fi"},   // LATIN SMALL LIGATURE FI (F)
    {0xFB02, "fl"},   // LATIN SMALL LIGATURE FL (F)
    {0xFB03, "ffi"},  // LATIN SMALL LIGATURE FFI (F)
    {0xFB04, "ffl"},  // LATIN SMALL LIGATURE FFL (F)
    {0xFB05, "st"},   // LATIN SMALL LIGATURE LONG S T (F)
    {0xFB06, "st"},   // LATIN SMALL LIGATURE ST (F)
};

// Default_Ignorable_Code_Point (Unicode 12.1, the version of the kernel's utf8 tables): the
// emulated device's 6.12 kernel drops them from casefolded names, so "Mu<U+200B>sic" is Music
// there (newer kernels stopped special-casing them; on such a lower this folds more than ext4).
// Inclusive ranges.
constexpr uint32_t kIgnorable[][2] = {
    {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x061C, 0x061C}, {0x115F, 0x1160}, {0x17B4, 0x17B5},
    {0x180B, 0x180E},   {0x200B, 0x200F},   {0x202A, 0x202E}, {0x2060, 0x206F}, {0x3164, 0x3164},
    {0xFE00, 0xFE0F},   {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0}, {0xFFF0, 0xFFF8}, {0x1BCA0, 0x1BCA3},
    {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
};

bool Ignorable(uint32_t cp) {
  for (const auto& range : kIgnorable) {
    if (cp >= range[0] && cp <= range[1]) return true;
  }
  return false;
}

// The fold of a code point that FoldsBeyondAscii: its ASCII letters, or "" for an ignorable one;
// nullptr for any other.
const char* AsciiFoldOf(uint32_t cp) {
  for (const AsciiFold& f : kAsciiFolds) {
    if (f.code_point == cp) return f.folded;
  }
  return Ignorable(cp) ? "" : nullptr;
}

// The length of the UTF-8 sequence at s[i] and its code point; 0 when it is not a valid one
// (then the byte stands for itself).
size_t DecodeUtf8(absl::string_view s, size_t i, uint32_t* cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  size_t len = b0 >= 0xF0 && b0 < 0xF5 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 < 0xE0 ? 2 : 0;
  if (len == 0 || b0 >= 0xF5 || i + len > s.size()) return 0;
  uint32_t c = b0 & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

// Yields the folded bytes of one name.
class FoldCursor {
 public:
  explicit FoldCursor(absl::string_view s) : s_(s) {}
  // The next folded byte, or -1 at the end.
  int Next() {
    if (pending_ != nullptr && *pending_ != '\0') return static_cast<unsigned char>(*pending_++);
    pending_ = nullptr;
    if (raw_left_ > 0) {
      --raw_left_;
      return static_cast<unsigned char>(s_[i_++]);
    }
    while (i_ < s_.size()) {
      unsigned char b = static_cast<unsigned char>(s_[i_]);
      if (b < 0x80) {
        ++i_;
        return b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b;
      }
      uint32_t cp = 0;
      size_t len = DecodeUtf8(s_, i_, &cp);
      if (len == 0) return static_cast<unsigned char>(s_[i_++]);
      const char* folded = AsciiFoldOf(cp);
      if (folded == nullptr) {
        raw_left_ = len - 1;
        return static_cast<unsigned char>(s_[i_++]);
      }
      i_ += len;
      if (*folded != '\0') {
        pending_ = folded + 1;
        return static_cast<unsigned char>(*folded);
      }
      // An ignorable code point yields nothing: on to the next one.
    }
    return -1;
  }

 private:
  absl::string_view s_;
  size_t i_ = 0;
  size_t raw_left_ = 0;
  const char* pending_ = nullptr;
};

}  // namespace

bool FoldsTogether(absl::string_view a, absl::string_view b) {
  FoldCursor x(a), y(b);
  while (true) {
    int cx = x.Next();
    int cy = y.Next();
    if (cx != cy) return false;
    if (cx < 0) return true;
  }
}

bool FoldsBeyondAscii(absl::string_view name) {
  for (size_t i = 0; i < name.size(); ++i) {
    if (static_cast<unsigned char>(name[i]) < 0x80) continue;
    uint32_t cp = 0;
    size_t len = DecodeUtf8(name, i, &cp);
    if (len == 0) continue;
    if (AsciiFoldOf(cp) != nullptr) return true;
    i += len - 1;
  }
  return false;
}

std::string FoldedName(absl::string_view name) {
  std::string folded;
  folded.reserve(name.size());
  FoldCursor cursor(name);
  for (int c = cursor.Next(); c >= 0; c = cursor.Next()) folded.push_back(static_cast<char>(c));
  return folded;
}

bool IsAsciiName(absl::string_view name) {
  for (char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace scopedfs::base
