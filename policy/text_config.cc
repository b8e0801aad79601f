// Text-format config parsing with located errors (see text_config.h).
#include "policy/text_config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

class CollectingErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  CollectingErrorCollector(absl::string_view text, const std::string& filename,
                           ProblemList* problems)
      : text_(text), filename_(filename), problems_(problems) {}
  // The parser counts lines and columns from 0; editors and compilers count from 1.
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    // The parser reports an unknown field or enum value at the token after it, which may be on a
    // later line; point at the offending name itself.
    for (const char* marker : {"has no field named \"", "Unknown enumeration value of \""}) {
      if (absl::StrContains(message, marker)) {
        std::tie(line, column) = StartOfTokenBefore(text_, line, column);
        break;
      }
    }
    problems_->Add(absl::StrCat(filename_, ":", line + 1, ":", column + 1), message);
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    problems_->Add(absl::StrCat(filename_, ":", line + 1, ":", column + 1),
                   absl::StrCat("warning treated as error: ", message));
  }

 private:
  absl::string_view text_;
  const std::string& filename_;
  ProblemList* problems_;
};

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
  CollectingErrorCollector collector(text, source.filename_, &problems);
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.WriteLocationsTo(source.tree_.get());
  parser.AllowUnknownField(false);
  message->Clear();
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  if (!parser.Parse(&input, message) && problems.empty()) {
    problems.Add(source.filename_, "could not be parsed");
  }
  // Warnings (e.g. a deprecated field) do not fail the parse itself but are problems all the same.
  if (!problems.empty()) return problems.ToStatus();
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
