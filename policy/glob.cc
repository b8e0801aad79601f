// Compiler and matcher for policy path globs (see glob.h). Compile does all validation and
// allocation up front so that Matches, which runs on every file access decision, only walks
// precomputed tables with two greedy loops and never allocates.
#include "policy/glob.h"

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace scopedfs::policy {
namespace {

// Locale-independent on purpose: policy decisions must not depend on the process locale.
constexpr char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

absl::Status PatternError(absl::string_view pattern, absl::string_view what, size_t offset) {
  // Debian's abseil has its own string_view type rather than an alias of absl::string_view.
  // CEscape keeps a NUL or control byte in a rejected pattern from mangling logs.
  const absl::string_view source(pattern.data(), pattern.size());
  return absl::InvalidArgumentError(
      absl::StrCat("invalid glob \"", absl::CEscape(source),
                   "\": ", absl::string_view(what.data(), what.size()), " at offset ", offset));
}

bool IsDotSegment(absl::string_view segment) { return segment == "." || segment == ".."; }

// Matching is purely lexical, so a path that is not canonical ("", "/a", "a/", "a//b", "a/../b")
// could otherwise slip past a rule through an empty or dot segment swallowed by '*' or '**'.
// Such paths match no pattern; callers must canonicalize first.
bool IsCanonicalRelativePath(absl::string_view path) {
  if (path.empty()) return false;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    const size_t end = slash == absl::string_view::npos ? path.size() : slash;
    const absl::string_view segment = path.substr(start, end - start);
    if (segment.empty() || IsDotSegment(segment)) return false;
    if (slash == absl::string_view::npos) return true;
    start = slash + 1;
  }
}

void AddToClass(uint64_t (&bits)[4], char c) {
  const auto byte = static_cast<unsigned char>(AsciiLower(c));
  bits[byte / 64] |= uint64_t{1} << (byte % 64);
}

}  // namespace

absl::StatusOr<Glob> Glob::Compile(absl::string_view pattern) {
  if (pattern.empty()) return PatternError(pattern, "empty pattern", 0);
  if (pattern.front() == '/') return PatternError(pattern, "leading '/'", 0);

  Glob glob;
  glob.pattern_ = std::string(pattern);
  const size_t n = pattern.size();
  size_t segment_start = 0;  // offset of the current segment's first character

  // Closes the segment [segment_start, end) whose tokens were appended since the last segment.
  auto finish_segment = [&](size_t end) -> absl::Status {
    if (end == segment_start) return PatternError(pattern, "empty segment", end);
    Segment segment;
    segment.token_begin = glob.segments_.empty() ? 0 : glob.segments_.back().token_end;
    segment.token_end = glob.tokens_.size();
    // Checked on the decoded literals so that an escaped "\.\." is caught too: it could only
    // ever match a non-canonical path, which never matches, so it is certainly a mistake.
    const size_t count = segment.token_end - segment.token_begin;
    bool all_dots = count == 1 || count == 2;
    for (size_t t = segment.token_begin; all_dots && t < segment.token_end; ++t) {
      const Token& token = glob.tokens_[t];
      all_dots = token.kind == Token::kLiteral && token.literal == '.';
    }
    if (all_dots) {
      return PatternError(pattern, count == 1 ? "'.' segment" : "'..' segment", segment_start);
    }
    glob.segments_.push_back(segment);
    return absl::OkStatus();
  };

  size_t i = 0;
  while (i < n) {
    const char c = pattern[i];
    if (c == '\0') return PatternError(pattern, "NUL byte", i);

    if (c == '/') {
      if (absl::Status status = finish_segment(i); !status.ok()) return status;
      segment_start = i + 1;
      ++i;
      continue;
    }

    if (c == '*' && i + 1 < n && pattern[i + 1] == '*') {
      const bool whole_segment = i == segment_start && (i + 2 == n || pattern[i + 2] == '/');
      if (!whole_segment) return PatternError(pattern, "'**' not a whole segment", i);
      Segment segment;
      segment.globstar = true;
      segment.token_begin = segment.token_end = glob.tokens_.size();
      glob.segments_.push_back(segment);
      i += 2;
      if (i < n) {  // skip the '/' that follows, so it does not close an empty segment
        segment_start = i + 1;
        ++i;
        if (i == n) return PatternError(pattern, "trailing '/'", n - 1);
      } else {
        segment_start = n;
      }
      continue;
    }

    Token token;
    if (c == '*') {
      token.kind = Token::kStar;
      ++i;
    } else if (c == '?') {
      token.kind = Token::kAnyChar;
      ++i;
    } else if (c == '\\') {
      if (i + 1 == n) return PatternError(pattern, "trailing '\\'", i);
      if (pattern[i + 1] == '\0') return PatternError(pattern, "NUL byte", i + 1);
      token.kind = Token::kLiteral;
      token.literal = AsciiLower(pattern[i + 1]);
      i += 2;
    } else if (c == '[') {
      const size_t open = i;
      ++i;
      bool negate = false;
      if (i < n && pattern[i] == '!') {
        negate = true;
        ++i;
      }
      CharClass char_class;
      const size_t first = i;
      bool closed = false;
      // Reads one class member character at i, honouring '\' escapes.
      auto read_member = [&](char* out) -> absl::Status {
        if (pattern[i] == '\0') return PatternError(pattern, "NUL byte", i);
        if (pattern[i] == '\\') {
          if (i + 1 == n) return PatternError(pattern, "trailing '\\'", i);
          if (pattern[i + 1] == '\0') return PatternError(pattern, "NUL byte", i + 1);
          ++i;
        }
        *out = pattern[i++];
        return absl::OkStatus();
      };
      while (i < n) {
        if (pattern[i] == ']' && i != first) {
          closed = true;
          ++i;
          break;
        }
        const size_t low_offset = i;
        char low = 0;
        if (absl::Status status = read_member(&low); !status.ok()) return status;
        // A '-' right before the closing ']' is a literal, as in "[a-]".
        if (i + 1 < n && pattern[i] == '-' && pattern[i + 1] != ']') {
          ++i;
          char high = 0;
          if (absl::Status status = read_member(&high); !status.ok()) return status;
          // Compared as raw bytes, before case folding, so "[a-Z]" is reported, not silently
          // turned into a class that happens to look sensible after lower-casing.
          if (static_cast<unsigned char>(high) < static_cast<unsigned char>(low)) {
            return PatternError(pattern, "reversed range in '[' class", low_offset);
          }
          for (unsigned b = static_cast<unsigned char>(low); b <= static_cast<unsigned char>(high);
               ++b) {
            AddToClass(char_class.bits, static_cast<char>(b));
          }
        } else {
          AddToClass(char_class.bits, low);
        }
      }
      if (!closed) {
        // "[]" and "[!]" read as an opening ']' member that was never closed; what the author
        // meant there is an empty class, so say that.
        const bool only_bracket = i == first + 1 && pattern[first] == ']';
        return PatternError(pattern, only_bracket ? "empty '[]' class" : "unterminated '['", open);
      }
      // Folding negation into the set is safe: path segments never contain '/', and a negated
      // set also holding upper-case letters is harmless because lookups are lower-cased.
      if (negate) {
        for (uint64_t& word : char_class.bits) word = ~word;
      }
      token.kind = Token::kClass;
      token.class_index = glob.classes_.size();
      glob.classes_.push_back(char_class);
    } else {
      token.kind = Token::kLiteral;
      token.literal = AsciiLower(c);
      ++i;
    }
    glob.tokens_.push_back(token);
  }

  if (segment_start == n) {
    // Only a final "**" records its segment before the end; anything else ended in a '/'.
    if (!glob.segments_.back().globstar) return PatternError(pattern, "trailing '/'", n - 1);
  } else if (absl::Status status = finish_segment(n); !status.ok()) {
    return status;
  }
  return glob;
}

bool Glob::TokenMatches(const Token& token, char c) const {
  switch (token.kind) {
    case Token::kLiteral:
      return AsciiLower(c) == token.literal;
    case Token::kAnyChar:
      return true;  // segments never contain '/'
    case Token::kClass: {
      const auto byte = static_cast<unsigned char>(AsciiLower(c));
      return (classes_[token.class_index].bits[byte / 64] >> (byte % 64)) & 1;
    }
    case Token::kStar:
      break;
  }
  return false;
}

// Classic greedy wildcard match: every non-'*' token consumes exactly one byte, so on a mismatch
// it is enough to let the most recent '*' absorb one more byte; earlier '*'s never need to be
// revisited. That bounds the work by O(tokens * text) without any memo table.
bool Glob::SegmentMatches(const Segment& segment, absl::string_view text) const {
  size_t t = segment.token_begin;
  size_t i = 0;
  size_t star_t = absl::string_view::npos;  // token after the last '*' seen
  size_t star_i = 0;                        // text position that '*' currently extends to
  while (i < text.size()) {
    if (t < segment.token_end) {
      const Token& token = tokens_[t];
      if (token.kind == Token::kStar) {
        star_t = ++t;
        star_i = i;
        continue;
      }
      if (TokenMatches(token, text[i])) {
        ++t;
        ++i;
        continue;
      }
    }
    if (star_t == absl::string_view::npos) return false;
    t = star_t;
    i = ++star_i;
  }
  while (t < segment.token_end && tokens_[t].kind == Token::kStar) ++t;
  return t == segment.token_end;
}

// The same greedy scheme one level up: a "**" is a '*' over whole segments, and every other
// pattern segment consumes exactly one path segment, so only the most recent "**" needs a
// backtrack point. Cost is O(pattern segments * path segments) segment matches.
//
// "**" may match zero segments, except at the end of the pattern: "X/**" matches X's
// descendants but not X itself, because the '/' before "**" promises that something follows.
// The loop gets that for free, since it only stops once every path segment is consumed.
bool Glob::Matches(absl::string_view path) const {
  if (!IsCanonicalRelativePath(path)) return false;
  const size_t n = path.size();
  // Start of the segment after the one starting at `pos`; n + 1 once the path is used up.
  auto next_segment = [&](size_t pos) {
    const size_t slash = path.find('/', pos);
    return slash == absl::string_view::npos ? n + 1 : slash + 1;
  };

  size_t s = 0;                             // pattern segment index
  size_t pos = 0;                           // start of the next unconsumed path segment
  size_t star_s = absl::string_view::npos;  // pattern segment after the last "**"
  size_t star_pos = 0;                      // path position that "**" currently extends to
  while (pos <= n) {
    if (s < segments_.size()) {
      const Segment& segment = segments_[s];
      if (segment.globstar) {
        star_s = ++s;
        star_pos = pos;
        continue;
      }
      const size_t next = next_segment(pos);
      if (SegmentMatches(segment, path.substr(pos, next - 1 - pos))) {
        ++s;
        pos = next;
        continue;
      }
    }
    if (star_s == absl::string_view::npos) return false;
    s = star_s;
    pos = star_pos = next_segment(star_pos);
  }
  return s == segments_.size();
}

}  // namespace scopedfs::policy
