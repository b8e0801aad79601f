// Text-format config parsing with located errors (see text_config.h).
#include "policy/text_config.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/unique_fd.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace scopedfs::policy {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

// Configs are small; anything larger is a mistake (a wrong path), not a policy.
constexpr size_t kMaxConfigBytes = 16 << 20;

// Swallows the errors of the re-tokenization below; the parser has already reported them.
class SilentErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
};

// The start (0-based line, column) of the last token of `text` that starts before (line, column),
// tokenized as TextFormat::Parser does; (line, column) itself if no token does.
std::pair<int, int> StartOfTokenBefore(absl::string_view text, int line, int column) {
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  SilentErrorCollector silent;
  google::protobuf::io::Tokenizer tokenizer(&input, &silent);
  tokenizer.set_allow_f_after_float(true);
  tokenizer.set_comment_style(google::protobuf::io::Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_require_space_after_number(false);
  tokenizer.set_allow_multiline_strings(true);
  std::pair<int, int> found(line, column);
  while (tokenizer.Next()) {
    std::pair<int, int> at(tokenizer.current().line, tokenizer.current().column);
    if (at >= std::make_pair(line, column)) break;
    found = at;
  }
  return found;
}

// One problem the parser reported, 0-based as the parser counts.
struct ParseProblem {
  int line;
  int column;
  std::string message;
  bool warning;
};

class CollectingErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  CollectingErrorCollector(absl::string_view text, std::vector<ParseProblem>* problems)
      : text_(text), problems_(problems) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    // The parser reports an unknown field or enum value at the token after it, which may be on a
    // later line; point at the offending name itself.
    for (const char* marker : {"has no field named \"", kUnknownEnum}) {
      if (absl::StrContains(message, marker)) {
        std::tie(line, column) = StartOfTokenBefore(text_, line, column);
        break;
      }
    }
    problems_->push_back({line, column, message, false});
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    problems_->push_back({line, column, message, true});
  }
  static constexpr char kUnknownEnum[] = "Unknown enumeration value of \"";

 private:
  absl::string_view text_;
  std::vector<ParseProblem>* problems_;
};

// Every enum field named `field` anywhere below `root`, found breadth first.
const google::protobuf::EnumDescriptor* EnumOfField(const Descriptor* root,
                                                    absl::string_view field) {
  std::vector<const Descriptor*> queue = {root};
  for (size_t i = 0; i < queue.size() && i < 256; ++i) {
    for (int f = 0; f < queue[i]->field_count(); ++f) {
      const FieldDescriptor* fd = queue[i]->field(f);
      if (fd->name() == field && fd->enum_type() != nullptr) return fd->enum_type();
      if (fd->message_type() != nullptr &&
          std::find(queue.begin(), queue.end(), fd->message_type()) == queue.end()) {
        queue.push_back(fd->message_type());
      }
    }
  }
  return nullptr;
}

// For an unknown enum value: the enum the field takes, so the message can list its values and
// the parse can go on past it (the value is replaced by the enum's first).
const google::protobuf::EnumDescriptor* EnumOfProblem(const Descriptor* root,
                                                      const std::string& message) {
  size_t at = message.find("\" for field \"");
  if (!absl::StartsWith(message, CollectingErrorCollector::kUnknownEnum) ||
      at == std::string::npos) {
    return nullptr;
  }
  absl::string_view field = absl::string_view(message).substr(at + 13);
  field = field.substr(0, field.find('"'));
  return EnumOfField(root, field);
}

// The byte offset of (line, column) in `text`, or npos.
size_t OffsetOf(absl::string_view text, int line, int column) {
  size_t offset = 0;
  for (int l = 0; l < line; ++l) {
    offset = text.find('\n', offset);
    if (offset == absl::string_view::npos) return offset;
    ++offset;
  }
  // The tokenizer counts a tab as advancing to the next multiple of 8.
  int col = 0;
  while (offset < text.size() && col < column && text[offset] != '\n') {
    col = text[offset] == '\t' ? (col / 8 + 1) * 8 : col + 1;
    ++offset;
  }
  return col == column ? offset : absl::string_view::npos;
}

// At most this many unknown enum values are reported from one file (one parse each).
constexpr int kMaxEnumProblems = 64;

}  // namespace

void ProblemList::Add(std::string where, absl::string_view message) {
  problems_.push_back(absl::StrCat(where, ": ", message));
}

absl::Status ProblemList::ToStatus() const {
  if (problems_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(problems_, "\n"));
}

absl::StatusOr<TextConfigSource> TextConfigSource::Parse(absl::string_view text,
                                                         std::string filename,
                                                         google::protobuf::Message* message) {
  TextConfigSource source(std::move(filename), message->GetDescriptor());
  ProblemList problems;
  // The parser stops at its first error. An unknown enum value is the common mistake that leaves
  // the rest parseable, so each is reported with the values the field takes, replaced, and the
  // parse run again, so that one run reports every one of them.
  std::string working(text);
  // Where a replacement changed a line's length: (line, column in `working` after the token,
  // columns added), to report later problems on that line at the file's own columns.
  std::vector<std::tuple<int, int, int>> shifts;
  for (int round = 0;; ++round) {
    std::vector<ParseProblem> found;
    CollectingErrorCollector collector(working, &found);
    TextFormat::Parser parser;
    parser.RecordErrorsTo(&collector);
    source.tree_ = std::make_shared<TextFormat::ParseInfoTree>();
    parser.WriteLocationsTo(source.tree_.get());
    parser.AllowUnknownField(false);
    message->Clear();
    google::protobuf::io::ArrayInputStream input(working.data(), static_cast<int>(working.size()));
    bool parsed = parser.Parse(&input, message);
    const ParseProblem* first_error = nullptr;
    for (const ParseProblem& p : found) {
      if (!p.warning && first_error == nullptr) first_error = &p;
    }
    const google::protobuf::EnumDescriptor* enum_type =
        first_error == nullptr ? nullptr : EnumOfProblem(source.root_, first_error->message);
    size_t offset = first_error == nullptr
                        ? absl::string_view::npos
                        : OffsetOf(working, first_error->line, first_error->column);
    for (const ParseProblem& p : found) {
      int column = p.column;
      for (const auto& [line, after, added] : shifts) {
        if (line == p.line && p.column >= after) column -= added;
      }
      std::string where = absl::StrCat(source.filename_, ":", p.line + 1, ":", column + 1);
      if (p.warning) {
        problems.Add(where, absl::StrCat("warning treated as error: ", p.message));
        continue;
      }
      if (&p == first_error && enum_type != nullptr) {
        std::vector<std::string> names;
        for (int v = 0; v < enum_type->value_count(); ++v) {
          names.push_back(enum_type->value(v)->name());
        }
        absl::string_view said = absl::StripSuffix(p.message, ".");
        problems.Add(where, absl::StrCat(said, "; valid values: ", absl::StrJoin(names, ", ")));
        continue;
      }
      problems.Add(where, p.message);
    }
    bool go_on = !parsed && enum_type != nullptr && offset != absl::string_view::npos &&
                 found.size() == 1 && round + 1 < kMaxEnumProblems;
    if (!go_on) {
      if (!parsed && found.empty()) problems.Add(source.filename_, "could not be parsed");
      break;
    }
    size_t end = offset;
    while (end < working.size() && (absl::ascii_isalnum(working[end]) || working[end] == '_')) {
      ++end;
    }
    const std::string& replacement = enum_type->value(0)->name();
    int added = static_cast<int>(replacement.size()) - static_cast<int>(end - offset);
    shifts.emplace_back(first_error->line,
                        first_error->column + static_cast<int>(replacement.size()), added);
    working.replace(offset, end - offset, replacement);
  }
  // Warnings (e.g. a deprecated field) do not fail the parse itself but are problems all the same.
  if (!problems.empty()) {
    message->Clear();
    return problems.ToStatus();
  }
  return source;
}

absl::StatusOr<TextConfigSource> TextConfigSource::Load(const std::string& path,
                                                        google::protobuf::Message* message) {
  // open(2) rather than std::ifstream: only the syscall promises an errno to report.
  base::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open"));
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot read"));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxConfigBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": larger than ", kMaxConfigBytes, " bytes; not a config file"));
    }
  }
  return Parse(text, path, message);
}

std::string TextConfigSource::Where(const std::vector<FieldStep>& steps) const {
  const TextFormat::ParseInfoTree* tree = tree_.get();
  const Descriptor* descriptor = root_;
  std::string best = filename_;
  for (const FieldStep& step : steps) {
    if (tree == nullptr || descriptor == nullptr) break;
    const FieldDescriptor* field = descriptor->FindFieldByName(std::string(step.field));
    if (field == nullptr) break;
    TextFormat::ParseLocation loc = tree->GetLocation(field, step.index);
    if (loc.line >= 0) best = absl::StrCat(filename_, ":", loc.line + 1, ":", loc.column + 1);
    if (field->type() != FieldDescriptor::TYPE_MESSAGE) break;
    tree = tree->GetTreeForNested(field, step.index);
    descriptor = field->message_type();
  }
  return best;
}

}  // namespace scopedfs::policy
