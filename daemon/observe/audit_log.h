// The audit log: one line per policy refusal and per redacted open, in a form people grep the way
// they grep SELinux denials:
//
//   scopedfs: denied { read } uid=10062 pid=812 pkg=com.example.social path="Music/a.mp3"
//     tclass=file media=audio location=absent owner=10063 rule="other-audio" errno=ENOENT
//   scopedfs: redacted { read } uid=10062 ... rule="media-images-redacted" redact=EXIF_GPS,XMP_GPS
//
// (each is one line). The fields after pkg= are what the decision was made on, so
// `scopedfsctl audit2why` can replay it. Names come from apps and may hold anything: every byte
// outside printable ASCII, and `"` and `\`, are written as \xNN, so no name can end a line, start
// a forged one, or close its quotes. A token bucket bounds the rate (a looping app cannot flood
// the log); lines over it are counted, and the count is written before the next line that gets
// through and when the log is closed.
#ifndef SCOPEDFS_DAEMON_OBSERVE_AUDIT_LOG_H_
#define SCOPEDFS_DAEMON_OBSERVE_AUDIT_LOG_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "media/content_facts.h"
#include "proto/policy.pb.h"

namespace scopedfs::daemon {

struct AuditEvent {
  bool redacted = false;             // false: denied
  scopedfs::Op op = OP_UNSPECIFIED;  // what the app asked for
  // The question the refusing decision answered, when it is not `op` itself (a create onto a
  // hidden name is refused by the lookup of that name): logged as judged=<op>.
  scopedfs::Op judged = OP_UNSPECIFIED;
  uint32_t uid = 0;
  pid_t pid = 0;
  absl::string_view package;  // empty: not an app in the registry ("-")
  absl::string_view path;     // relative to the storage root; "" is the root
  bool directory = false;
  const media::ContentFacts* content = nullptr;  // null: not judged on content
  std::optional<uint32_t> owner;
  absl::string_view rule;  // empty: the policy's default action
  int err = 0;             // denied: the errno the caller got
  uint32_t redact = 0;     // redacted: Bit(Redaction) of what was filled
};

// The line for `event`, without a trailing newline.
std::string FormatAuditLine(const AuditEvent& event);
// `value` with every byte outside printable ASCII, and `"` and `\`, written as \xNN.
std::string EscapeAuditValue(absl::string_view value);
// "read" for OP_READ, the spelling `scopedfsctl explain --op` takes.
absl::string_view AuditOpName(scopedfs::Op op);
// "ENOENT" for ENOENT; the number for errnos the daemon does not answer with.
std::string AuditErrnoName(int err);

// Lines over `rate_per_second` on average, past a burst of `burst`, are refused.
class TokenBucket {
 public:
  TokenBucket(double burst, double rate_per_second)
      : burst_(burst), rate_(rate_per_second), tokens_(burst) {}
  bool Take(absl::Time now);

 private:
  double burst_;
  double rate_;
  double tokens_;
  absl::Time last_ = absl::InfinitePast();
};

class AuditLog {
 public:
  enum class Sink { kNone, kStderr, kSyslog };
  struct Options {
    Sink sink = Sink::kStderr;
    double burst = 100;
    double rate_per_second = 20;
    // Tests: where lines go instead of the sink, and the clock.
    std::function<void(absl::string_view line)> write_for_test;
    std::function<absl::Time()> clock_for_test;
  };
  // "stderr", "syslog" or "none".
  static absl::StatusOr<Sink> ParseSink(absl::string_view name);

  explicit AuditLog(Options options);
  // Writes how many lines were dropped, if any were since the last line.
  ~AuditLog();

  bool enabled() const { return options_.sink != Sink::kNone || options_.write_for_test; }
  // Writes the event's line if the rate allows (formatting it only then), else counts it.
  void Record(const AuditEvent& event) ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t written() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t dropped() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Write(absl::string_view line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteDropped() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;  // a leaf
  TokenBucket bucket_ ABSL_GUARDED_BY(mu_);
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t unreported_drops_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OBSERVE_AUDIT_LOG_H_
