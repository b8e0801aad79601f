// Parser for Android's packages.list: turns each line into a PackagesListEntry and reports every
// malformed line at once, as "file:line:col: message", so a broken file can be fixed in one pass
// instead of one error per run.
#include "policy/packages_list.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

namespace scopedfs::policy {
namespace {

// Debian's abseil is built with its own absl::string_view (not an alias of absl::string_view), and
// absl's string functions accept only that, so the parser works on absl::string_view internally.
absl::string_view ToAbsl(absl::string_view s) { return absl::string_view(s.data(), s.size()); }

// uids and gids on Android are non-negative 32-bit ints in Java; values of 2^31 and above would
// be negative there, and (uid_t)-1 is the "no change" sentinel of chown(2), so both are refused.
constexpr uint64_t kMaxId = (uint64_t{1} << 31) - 1;

// Fields 1-5 (package uid debuggable data_dir seinfo) are all that every writer we accept
// includes; the gid list and the fields after it were added over time, so they are optional.
constexpr size_t kMinFields = 5;

// The one package whose name is not a dotted name (see ParseLine).
constexpr absl::string_view kFrameworkPackage = "android";

// A corrupt (or binary) file can have millions of bad lines; past this many the message would
// be useless and huge, so parsing stops with a summary line.
constexpr size_t kMaxProblems = 1000;

// A real packages.list is well under 1 MiB even with thousands of packages; anything far larger
// is not a packages.list, and reading it whole would let a bad path exhaust memory.
constexpr size_t kMaxFileBytes = size_t{64} << 20;

// Quoted values go into error messages that end up in logs, so they are escaped (the field may
// hold arbitrary bytes) and truncated (a single "field" may be megabytes long).
std::string Quote(absl::string_view value) {
  constexpr size_t kMaxQuoted = 64;
  if (value.size() <= kMaxQuoted) return absl::StrCat("\"", absl::CHexEscape(value), "\"");
  return absl::StrCat("\"", absl::CHexEscape(value.substr(0, kMaxQuoted)), "\"...");
}

// Strict on purpose: SimpleAtoi accepts signs and surrounding whitespace, and an id written as
// "+10061" or " 10061" means the file was not written by PackageManager.
bool ParseDecimal(absl::string_view text, uint64_t max, uint64_t* out) {
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
    // Checked every digit so that a long run of digits cannot wrap around.
    if (value > max) return false;
  }
  *out = value;
  return true;
}

bool ParseGids(absl::string_view text, std::vector<uint32_t>* gids) {
  if (text == "none") return true;
  for (absl::string_view element : absl::StrSplit(text, ',')) {
    uint64_t gid = 0;
    if (!ParseDecimal(element, kMaxId, &gid)) return false;
    gids->push_back(static_cast<uint32_t>(gid));
  }
  return true;
}

// seinfo looks like "default:targetSdkVersion=33" or "platform:privapp:targetSdkVersion=29",
// and newer releases append more ":"-separated parts (e.g. ":complete"), so the number runs to
// the next ':' or the end. Returns false only if the key is present with a malformed number.
bool ParseTargetSdk(absl::string_view seinfo, uint32_t* target_sdk) {
  constexpr absl::string_view kKey = ":targetSdkVersion=";
  size_t pos = seinfo.find(kKey);
  if (pos == absl::string_view::npos) {
    *target_sdk = 0;
    return true;
  }
  absl::string_view rest = seinfo.substr(pos + kKey.size());
  absl::string_view number = rest.substr(0, rest.find(':'));
  uint64_t value = 0;
  if (!ParseDecimal(number, kMaxId, &value)) return false;
  *target_sdk = static_cast<uint32_t>(value);
  return true;
}

// Describes the first byte that cannot appear in a packages.list line, or returns an empty
// string. Tabs count: PackageManager only ever writes single spaces and Android's own native
// reader (libpackagelistparser) splits on ' ' alone, so a tab would make us read the file
// differently from the system. Bytes >= 0x80 are allowed because data directories are paths.
std::string FindBadByte(absl::string_view line, size_t* col) {
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c >= 0x20 && c != 0x7f) continue;
    *col = i + 1;
    if (c == '\0') return "NUL byte in line";
    if (c == '\t') return "tab character in line (fields must be separated by spaces)";
    if (c == '\r') return "carriage return in the middle of a line";
    return absl::StrCat("control character 0x", absl::Hex(c, absl::kZeroPad2), " in line");
  }
  return "";
}

class Parser {
 public:
  explicit Parser(absl::string_view filename) : filename_(filename) {}

  absl::StatusOr<std::vector<PackagesListEntry>> Parse(absl::string_view text) {
    int line_number = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++line_number;
      if (TooManyProblems()) break;
      // Only one '\r' is the CRLF line ending; any other is reported as a control character.
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ParseLine(line, line_number);
    }
    if (problems_.empty()) return std::move(entries_);
    if (TooManyProblems()) {
      problems_.push_back(
          absl::StrCat(filename_, ": too many problems; stopped after ", kMaxProblems));
    }
    return absl::InvalidArgumentError(absl::StrJoin(problems_, "\n"));
  }

 private:
  bool TooManyProblems() const { return problems_.size() >= kMaxProblems; }

  void AddProblem(int line, size_t col, absl::string_view message) {
    problems_.push_back(absl::StrCat(filename_, ":", line, ":", col, ": ", message));
  }

  void ParseLine(absl::string_view line, int line_number) {
    size_t bad_col = 0;
    if (std::string bad = FindBadByte(line, &bad_col); !bad.empty()) {
      // Field checks on such a line would mostly report consequences of the same corruption.
      AddProblem(line_number, bad_col, bad);
      return;
    }
    // Any run of spaces separates fields (SkipEmpty), and a line of only spaces is blank.
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.empty()) return;
    if (fields.size() < kMinFields) {
      // Usually a truncated write; the fields that are there are not worth separate complaints.
      AddProblem(line_number, line.size() + 1,
                 absl::StrCat("too few fields: got ", fields.size(), ", need at least ", kMinFields,
                              " (package uid debuggable data_dir seinfo)"));
      return;
    }
    // The views point into `line`, so the distance is the field's 0-based column.
    auto col = [&line](absl::string_view field) {
      return static_cast<size_t>(field.data() - line.data()) + 1;
    };
    const size_t problems_before = problems_.size();
    PackagesListEntry entry;
    entry.line = line_number;

    const absl::string_view package = fields[0];
    // The framework package "android" (uid 1000) is listed in real files; PackageManager exempts
    // exactly that name from the naming rule, so the parser must too.
    if (package != kFrameworkPackage &&
        !IsValidPackageName(absl::string_view(package.data(), package.size()))) {
      AddProblem(line_number, col(package), absl::StrCat("invalid package name ", Quote(package)));
    } else if (auto [it, inserted] = first_line_.try_emplace(package, line_number); !inserted) {
      AddProblem(line_number, col(package),
                 absl::StrCat("package ", Quote(package), " listed again (first listed on line ",
                              it->second, ")"));
    }
    entry.package = std::string(package);

    uint64_t uid = 0;
    if (!ParseDecimal(fields[1], kMaxId, &uid)) {
      AddProblem(line_number, col(fields[1]),
                 absl::StrCat("uid ", Quote(fields[1]), " is not a decimal number in [0, ",
                              kMaxId + 1, ")"));
    }
    entry.uid = static_cast<uint32_t>(uid);

    if (fields[2] == "0" || fields[2] == "1") {
      entry.debuggable = fields[2] == "1";
    } else {
      AddProblem(line_number, col(fields[2]),
                 absl::StrCat("debuggable flag ", Quote(fields[2]), " is not 0 or 1"));
    }

    entry.data_dir = std::string(fields[3]);

    entry.seinfo = std::string(fields[4]);
    if (!ParseTargetSdk(fields[4], &entry.target_sdk)) {
      AddProblem(line_number, col(fields[4]),
                 absl::StrCat("seinfo ", Quote(fields[4]),
                              " has a malformed targetSdkVersion (want a decimal number)"));
    }

    if (fields.size() > kMinFields && !ParseGids(fields[5], &entry.gids)) {
      AddProblem(line_number, col(fields[5]),
                 absl::StrCat("gid list ", Quote(fields[5]),
                              " is not \"none\" or comma-separated decimal numbers"));
    }
    // Fields after the gids (profileable, version code, ...) are deliberately not validated:
    // their number and meaning change between releases and nothing here depends on them.

    if (problems_.size() == problems_before) entries_.push_back(std::move(entry));
  }

  absl::string_view filename_;
  std::vector<PackagesListEntry> entries_;
  std::vector<std::string> problems_;
  // Keys are views into the caller's text, which outlives the parser.
  absl::flat_hash_map<absl::string_view, int> first_line_;
};

// ErrnoToStatus appends strerror itself and picks the canonical code from the errno (NotFound for
// ENOENT, PermissionDenied for EACCES, ...).
absl::Status ErrnoError(int err, const std::string& path, absl::string_view operation) {
  return absl::ErrnoToStatus(err, absl::StrCat(path, ": ", operation));
}

absl::Status TooLargeError(const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": file is larger than ", kMaxFileBytes >> 20,
                   " MiB; refusing to read it as a packages.list"));
}

}  // namespace

bool IsValidPackageName(absl::string_view name) {
  int segments = 0;
  for (absl::string_view segment : absl::StrSplit(ToAbsl(name), '.')) {
    if (segment.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(segment[0]))) {
      return false;
    }
    for (char c : segment) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
    ++segments;
  }
  return segments >= 2;
}

absl::StatusOr<std::vector<PackagesListEntry>> ParsePackagesList(absl::string_view text,
                                                                 absl::string_view filename) {
  return Parser(ToAbsl(filename)).Parse(ToAbsl(text));
}

absl::StatusOr<std::vector<PackagesListEntry>> ReadPackagesList(const std::string& path) {
  base::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError(errno, path, "open");
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, path, "fstat");
  // Checked up front for a clear error without reading; the read loop below still enforces the
  // bound, since st_size is 0 for pipes and the file may grow while being read.
  if (st.st_size > 0 && static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    return TooLargeError(path);
  }
  std::string text;
  char buf[64 * 1024];
  while (true) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, path, "read");
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kMaxFileBytes) return TooLargeError(path);
    text.append(buf, static_cast<size_t>(n));
  }
  return ParsePackagesList(text, path);
}

}  // namespace scopedfs::policy
