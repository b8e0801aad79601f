// The text of an explanation: the decision for one request, the rule behind it, the caller, the
// path and the content facts it was judged on. `scopedfsctl explain` prints it for a decision
// made offline from files; the daemon's live explain (live_explain.h) returns it for a decision
// made with the policy in force and the lower file's real facts, so both read the same.
#ifndef SCOPEDFS_DAEMON_SERVICE_EXPLAIN_TEXT_H_
#define SCOPEDFS_DAEMON_SERVICE_EXPLAIN_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "media/content_facts.h"
#include "media/location/location.h"
#include "policy/engine.h"

namespace scopedfs::daemon {

struct ExplainInput {
  const policy::Engine* engine = nullptr;
  // request.content points at the facts the decision was made on (null for a directory).
  policy::Request request;
  // What was read of the content: nullopt when the facts come from the name alone.
  std::optional<media::MediaFormat> sniffed_format;
  // The location scan, for a format that may carry location (null otherwise).
  const media::LocationScan* scan = nullptr;
  uint64_t content_size = 0;
  // Where the content facts came from, e.g. "sniffed from /tmp/a.jpg: format jpeg".
  std::string content_note;
};

// "lookup" -> OP_LOOKUP, ...; nullopt for an unknown name.
std::optional<scopedfs::Op> ParseOpName(absl::string_view name);
// OP_LOOKUP -> "lookup", ...; "unspecified" for OP_UNSPECIFIED.
absl::string_view OpName(scopedfs::Op op);
// "lookup|read|write|...": every name ParseOpName takes, for usage messages.
std::string OpNames();

// Decides `in.request` with `in.engine` and describes the decision, one "label:   value" line
// each (decision, redact, rule, reason, caller, path, content, fill, owner).
std::string ExplainText(const ExplainInput& in);

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_EXPLAIN_TEXT_H_
