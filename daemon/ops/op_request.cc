// The request every op handler goes through (op_request.h), and the replies it sends.
#include "daemon/ops/op_request.h"

#include <linux/fuse.h>

#include <cstdio>

#include "daemon/abi/fuse_kernel_abi.h"
#include "daemon/kernel/kernel_notifier.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

OpTimer::~OpTimer() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                 start_)
                .count();
  stats_.Record(kind_, static_cast<uint64_t>(ns));
}

namespace {

// The stats row an opcode's latency goes to; none for the ops `scopedfsctl stats` does not time.
std::optional<OpKind> TimedKindOf(uint32_t opcode) {
  switch (opcode) {
    case FUSE_LOOKUP:
      return OpKind::kLookup;
    case FUSE_GETATTR:
      return OpKind::kGetattr;
    case FUSE_SETATTR:
      return OpKind::kSetattr;
    case FUSE_OPENDIR:
    case FUSE_READDIR:
    case FUSE_READDIRPLUS:
      return OpKind::kReaddir;
    case FUSE_OPEN:
      return OpKind::kOpen;
    case FUSE_CREATE:
      return OpKind::kCreate;
    case FUSE_READ:
      return OpKind::kRead;
    case FUSE_WRITE:
      return OpKind::kWrite;
    case FUSE_MKDIR:
      return OpKind::kMkdir;
    case FUSE_MKNOD:
      return OpKind::kMknod;
    case FUSE_UNLINK:
      return OpKind::kUnlink;
    case FUSE_RMDIR:
      return OpKind::kRmdir;
    case FUSE_RENAME:
    case FUSE_RENAME2:
      return OpKind::kRename;
    case FUSE_LINK:
      return OpKind::kLink;
    case FUSE_SYMLINK:
      return OpKind::kSymlink;
    case FUSE_SETXATTR:
    case FUSE_GETXATTR:
    case FUSE_LISTXATTR:
    case FUSE_REMOVEXATTR:
      return OpKind::kXattr;
    default:
      return std::nullopt;
  }
}

void ReplyDefect(Stats& stats, uint32_t opcode, const char* what) {
  stats.reply_defects.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "scopedfsd: defect: %s to a %s request\n", what,
               std::string(FuseOpcodeName(opcode)).c_str());
}

}  // namespace

void DeferredReply::Err(int err) const {
  if (req_ == nullptr) return;  // deferred after another reply: that one was sent
  stats_->CountReply(opcode_);
  stats_->CountAudit(opcode_);  // a lock's grant or refusal is no policy decision: no line
  fuse_reply_err(req_, err);
}

OpRequest::OpRequest(fuse_req_t req, uint32_t opcode) : req_(req), fs_(Fs(req)), opcode_(opcode) {
  if (std::optional<OpKind> timed = TimedKindOf(opcode)) timer_.emplace(fs_->stats(), *timed);
}

OpRequest::~OpRequest() {
  if (!answered_) {
    ReplyDefect(fs_->stats(), opcode_, "no reply");
    ReplyErr(EIO);
  }
}

bool OpRequest::Begin() {
  if (answered_) {
    ReplyDefect(fs_->stats(), opcode_, "a second reply");
    return false;
  }
  answered_ = true;
  DropOtherViewsAttributes();
  fs_->stats().CountReply(opcode_);
  return true;
}

int OpRequest::Audited(int err) {
  fs_->stats().CountAudit(opcode_);
  return ctx_ ? ctx_->Audited(err) : err;
}

DeferredReply OpRequest::Defer() {
  if (answered_) {
    ReplyDefect(fs_->stats(), opcode_, "a deferred reply after another");
    return DeferredReply(nullptr, &fs_->stats(), opcode_);
  }
  answered_ = true;
  DropOtherViewsAttributes();
  return DeferredReply(req_, &fs_->stats(), opcode_);
}

RequestContext& OpRequest::ctx() {
  if (!ctx_) ctx_.emplace(fs_->Context(req_));
  return *ctx_;
}

void OpRequest::Changed(const ObjectId& object, NodeId through) {
  changed_.push_back({object, through});
}

void OpRequest::ChangedThrough(fuse_ino_t ino) {
  if (std::shared_ptr<Node> node = fs_->nodes().Get(ino)) Changed(*node);
}

// From the worker itself, before its reply: an attributes-only invalidation waits for nothing
// the workers serve (kernel_notifier.h). One lower object has at most one node per view, and
// the table knows a second one only once apps of both views have walked to it.
void OpRequest::DropOtherViewsAttributes() {
  if (changed_.empty()) return;
  FuseSession* session = fs_->session();
  for (const ChangedObject& c : changed_) {
    for (View view : {kRawView, kRedactedView}) {
      std::shared_ptr<Node> node = fs_->nodes().Find(c.object, view);
      if (node == nullptr || node->id == c.through) continue;
      MarkKernelAttrsStale(node.get());
      if (session != nullptr) session->notifier().InvalidateAttributes(node->id);
    }
  }
  changed_.clear();
}

void OpRequest::ReplyErr(int err) {
  if (!Begin()) return;
  fuse_reply_err(req_, Audited(err));
}

void OpRequest::ReplyWrite(size_t written) {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_write(req_, written);
}

void OpRequest::ReplyEntry(int err, const fuse_entry_param& e) {
  if (!Begin()) return;
  if (Audited(err) != 0) {
    fuse_reply_err(req_, err);
  } else {
    fuse_reply_entry(req_, &e);
  }
}

void OpRequest::ReplyAttr(int err, struct stat st, fuse_ino_t ino) {
  if (!Begin()) return;
  if (Audited(err) != 0) return (void)fuse_reply_err(req_, err);
  st.st_ino = fs_->PresentedIno(st.st_dev, st.st_ino);
  double timeout = AttrTimeoutFor(ctx(), st, fs_->options().entry_cache_seconds);
  if (ino != 0 && CachesAttrsWithName(fs_, ctx(), nullptr, st.st_mode)) {
    std::shared_ptr<Node> node = fs_->nodes().Get(ino);
    if (node != nullptr && node->attrs_cached_with_name.load(std::memory_order_relaxed)) {
      timeout = fs_->options().entry_cache_seconds;
      if (node->view != kRawView) NoteKernelAttrs(node.get(), st);
    }
  }
  fuse_reply_attr(req_, &st, timeout);
}

void OpRequest::ReplyOpendir(const fuse_file_info* fi) {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_open(req_, fi);
}

void OpRequest::ReplyBuf(const char* data, size_t size) {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_buf(req_, data, size);
}

void OpRequest::ReplyXattrSize(size_t size) {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_xattr(req_, size);
}

void OpRequest::ReplyReadlink(const std::string& target) {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_readlink(req_, target.c_str());
}

void OpRequest::ReplyStatfs(const struct statvfs& sv) {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_statfs(req_, &sv);
}

void OpRequest::ReplyLock(const struct flock& lock) {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_lock(req_, &lock);
}

void OpRequest::ReplyLseek(off_t offset) {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_lseek(req_, offset);
}

void OpRequest::ReplyNone() {
  if (!Begin()) return;
  Audited(0);
  fuse_reply_none(req_);
}

namespace {

void FillAttr(const struct stat& st, fuse_attr* a) {
  a->ino = st.st_ino;
  a->size = static_cast<uint64_t>(st.st_size);
  a->blocks = static_cast<uint64_t>(st.st_blocks);
  a->atime = static_cast<uint64_t>(st.st_atim.tv_sec);
  a->mtime = static_cast<uint64_t>(st.st_mtim.tv_sec);
  a->ctime = static_cast<uint64_t>(st.st_ctim.tv_sec);
  a->atimensec = static_cast<uint32_t>(st.st_atim.tv_nsec);
  a->mtimensec = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  a->ctimensec = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  a->mode = st.st_mode;
  a->nlink = static_cast<uint32_t>(st.st_nlink);
  a->uid = st.st_uid;
  a->gid = st.st_gid;
  a->rdev = static_cast<uint32_t>(st.st_rdev);
  a->blksize = static_cast<uint32_t>(st.st_blksize);
}

}  // namespace

// libfuse 3.14 cannot express a backing id, so passthrough replies are built by hand:
// [fuse_entry_out for CREATE] + fuse_open_out with FOPEN_PASSTHROUGH.
bool OpRequest::ReplyOpened(int err, fuse_file_info* fi, int backing_id,
                            const fuse_entry_param* entry) {
  if (!Begin()) return true;
  if (Audited(err) != 0) {
    fs_->stats().open_denied.fetch_add(1);
    fuse_reply_err(req_, err);
    return true;
  }
  if (backing_id >= 0) fs_->stats().open_passthrough.fetch_add(1);
  if (backing_id < 0) {
    fi->direct_io = 0;
    return (entry != nullptr ? fuse_reply_create(req_, entry, fi) : fuse_reply_open(req_, fi)) == 0;
  }
  abi::OpenOut open_out{};
  open_out.fh = fi->fh;
  open_out.open_flags = abi::kFopenPassthrough;
  open_out.backing_id = backing_id;
  if (entry == nullptr) {
    return fuse_reply_buf(req_, reinterpret_cast<const char*>(&open_out), sizeof(open_out)) == 0;
  }
  struct {
    fuse_entry_out entry;
    abi::OpenOut open;
  } out{};
  static_assert(sizeof(out) == sizeof(fuse_entry_out) + sizeof(abi::OpenOut));
  out.entry.nodeid = entry->ino;
  out.entry.generation = entry->generation;
  out.entry.entry_valid = static_cast<uint64_t>(entry->entry_timeout);
  out.entry.attr_valid = static_cast<uint64_t>(entry->attr_timeout);
  FillAttr(entry->attr, &out.entry.attr);
  out.open = open_out;
  return fuse_reply_buf(req_, reinterpret_cast<const char*>(&out), sizeof(out)) == 0;
}

}  // namespace scopedfs::daemon
