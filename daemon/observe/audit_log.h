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
//
// The lines are written to the sink by a thread of the log's own, within kFlushDelay of the
// refusal, never by the request that was refused: a write(2) to stderr or syslog on the request's
// way to its reply made another app's first stat of a hidden file 2 us slower than a stat of a
// missing name (timing_channel_mount_test, docs/security.md), where a missing name logs nothing.
// A line that would wait behind kMaxPending others is counted as dropped, so a stalled sink costs
// no memory beyond that; what waits is written when the log is closed.
#ifndef SCOPEDFS_DAEMON_OBSERVE_AUDIT_LOG_H_
#define SCOPEDFS_DAEMON_OBSERVE_AUDIT_LOG_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/small_thread.h"
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

  // Lines wait at most this long for the writer thread (which batches what comes meanwhile).
  static constexpr absl::Duration kFlushDelay = absl::Milliseconds(5);
  static constexpr size_t kMaxPending = 4096;

  explicit AuditLog(Options options);
  // Writes what waits, then how many lines were dropped, if any were since the last line.
  ~AuditLog();

  bool enabled() const { return options_.sink != Sink::kNone || options_.write_for_test; }
  // Queues the event's line if the rate allows (a copy of the event, formatted by the writer),
  // else counts it. With write_for_test the line is handed to it at once, on the caller's thread.
  void Record(const AuditEvent& event) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until every line queued before the call has been written (tests).
  void Flush() ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t written() const ABSL_LOCKS_EXCLUDED(mu_);
  // Lines queued and not yet written to the sink (the stats' audit_lines_waiting).
  uint64_t waiting() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t dropped() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // What waits for the writer: an event copied (formatted by the writer, off the request's way),
  // or a line already made (the count of dropped lines).
  struct Pending {
    AuditEvent event;  // its views point into the strings below
    std::string package, path, rule;
    std::optional<media::ContentFacts> content;
    std::string line;  // when not empty, written as it is
  };
  // The line `pending` stands for.
  static std::string LineOf(const Pending& pending);
  // Queues `pending` for the sink (or hands its line to write_for_test).
  void Queue(Pending pending) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteDropped() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // To the sink; never under mu_.
  void Write(absl::string_view line) const;
  void RunWriter() ABSL_LOCKS_EXCLUDED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;  // a leaf
  TokenBucket bucket_ ABSL_GUARDED_BY(mu_);
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t unreported_drops_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t queued_ ABSL_GUARDED_BY(mu_) = 0;   // lines ever queued
  uint64_t flushed_ ABSL_GUARDED_BY(mu_) = 0;  // of them, written to the sink
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  base::SmallThread writer_;  // for a real sink only, started with the first line
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_OBSERVE_AUDIT_LOG_H_
