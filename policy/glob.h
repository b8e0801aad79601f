// Path globs used by policy rules (PathMatch.glob), compiled once at load and matched without
// allocating on the decision hot path.
#ifndef SCOPEDFS_POLICY_GLOB_H_
#define SCOPEDFS_POLICY_GLOB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopedfs::policy {

// A compiled glob over '/'-separated relative paths ("DCIM/Camera/IMG_1.jpg"), ASCII
// case-insensitive.
//   *       any run of characters within one segment (not '/')
//   ?       exactly one character other than '/'
//   [abc]   one character of a class; ranges "a-z"; "[!...]" negates; ']' first is literal
//   **      only as a whole segment: zero or more whole segments
//   \x      the character x literally
// Matching time is polynomial in pattern and path length (no exponential backtracking).
class Glob {
 public:
  // Fails with InvalidArgument for: empty pattern, leading or trailing '/', empty segment ("a//b"),
  // "." or ".." segment, "**" not forming a whole segment ("a**", "***"), unterminated or empty
  // class, reversed range ("[z-a]"), trailing '\', NUL byte. The message names the 0-based offset.
  static absl::StatusOr<Glob> Compile(absl::string_view pattern);

  bool Matches(absl::string_view path) const;
  const std::string& pattern() const { return pattern_; }

 private:
  // One pattern character position. Everything here matches exactly one path byte except kStar.
  struct Token {
    enum Kind : uint8_t { kLiteral, kAnyChar, kStar, kClass } kind = kLiteral;
    char literal = 0;        // kLiteral: lower-cased character
    size_t class_index = 0;  // kClass: index into classes_
  };
  // A 256-bit set of lower-cased bytes; negation is folded in at compile time.
  struct CharClass {
    uint64_t bits[4] = {0, 0, 0, 0};
  };
  // One '/'-separated pattern segment: either "**" or the tokens [token_begin, token_end).
  struct Segment {
    bool globstar = false;
    size_t token_begin = 0;
    size_t token_end = 0;
  };

  Glob() = default;
  bool SegmentMatches(const Segment& segment, absl::string_view text) const;
  bool TokenMatches(const Token& token, char c) const;

  std::string pattern_;
  std::vector<Token> tokens_;
  std::vector<CharClass> classes_;
  std::vector<Segment> segments_;
};

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_GLOB_H_
