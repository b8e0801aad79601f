// The FUSE connection: opens /dev/fuse and mounts it with mount(2), or adopts a /dev/fuse fd that
// its parent mounted (vold's way), and runs libfuse's low-level session over a custom io whose
// only job is to negotiate kernel passthrough in the INIT reply (libfuse 3.14 predates the
// passthrough API) and to expose the backing-file ioctls.
#ifndef SCOPEDFS_DAEMON_KERNEL_FUSE_SESSION_H_
#define SCOPEDFS_DAEMON_KERNEL_FUSE_SESSION_H_

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "daemon/kernel/backing_ids.h"
#include "daemon/kernel/kernel_notifier.h"
#include "daemon/kernel/uring_transport.h"
#include "daemon/observe/stats.h"

namespace scopedfs::daemon {

// --transport: how requests reach the daemon once INIT is answered (FuseSession::ServeInit):
// io_uring where the kernel offers it (auto), io_uring or fail (uring), or /dev/fuse only (dev).
enum class Transport { kAuto, kUring, kDev };
std::optional<Transport> ParseTransport(absl::string_view name);
absl::string_view TransportName(Transport transport);

// Whether `fd` is a /dev/fuse fd, open for reading and writing, whose mount is alive and whose
// FUSE_INIT no one has read yet: what a daemon handed a vold-style fd may serve. It reads nothing
// from the fd (poll only). InvalidArgument: `fd` is not open, not /dev/fuse, or not open O_RDWR
// (whoever passed it named the wrong fd). FailedPrecondition: no mount is connected to it (never
// mounted, unmounted or aborted since), or its INIT was already taken by another process.
absl::Status CheckMountedFuseFd(int fd);

class FuseSession : public BackingIdSource {
 public:
  struct Options {
    std::string mountpoint;
    // What /proc/mounts shows as the mount's source (mount(8) compares it with fstab's, so a
    // second `mount -a` sees the line is mounted).
    std::string fsname = "scopedfs";
    // The mount's type is fuse.<subtype>, or plain fuse when empty (what test suites that compare
    // the type with "fuse", such as xfstests, expect).
    std::string subtype = "scopedfs";
    bool want_passthrough = true;
    // POSIX semantics: the kernel checks mode bits and POSIX ACLs itself (default_permissions,
    // FUSE_POSIX_ACL), and caches ACLs per inode, so `ls -l` asks the daemon no ACL questions.
    bool posix = false;
    // The kernel keeps POSIX record and OFD locks for the mount (INIT does not claim
    // FUSE_POSIX_LOCKS): it releases a closing owner's locks itself, so FLUSH carries nothing
    // the daemon needs (answered ENOSYS: the kernel stops sending it), at the price of locks
    // that do not meet those taken on the lower file directly (--posix_locks=kernel).
    bool kernel_posix_locks = false;
    // Where every request read from the kernel is counted by opcode (Stats::CountRequest); null:
    // not counted.
    Stats* stats = nullptr;
    // How requests reach the daemon once INIT is answered (ServeInit).
    Transport transport = Transport::kAuto;
    // io_uring: threads serving each CPU's queue (all but one may wait for location scans, as
    // the /dev/fuse loop's workers may).
    int threads_per_queue = 8;
    // The most replies the ops ever give later from another thread (lock waits:
    // FileLocks::kMaxWaiters): io_uring holds each in a ring entry meanwhile, and sizes every
    // queue beyond it (uring_transport.h).
    int max_deferred_replies = 0;
  };

  // Creates the libfuse session for `ops`, opens /dev/fuse and mounts. Nothing is mounted if
  // this fails. Ops find `filesystem` through FilesystemOf(req). Under ANDROID semantics the
  // mount is noexec, as vold mounts emulated storage; POSIX semantics keep exec, as the lower
  // filesystem would.
  static absl::StatusOr<std::unique_ptr<FuseSession>> Mount(const Options& options,
                                                            const fuse_lowlevel_ops& ops,
                                                            void* filesystem);
  // The same over `fuse_fd`, a /dev/fuse fd that another process (vold) opened and mounted and
  // this process inherited: nothing is mounted here, and nothing is unmounted at the end (the
  // mount's owner does that). `options.mountpoint` only names the mount in messages. Takes
  // ownership of the fd once CheckMountedFuseFd accepts it; errors are CheckMountedFuseFd's.
  static absl::StatusOr<std::unique_ptr<FuseSession>> Adopt(const Options& options, int fuse_fd,
                                                            const fuse_lowlevel_ops& ops,
                                                            void* filesystem);
  static void* FilesystemOf(fuse_req_t req) {
    return static_cast<FuseSession*>(fuse_req_userdata(req))->filesystem_;
  }
  ~FuseSession();  // unmounts (lazily) and destroys the session
  FuseSession(const FuseSession&) = delete;
  FuseSession& operator=(const FuseSession&) = delete;

  // Answers FUSE_INIT on the calling thread, then starts the transport: FUSE over io_uring when
  // asked for (uring, or auto) and offered by the kernel, else /dev/fuse alone. Call once, before
  // Loop. FailedPrecondition: --transport=uring and io_uring cannot serve (the message says why);
  // Unavailable: the mount went away before INIT.
  absl::Status ServeInit();
  // Serves requests on `threads` worker threads until unmounted or Exit(). Returns 0 on a clean
  // end. With io_uring serving, these threads only see what the kernel keeps on /dev/fuse
  // (forgets, interrupts).
  int Loop(int max_threads);
  // Safe from a signal handler.
  void Exit();

  // Whether the kernel accepted passthrough in INIT (valid once the first request was served).
  bool passthrough_enabled() const override { return passthrough_enabled_.load(); }
  // Whether the INIT reply told the kernel that the daemon implements POSIX record locks
  // (FUSE_POSIX_LOCKS), valid once the first request was served. Without them the kernel keeps
  // POSIX locks itself and releases them at close, so FLUSH carries nothing the daemon needs.
  bool serves_posix_locks() const { return serves_posix_locks_.load(); }
  // FUSE_DEV_IOC_BACKING_OPEN / CLOSE on the session fd.
  absl::StatusOr<int> BackingOpen(int fd) override;
  absl::Status BackingClose(int backing_id) override;

  fuse_session* session() { return se_; }
  // Which transport serves, for the start line and stats: "io_uring, 2 queues of 8 entries", or
  // "/dev/fuse" and why not io_uring. Valid after ServeInit.
  const std::string& transport_description() const { return transport_description_; }
  bool uring_serving() const { return uring_.load() != nullptr; }
  // Where a handler may put the `size` bytes of data its reply will carry so that they are not
  // copied again: the payload buffer of the ring entry of the request the calling thread is
  // serving (UringTransport::ServingPayload), or null (then it uses a buffer of its own).
  static char* ReplyPayload(size_t size) { return UringTransport::ServingPayload(size); }
  // Requests answered through the ring so far.
  uint64_t uring_requests() const;
  // Where cache invalidations go (kernel_notifier.h): none that may wait on a page is sent from a
  // worker. It lives as long
  // as the session and is stopped before the session is destroyed.
  KernelNotifier& notifier() { return *notifier_; }
  const std::string& mountpoint() const { return options_.mountpoint; }

 private:
  explicit FuseSession(Options options) : options_(std::move(options)) {}
  // fuse_session_new, then libfuse reads and writes fd_ through the custom io.
  absl::Status StartSession(const fuse_lowlevel_ops& ops, void* filesystem);
  static const fuse_custom_io kIo;
  static ssize_t Read(int fd, void* buf, size_t len, void* userdata);
  static ssize_t Writev(int fd, struct iovec* iov, int count, void* userdata);

  Options options_;
  void* filesystem_ = nullptr;
  fuse_session* se_ = nullptr;
  int fd_ = -1;
  bool mounted_ = false;
  std::unique_ptr<KernelNotifier> notifier_;
  std::atomic<uint64_t> init_unique_{0};
  std::atomic<bool> kernel_offers_passthrough_{false};
  std::atomic<bool> kernel_offers_killpriv_v2_{false};
  std::atomic<bool> kernel_offers_posix_acl_{false};
  std::atomic<bool> passthrough_enabled_{false};
  std::atomic<bool> serves_posix_locks_{true};
  // io_uring: whether INIT offered it and we asked for it, and the sizes the ring's payload
  // buffers must hold (from our INIT reply).
  std::atomic<bool> kernel_offers_uring_{false};
  std::atomic<bool> uring_negotiated_{false};
  std::atomic<uint32_t> max_write_{0};
  std::atomic<uint32_t> max_pages_{0};
  bool uring_wanted_ = false;  // set before INIT is read
  std::unique_ptr<UringTransport> uring_owner_;
  std::atomic<UringTransport*> uring_{nullptr};  // read by Writev on every reply
  std::string transport_description_ = "/dev/fuse";
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_KERNEL_FUSE_SESSION_H_
