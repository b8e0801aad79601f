// Loads text-format protobuf configs and remembers where every field was written, so that both
// syntax errors and later semantic problems can be reported as "file:line:col: message".
#ifndef SCOPEDFS_POLICY_TEXT_CONFIG_H_
#define SCOPEDFS_POLICY_TEXT_CONFIG_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"

namespace scopedfs::policy {

// One step of a path to a field: field name, and the element index for repeated fields (-1 for
// singular fields).
struct FieldStep {
  absl::string_view field;
  int index = -1;
};

// A parsed config file: the file name plus the parser's record of field locations.
class TextConfigSource {
 public:
  // Parses `text` into `message` (cleared first). Syntax errors, unknown fields and bad enum names
  // give InvalidArgument with one "filename:line:col: message" line per problem (1-based).
  static absl::StatusOr<TextConfigSource> Parse(absl::string_view text, std::string filename,
                                                google::protobuf::Message* message);
  // Reads then parses a file; unreadable or oversized files give an error naming the path.
  static absl::StatusOr<TextConfigSource> Load(const std::string& path,
                                               google::protobuf::Message* message);

  const std::string& filename() const { return filename_; }

  // "filename:line:col" of the field reached by `steps` from the root message, e.g.
  // {{"rule", 3}, {"app"}, {"holds_any", 0}}. Falls back to the deepest step that was located
  // (a field set by default has no location), and to "filename" alone.
  std::string Where(const std::vector<FieldStep>& steps) const;

 private:
  TextConfigSource(std::string filename, const google::protobuf::Descriptor* root)
      : filename_(std::move(filename)),
        root_(root),
        tree_(std::make_shared<google::protobuf::TextFormat::ParseInfoTree>()) {}

  std::string filename_;
  const google::protobuf::Descriptor* root_;
  // shared_ptr: ParseInfoTree is neither copyable nor movable.
  std::shared_ptr<google::protobuf::TextFormat::ParseInfoTree> tree_;
};

// Collects located problems and turns them into one InvalidArgument status listing all of them.
class ProblemList {
 public:
  void Add(std::string where, absl::string_view message);
  bool empty() const { return problems_.empty(); }
  size_t size() const { return problems_.size(); }
  // OK if empty; else InvalidArgument whose message is one "where: message" line per problem, in
  // the order added.
  absl::Status ToStatus() const;

 private:
  std::vector<std::string> problems_;
};

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_TEXT_CONFIG_H_
