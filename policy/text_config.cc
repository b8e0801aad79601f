// Text-format config parsing with located errors (see text_config.h).
#include "policy/text_config.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace scopedfs::policy {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

// Configs are small; anything larger is a mistake (a wrong path), not a policy.
constexpr size_t kMaxConfigBytes = 16 << 20;

class CollectingErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  CollectingErrorCollector(const std::string& filename, ProblemList* problems)
      : filename_(filename), problems_(problems) {}
  // The parser counts lines and columns from 0; editors and compilers count from 1.
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    // The parser reports an unknown field or enum value at the token after it; point at the
    // offending name itself.
    for (const char* marker : {"has no field named \"", "Unknown enumeration value of \""}) {
      size_t at = message.find(marker);
      if (at == std::string::npos) continue;
      size_t start = at + std::strlen(marker);
      size_t end = message.find('"', start);
      int length = end == std::string::npos ? 0 : static_cast<int>(end - start);
      if (length <= column) column -= length;
      break;
    }
    problems_->Add(absl::StrCat(filename_, ":", line + 1, ":", column + 1), message);
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {
    problems_->Add(absl::StrCat(filename_, ":", line + 1, ":", column + 1),
                   absl::StrCat("warning treated as error: ", message));
  }

 private:
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
  CollectingErrorCollector collector(source.filename_, &problems);
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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string why = absl::StrCat(path, ": cannot open: ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(why) : absl::PermissionDeniedError(why);
  }
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": larger than ", kMaxConfigBytes, " bytes; not a config file"));
    }
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
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
