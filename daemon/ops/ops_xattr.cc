// Extended attributes, answered as Filesystem::xattr_mode() says (filesystem.h). ANDROID: none
// (ENOSYS, as MediaProvider, which implements no xattr op): the kernel stops asking for the whole
// mount after the first answer, and every caller gets EOPNOTSUPP from the kernel itself, so `ls
// -l` costs no xattr request per file. POSIX: every attribute as the lower tree has it by default
// (the kernel has already applied its own rules for who may set which namespace: CAP_SYS_ADMIN
// for trusted.*, capabilities for security.*, ownership for ACLs), or none (noattr, nosys). The
// daemon's own trusted.scopedfs.* attributes are invisible through the mount in every mode.
#include <linux/limits.h>
#include <sys/xattr.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "daemon/ops/handlers.h"
#include "daemon/ops/handles.h"
#include "daemon/ops/resolve.h"
#include "daemon/ops/views.h"

namespace scopedfs::daemon {

bool ReservedXattr(const char* name) { return absl::StartsWith(name, "trusted.scopedfs."); }

// The answer every request of this kind gets without looking at the node, or 0: ENOSYS in nosys
// mode (the kernel then stops sending it), `none` (what "no such attribute" is for this request)
// in noattr mode.
int NoXattrAnswer(Filesystem* fs, int none) {
  switch (fs->xattr_mode()) {
    case XattrMode::kNosys:
      return ENOSYS;
    case XattrMode::kNoattr:
      return none;
    case XattrMode::kPassthrough:
      return 0;
  }
  return ENOSYS;
}

// The object an xattr request acts on, as a /proc path valid while `fd` is held.
struct XattrPath {
  std::shared_ptr<Node> node;
  base::UniqueFd fd;
  std::string path;
  const char* c_str() const { return path.c_str(); }
};

// The node an xattr request acts on, visible to the caller. A request that changes attribute
// `modify_name` (null: it only reads) is refused EPERM first if the name is reserved or not the
// caller's to change, then judged as OP_SETATTR; one that reads is judged as a read of the
// object (as open(O_RDONLY) and readlink are: an attribute is the object's content as much as
// its bytes are), so a caller that finds a name it may not read learns no attribute of it. POSIX
// ACLs (`read_name` system.posix_acl_*) are the exception: they are permissions, shown to whoever
// finds the name as its mode is, and the kernel asks for them as whichever caller's permission
// check needs them first, caches them for the inode and reads them for every later caller's
// check and getfacl alike; a refusal would fail that caller's path walks instead.
// A symlink's own attributes are served as natively: the /proc path of its O_PATH fd names the
// link itself, and the xattr calls that follow it stop there (a magic link is not followed
// further), so no call reaches the link's target; the lower filesystem refuses user.* on it.
int XattrTarget(Filesystem* fs, const RequestContext& ctx, fuse_ino_t ino, const char* modify_name,
                XattrPath* proc, const char* read_name = nullptr) {
  bool modify = modify_name != nullptr;
  if (modify && ReservedXattr(modify_name)) return EPERM;
  Visible v;
  if (int err = ResolveVisible(fs, ctx, ino, &v)) return err;
  if (modify) {
    if (int err = Verdict(ctx.Decide(OP_SETATTR, v.r.path, v.dir, &v.info))) return err;
  } else if (!read_name || !absl::StartsWith(read_name, "system.posix_acl_")) {
    policy::Decision d = ctx.Decide(OP_READ, v.r.path, v.dir, &v.info);
    if (!d.Permits()) return ErrnoOf(d);
  }
  proc->path = ProcPath(v.r.fd.get());
  proc->fd = std::move(v.r.fd);
  proc->node = std::move(v.r.node);
  return 0;
}

void sfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                  int flags) {
  OpRequest op(req, FUSE_SETXATTR);
  Filesystem* fs = op.fs();
  if (int err = NoXattrAnswer(fs, EOPNOTSUPP)) return op.ReplyErr(err);
  XattrPath proc;
  if (int err = XattrTarget(fs, op.ctx(), ino, name, &proc)) {
    return op.ReplyErr(err);
  }
  int err = setxattr(proc.c_str(), name, value, size, flags) == 0 ? 0 : errno;
  if (err == 0) {
    MarkKernelAttrsStale(proc.node.get());  // the kernel invalidates its ctime
    op.Changed(*proc.node);
  }
  op.ReplyErr(err);
}

// A lower filesystem without xattrs (ramfs) has no ACLs either, and its own permission checks use
// the mode bits alone; passed up as EOPNOTSUPP, the kernel would fail every permission check that
// consults an ACL (a directory with group bits) with EOPNOTSUPP. ENODATA says "no ACL" instead.
int LowerGetxattrError(const char* name, int err) {
  if (err == EOPNOTSUPP && absl::StartsWith(name, "system.posix_acl_")) return ENODATA;
  return err;
}

void sfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  OpRequest op(req, FUSE_GETXATTR);
  Filesystem* fs = op.fs();
  if (int err = NoXattrAnswer(fs, ENODATA)) return op.ReplyErr(err);
  if (ReservedXattr(name)) return op.ReplyErr(ENODATA);
  XattrPath proc;
  if (int err = XattrTarget(fs, op.ctx(), ino, nullptr, &proc, name)) {
    return op.ReplyErr(err);
  }
  if (size == 0) {
    ssize_t n = getxattr(proc.c_str(), name, nullptr, 0);
    if (n < 0) return op.ReplyErr(LowerGetxattrError(name, errno));
    return op.ReplyXattrSize(static_cast<size_t>(n));
  }
  std::vector<char> buf(size);
  ssize_t n = getxattr(proc.c_str(), name, buf.data(), size);
  if (n < 0) return op.ReplyErr(LowerGetxattrError(name, errno));
  op.ReplyBuf(buf.data(), static_cast<size_t>(n));
}

void sfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  OpRequest op(req, FUSE_LISTXATTR);
  Filesystem* fs = op.fs();
  if (fs->xattr_mode() == XattrMode::kNosys) return op.ReplyErr(ENOSYS);
  if (fs->xattr_mode() == XattrMode::kNoattr) {
    return size == 0 ? op.ReplyXattrSize(0) : op.ReplyBuf(nullptr, 0);
  }
  XattrPath proc;
  if (int err = XattrTarget(fs, op.ctx(), ino, nullptr, &proc)) {
    return op.ReplyErr(err);
  }
  // One reading, into a buffer as large as any list may be: a list that grew between a reading
  // of its size and a second reading would make the daemon answer ERANGE (the caller's E2BIG)
  // however large the caller's buffer.
  std::vector<char> all(XATTR_LIST_MAX);
  ssize_t n = listxattr(proc.c_str(), all.data(), all.size());
  if (n < 0) return op.ReplyErr(errno);
  std::string visible;
  for (size_t i = 0; i < static_cast<size_t>(n);) {
    const char* entry = all.data() + i;
    size_t len = strlen(entry);
    if (!ReservedXattr(entry)) visible.append(entry, len + 1);
    i += len + 1;
  }
  if (size == 0) return op.ReplyXattrSize(visible.size());
  if (visible.size() > size) return op.ReplyErr(ERANGE);
  op.ReplyBuf(visible.data(), visible.size());
}

void sfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  OpRequest op(req, FUSE_REMOVEXATTR);
  Filesystem* fs = op.fs();
  if (int err = NoXattrAnswer(fs, ENODATA)) return op.ReplyErr(err);
  XattrPath proc;
  if (int err = XattrTarget(fs, op.ctx(), ino, name, &proc)) {
    return op.ReplyErr(err);
  }
  int err = removexattr(proc.c_str(), name) == 0 ? 0 : errno;
  if (err == 0) {
    MarkKernelAttrsStale(proc.node.get());  // the kernel invalidates its ctime
    op.Changed(*proc.node);
  }
  op.ReplyErr(err);
}

}  // namespace scopedfs::daemon
