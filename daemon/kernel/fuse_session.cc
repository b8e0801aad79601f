// FUSE session setup (a mount of our own, or an adopted vold-style fd) and the INIT-reply shim for
// passthrough (see fuse_session.h).
#include "daemon/kernel/fuse_session.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/abi/fuse_kernel_abi.h"

namespace scopedfs::daemon {
namespace {

absl::Status Errno(absl::string_view what, int err) {
  return absl::ErrnoToStatus(err, what);  // ErrnoToStatus appends strerror itself
}

// The misc device /dev/fuse is (FUSE_MINOR in the kernel's miscdevice.h).
constexpr unsigned kMiscMajor = 10;
constexpr unsigned kFuseMinor = 229;

// What an fd refers to, as /proc shows it ("/tmp/x", "pipe:[123]"), for messages.
std::string FdTarget(int fd) {
  char target[PATH_MAX];
  ssize_t n = readlink(absl::StrCat("/proc/self/fd/", fd).c_str(), target, sizeof(target) - 1);
  return n < 0 ? std::string("unknown") : std::string(target, static_cast<size_t>(n));
}

// Whether the kernel still has the connection of `fd`: /dev/fuse polls POLLERR once its mount
// is gone (unmounted or aborted). A daemon that exits after `umount` must not unmount its mount
// point by path then: the next mount may already sit there (a remount's new daemon).
bool ConnectionAlive(int fd) {
  if (fd < 0) return false;
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) >= 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
}

}  // namespace

absl::Status CheckMountedFuseFd(int fd) {
  int flags = fd < 0 ? -1 : fcntl(fd, F_GETFL);
  if (flags < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("fd ", fd, " is not an open file descriptor of this process: the parent ",
                     "must pass the /dev/fuse fd it mounted, open across exec"));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) return Errno(absl::StrCat("fstat fd ", fd), errno);
  if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != kMiscMajor || minor(st.st_rdev) != kFuseMinor) {
    return absl::InvalidArgumentError(
        absl::StrCat("fd ", fd, " is not /dev/fuse (it is ", FdTarget(fd), ")"));
  }
  if ((flags & O_ACCMODE) != O_RDWR) {
    return absl::InvalidArgumentError(
        absl::StrCat("fd ", fd, " is /dev/fuse but not open for reading and writing"));
  }
  // The kernel queues FUSE_INIT while mount(2) runs, so a live mount nobody has served yet always
  // has a request waiting. Polling tells without reading, which would take the request away.
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, 0) < 0) return Errno(absl::StrCat("poll fd ", fd), errno);
  if ((p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "fd ", fd, " is /dev/fuse but no mount is connected to it: it was never mounted, or its ",
        "mount was unmounted or aborted since"));
  }
  if ((p.revents & POLLIN) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "fd ", fd, " is a mounted /dev/fuse whose first request (FUSE_INIT) another process has ",
        "already read: that process serves the mount; pass a freshly mounted fd"));
  }
  return absl::OkStatus();
}

ssize_t FuseSession::Read(int fd, void* buf, size_t len, void* userdata) {
  auto* self = static_cast<FuseSession*>(userdata);
  ssize_t n = read(fd, buf, len);
  // O_TMPFILE under POSIX semantics: libfuse 3.14 would answer FUSE_TMPFILE with ENOSYS (and the
  // kernel would then refuse O_TMPFILE for good), so it is handed to the CREATE op, which tells
  // it by its name "/" (no real name can contain a slash) and its O_TMPFILE flags. The argument
  // layout is CREATE's. Under ANDROID semantics the kernel learns once that there is no
  // O_TMPFILE, as on Android's own emulated storage.
  if (n >= static_cast<ssize_t>(sizeof(abi::InHeader)) && self->options_.posix) {
    char* opcode = static_cast<char*>(buf) + offsetof(abi::InHeader, opcode);
    uint32_t op;
    std::memcpy(&op, opcode, sizeof(op));
    if (op == abi::kOpcodeTmpfile) {
      op = abi::kOpcodeCreate;
      std::memcpy(opcode, &op, sizeof(op));
    }
  }
  if (n >= static_cast<ssize_t>(sizeof(abi::InHeader)) && self->options_.stats != nullptr) {
    uint32_t op;
    std::memcpy(&op, static_cast<char*>(buf) + offsetof(abi::InHeader, opcode), sizeof(op));
    self->options_.stats->CountRequest(op);
  }
  // INIT is the first request on the connection; remember it so its reply can be patched.
  if (n >= static_cast<ssize_t>(sizeof(abi::InHeader)) && self->init_unique_.load() == 0) {
    abi::InHeader header;
    std::memcpy(&header, buf, sizeof(header));
    if (header.opcode == abi::kOpcodeInit &&
        static_cast<size_t>(n) >= sizeof(header) + sizeof(abi::InitIn)) {
      abi::InitIn init;
      std::memcpy(&init, static_cast<char*>(buf) + sizeof(header), sizeof(init));
      bool ext = (init.flags & abi::kInitExt) != 0;
      self->kernel_offers_passthrough_ = ext && (init.flags2 & abi::kPassthroughFlag2) != 0;
      self->kernel_offers_killpriv_v2_ = (init.flags & abi::kHandleKillprivV2) != 0;
      self->kernel_offers_posix_acl_ = (init.flags & abi::kPosixAcl) != 0;
      self->kernel_offers_uring_ = ext && (init.flags2 & abi::kOverIoUringFlag2) != 0;
      self->init_unique_ = header.unique;
    }
  }
  return n;
}

ssize_t FuseSession::Writev(int fd, struct iovec* iov, int count, void* userdata) {
  auto* self = static_cast<FuseSession*>(userdata);
  uint64_t init_unique = self->init_unique_.load();
  if (init_unique != 0 && count >= 2 && iov[0].iov_len >= sizeof(abi::OutHeader)) {
    abi::OutHeader header;
    std::memcpy(&header, iov[0].iov_base, sizeof(header));
    if (header.unique == init_unique && header.error == 0 &&
        iov[1].iov_len >= offsetof(abi::InitOut, max_stack_depth) + sizeof(uint32_t)) {
      auto* out = static_cast<abi::InitOut*>(iov[1].iov_base);
      // Writeback caching would route writes through the page cache, which passthrough forbids.
      out->flags &= ~abi::kWritebackCache;
      // The mount is nosuid and apps may only set user.* xattrs, so there are no privileges for the
      // kernel to kill on our behalf; the lower filesystem clears them on its own writes.
      if (self->kernel_offers_killpriv_v2_) out->flags |= abi::kHandleKillprivV2;
      // POSIX semantics: the kernel enforces and caches ACLs (this implies default_permissions,
      // which the mount options carry too, for kernels that do not offer it). READDIRPLUS for
      // every listing, not only its first chunk (READDIRPLUS_AUTO): `ls -l` reads a whole
      // directory before it stats a name, so AUTO would leave all but the first chunk's names
      // to a LOOKUP each. A READDIRPLUS entry with attributes makes the kernel forget the
      // inode's cached ACLs, so the daemon sends those only for names the kernel does not hold
      // fresh already (ops_dir.cc).
      if (self->options_.posix && self->kernel_offers_posix_acl_) {
        out->flags |= abi::kPosixAcl | abi::kDontMask;
        out->flags &= ~abi::kReaddirplusAuto;
      }
      if (self->options_.want_passthrough && self->kernel_offers_passthrough_) {
        out->flags |= abi::kInitExt;
        out->flags2 |= abi::kPassthroughFlag2;
        out->max_stack_depth = abi::kMaxStackDepth;
        self->passthrough_enabled_ = true;
      } else if (self->options_.want_passthrough) {
        fprintf(stderr,
                "scopedfsd: the kernel does not offer FUSE passthrough (needs "
                "CONFIG_FUSE_PASSTHROUGH and CAP_SYS_ADMIN); serving reads and writes in "
                "userspace\n");
      }
      if (self->options_.kernel_posix_locks) out->flags &= ~abi::kPosixLocks;
      self->serves_posix_locks_ = (out->flags & abi::kPosixLocks) != 0;
      // FUSE over io_uring: asked for only when the ring can be set up (ServeInit), as the kernel
      // then holds every request back until the ring's queues are registered.
      if (self->uring_wanted_ && self->kernel_offers_uring_) {
        out->flags |= abi::kInitExt;
        out->flags2 |= abi::kOverIoUringFlag2;
        self->uring_negotiated_ = true;
      }
      self->max_write_ = out->max_write;
      self->max_pages_ = (out->flags & abi::kMaxPages) != 0 ? out->max_pages : 0;
      self->init_unique_ = ~uint64_t{0};  // patched; never match again
    }
  }
  // A reply to a request taken from the ring goes back into its ring entry.
  if (UringTransport* uring = self->uring_.load(std::memory_order_acquire); uring != nullptr) {
    ssize_t result;
    if (uring->Reply(iov, count, &result)) return result;
  }
  return writev(fd, iov, count);
}

const fuse_custom_io FuseSession::kIo = {
    .writev = &FuseSession::Writev,
    .read = &FuseSession::Read,
    .splice_receive = nullptr,
    .splice_send = nullptr,
};

absl::StatusOr<std::unique_ptr<FuseSession>> FuseSession::Mount(const Options& options,
                                                                const fuse_lowlevel_ops& ops,
                                                                void* filesystem) {
  std::unique_ptr<FuseSession> session(new FuseSession(options));
  struct stat st;
  if (stat(options.mountpoint.c_str(), &st) != 0) {
    return Errno(absl::StrCat("mount point ", options.mountpoint), errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("mount point ", options.mountpoint, " is not a directory"));
  }

  if (absl::Status started = session->StartSession(ops, filesystem); !started.ok()) return started;
  session->fd_ = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (session->fd_ < 0) return Errno("open /dev/fuse", errno);
  // rootmode is octal in the kernel's parser. Under ANDROID semantics no default_permissions: the
  // policy, not the lower file's mode bits, decides who may do what. Under POSIX the kernel checks
  // the bits too, exactly as it would on the lower filesystem.
  std::string data = absl::StrCat("fd=", session->fd_, ",rootmode=", absl::StrFormat("%o", S_IFDIR),
                                  ",user_id=0,group_id=0,allow_other",
                                  options.posix ? ",default_permissions" : "");
  // ANDROID semantics: noexec as well, as vold mounts emulated storage, so nothing on shared
  // storage can be executed or mapped executable. POSIX keeps exec, as the lower filesystem has.
  unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOATIME | (options.posix ? 0 : MS_NOEXEC);
  std::string type = options.subtype.empty() ? "fuse" : absl::StrCat("fuse.", options.subtype);
  if (mount(options.fsname.c_str(), options.mountpoint.c_str(), type.c_str(), flags,
            data.c_str()) != 0) {
    int err = errno;
    close(session->fd_);
    session->fd_ = -1;
    return Errno(absl::StrCat("mount ", options.mountpoint), err);
  }
  session->mounted_ = true;
  if (fuse_session_custom_io(session->se_, &kIo, session->fd_) != 0) {
    return absl::InternalError("fuse_session_custom_io failed");
  }
  session->notifier_ = std::make_unique<KernelNotifier>(session->se_);
  return session;
}

absl::StatusOr<std::unique_ptr<FuseSession>> FuseSession::Adopt(const Options& options, int fuse_fd,
                                                                const fuse_lowlevel_ops& ops,
                                                                void* filesystem) {
  if (absl::Status usable = CheckMountedFuseFd(fuse_fd); !usable.ok()) return usable;
  std::unique_ptr<FuseSession> session(new FuseSession(options));
  // Ours from here on (the destructor closes it), and never inherited by anything we start.
  session->fd_ = fuse_fd;
  if (fcntl(fuse_fd, F_SETFD, FD_CLOEXEC) != 0) return Errno("fcntl FD_CLOEXEC", errno);
  // A parent may hand the fd over non-blocking; libfuse's workers would then spin on EAGAIN.
  int flags = fcntl(fuse_fd, F_GETFL);
  if (flags < 0 || fcntl(fuse_fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return Errno("fcntl clear O_NONBLOCK", errno);
  }
  if (absl::Status started = session->StartSession(ops, filesystem); !started.ok()) return started;
  if (fuse_session_custom_io(session->se_, &kIo, session->fd_) != 0) {
    return absl::InternalError("fuse_session_custom_io failed");
  }
  session->notifier_ = std::make_unique<KernelNotifier>(session->se_);
  return session;
}

absl::Status FuseSession::StartSession(const fuse_lowlevel_ops& ops, void* filesystem) {
  // Request sizes are negotiated in the filesystem's init op, not through session options.
  const char* argv[] = {"scopedfsd", nullptr};
  fuse_args args = FUSE_ARGS_INIT(1, const_cast<char**>(argv));
  filesystem_ = filesystem;
  // The session itself is libfuse's userdata: the custom io callbacks receive it.
  se_ = fuse_session_new(&args, &ops, sizeof(ops), this);
  fuse_opt_free_args(&args);
  if (se_ == nullptr) return absl::InternalError("fuse_session_new failed");
  return absl::OkStatus();
}

FuseSession::~FuseSession() {
  notifier_.reset();  // ends its thread while the session it sends to still exists
  if (mounted_ && ConnectionAlive(fd_)) {
    // Lazy: a process with its cwd inside the mount must not keep the daemon from exiting.
    if (umount2(options_.mountpoint.c_str(), MNT_DETACH) != 0 && errno != EINVAL &&
        errno != ENOENT) {
      // Already unmounted by `umount` / fusermount3 -u is the normal way out: EINVAL.
    }
  }
  // The ring's threads serve until the unmount has ended the connection (a busy mount lives on:
  // closing the rings cancels their commands, and closing /dev/fuse then ends it). The entries'
  // memory goes only after the session, whose replies may still look them up.
  if (uring_owner_ != nullptr) uring_owner_->Stop();
  if (se_ != nullptr)
    fuse_session_destroy(se_);  // closes fd_
  else if (fd_ >= 0)
    close(fd_);
  uring_.store(nullptr);
  uring_owner_.reset();
}

int FuseSession::Loop(int max_threads) {
  fuse_loop_config* config = fuse_loop_cfg_create();
  fuse_loop_cfg_set_clone_fd(config, 0);  // one fd: the custom io owns it
  fuse_loop_cfg_set_max_threads(config, static_cast<unsigned>(max_threads));
  fuse_loop_cfg_set_idle_threads(config, static_cast<unsigned>(max_threads));
  int rc = fuse_session_loop_mt(se_, config);
  fuse_loop_cfg_destroy(config);
  return rc;
}

void FuseSession::Exit() {
  if (se_ != nullptr) fuse_session_exit(se_);
}

absl::StatusOr<int> FuseSession::BackingOpen(int fd) {
  abi::BackingMap map{};
  map.fd = fd;
  int id = ioctl(fd_, abi::kDevIocBackingOpen, &map);
  if (id < 0) return Errno("FUSE_DEV_IOC_BACKING_OPEN", errno);
  return id;
}

absl::Status FuseSession::BackingClose(int backing_id) {
  uint32_t id = static_cast<uint32_t>(backing_id);
  if (ioctl(fd_, abi::kDevIocBackingClose, &id) != 0) {
    return Errno("FUSE_DEV_IOC_BACKING_CLOSE", errno);
  }
  return absl::OkStatus();
}

}  // namespace scopedfs::daemon
