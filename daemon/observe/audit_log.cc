// Audit log (see audit_log.h). syslog(3) is the syslog/journald sink: journald reads /dev/log, so
// the lines reach the journal with the daemon's unit and pid and no client library is needed.
#include "daemon/observe/audit_log.h"

#include <syslog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace scopedfs::daemon {
namespace {

absl::string_view LocationName(media::LocationPresence location) {
  switch (location) {
    case media::LocationPresence::kAbsent:
      return "absent";
    case media::LocationPresence::kPresent:
      return "present";
    case media::LocationPresence::kMalformed:
      return "malformed";
    case media::LocationPresence::kUnknown:
      break;
  }
  return "unknown";
}

std::string RedactNames(uint32_t mask) {
  std::vector<std::string> names;
  for (int r = REDACTION_EXIF_GPS; r <= REDACTION_XMP_PLACE; ++r) {
    if (mask & (1u << r)) {
      std::string name = Redaction_Name(static_cast<Redaction>(r));
      names.push_back(name.substr(sizeof("REDACTION_") - 1));
    }
  }
  return names.empty() ? "-" : absl::StrJoin(names, ",");
}

}  // namespace

std::string EscapeAuditValue(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      absl::StrAppendFormat(&out, "\\x%02x", u);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::string_view AuditOpName(scopedfs::Op op) {
  switch (op) {
    case OP_LOOKUP:
      return "lookup";
    case OP_READ:
      return "read";
    case OP_WRITE:
      return "write";
    case OP_CREATE:
      return "create";
    case OP_DELETE:
      return "delete";
    case OP_RENAME:
      return "rename";
    case OP_MKDIR:
      return "mkdir";
    case OP_RMDIR:
      return "rmdir";
    case OP_SETATTR:
      return "setattr";
    default:
      return "unspecified";
  }
}

std::string AuditErrnoName(int err) {
  switch (err) {
    case ENOENT:
      return "ENOENT";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case EROFS:
      return "EROFS";
    case EEXIST:
      return "EEXIST";
    case EXDEV:
      return "EXDEV";
    case ESTALE:
      return "ESTALE";
    default:
      return absl::StrCat(err);
  }
}

std::string FormatAuditLine(const AuditEvent& e) {
  std::string line = absl::StrCat(
      "scopedfs: ", e.redacted ? "redacted" : "denied", " { ", AuditOpName(e.op), " } uid=", e.uid,
      " pid=", e.pid, " pkg=", e.package.empty() ? "-" : EscapeAuditValue(e.package), " path=\"",
      EscapeAuditValue(e.path), "\" tclass=", e.directory ? "dir" : "file");
  if (e.content != nullptr) {
    std::string media = MediaClass_Name(e.content->media_class);
    absl::StrAppend(&line,
                    " media=", absl::AsciiStrToLower(media.substr(sizeof("MEDIA_CLASS_") - 1)),
                    " location=", LocationName(e.content->location));
  }
  absl::StrAppend(&line, " owner=", e.owner.has_value() ? absl::StrCat(*e.owner) : "none",
                  " rule=\"", e.rule.empty() ? "(default action)" : EscapeAuditValue(e.rule), "\"");
  if (e.judged != OP_UNSPECIFIED && e.judged != e.op) {
    absl::StrAppend(&line, " judged=", AuditOpName(e.judged));
  }
  if (e.redacted) {
    absl::StrAppend(&line, " redact=", RedactNames(e.redact));
  } else {
    absl::StrAppend(&line, " errno=", AuditErrnoName(e.err));
  }
  return line;
}

bool TokenBucket::Take(absl::Time now) {
  if (last_ != absl::InfinitePast() && now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * rate_);
  }
  if (last_ == absl::InfinitePast() || now > last_) last_ = now;
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

absl::StatusOr<AuditLog::Sink> AuditLog::ParseSink(absl::string_view name) {
  if (name == "stderr") return Sink::kStderr;
  if (name == "syslog") return Sink::kSyslog;
  if (name == "none") return Sink::kNone;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown audit log destination \"", name, "\" (stderr, syslog or none)"));
}

AuditLog::AuditLog(Options options)
    : options_(std::move(options)), bucket_(options_.burst, options_.rate_per_second) {
  if (options_.sink == Sink::kSyslog && !options_.write_for_test) {
    openlog("scopedfsd", LOG_PID | LOG_NDELAY, LOG_AUTHPRIV);
  }
}

AuditLog::~AuditLog() {
  {
    absl::MutexLock lock(&mu_);
    WriteDropped();
    stopping_ = true;
  }
  writer_.Join();
}

void AuditLog::Record(const AuditEvent& event) {
  if (!enabled()) return;
  absl::Time now = options_.clock_for_test ? options_.clock_for_test() : absl::Now();
  absl::MutexLock lock(&mu_);
  if (!bucket_.Take(now) || pending_.size() >= kMaxPending) {
    ++dropped_;
    ++unreported_drops_;
    return;
  }
  WriteDropped();
  Pending pending;
  pending.package.assign(event.package.data(), event.package.size());
  pending.path.assign(event.path.data(), event.path.size());
  pending.rule.assign(event.rule.data(), event.rule.size());
  if (event.content != nullptr) pending.content = *event.content;
  pending.event = event;
  Queue(std::move(pending));
  ++written_;
}

std::string AuditLog::LineOf(const Pending& pending) {
  if (!pending.line.empty()) return pending.line;
  AuditEvent event = pending.event;
  event.package = pending.package;
  event.path = pending.path;
  event.rule = pending.rule;
  event.content = pending.content.has_value() ? &*pending.content : nullptr;
  return FormatAuditLine(event);
}

void AuditLog::Queue(Pending pending) {
  if (options_.write_for_test) {
    options_.write_for_test(LineOf(pending));
    return;
  }
  // The writer is woken (a futex wake, on this request's way) only when the queue was empty: the
  // lines that come within kFlushDelay join it.
  if (!writer_.started() && writer_.Start([this] { RunWriter(); }) != 0) {
    Write(LineOf(pending));  // no thread to be had: written here rather than lost
    return;
  }
  pending_.push_back(std::move(pending));
  ++queued_;
}

void AuditLog::WriteDropped() {
  if (unreported_drops_ == 0) return;
  Pending note;
  note.line = absl::StrFormat("scopedfs: audit: %d lines dropped (rate limit: burst %g, %g/s)",
                              unreported_drops_, options_.burst, options_.rate_per_second);
  Queue(std::move(note));
  unreported_drops_ = 0;
}

void AuditLog::Flush() {
  absl::MutexLock lock(&mu_);
  if (!writer_.started()) return;
  uint64_t target = queued_;
  auto done = [this, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return flushed_ >= target; };
  mu_.Await(absl::Condition(&done));
}

void AuditLog::RunWriter() {
  std::vector<Pending> batch;
  absl::MutexLock lock(&mu_);
  for (;;) {
    auto ready = [this]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !pending_.empty(); };
    mu_.Await(absl::Condition(&ready));
    // What comes within kFlushDelay goes in the same batch (unless the log is closing).
    auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (!stopping_) mu_.AwaitWithTimeout(absl::Condition(&stop), kFlushDelay);
    batch.swap(pending_);
    mu_.Unlock();
    for (const Pending& pending : batch) Write(LineOf(pending));
    mu_.Lock();
    flushed_ += batch.size();
    batch.clear();
    if (stopping_ && pending_.empty()) break;
  }
}

void AuditLog::Write(absl::string_view line) const {
  switch (options_.sink) {
    case Sink::kStderr: {
      // One write per line, so lines never interleave with the daemon's other messages.
      std::string with_newline = absl::StrCat(line, "\n");
      fwrite(with_newline.data(), 1, with_newline.size(), stderr);
      fflush(stderr);
      break;
    }
    case Sink::kSyslog:
      syslog(LOG_NOTICE, "%.*s", static_cast<int>(line.size()), line.data());
      break;
    case Sink::kNone:
      break;
  }
}

uint64_t AuditLog::written() const {
  absl::MutexLock lock(&mu_);
  return written_;
}

uint64_t AuditLog::waiting() const {
  absl::MutexLock lock(&mu_);
  return queued_ - flushed_;
}

uint64_t AuditLog::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

}  // namespace scopedfs::daemon
