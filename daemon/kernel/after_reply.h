// Work a request owes once its reply has reached the kernel, run on the thread that served it:
// what would otherwise make the answer's time depend on what the daemon found (a facts record's
// write, the head a writer's RELEASE reads, the kernel told to drop a package area's dentry:
// docs/security.md). Over /dev/fuse a reply is written when a handler gives
// it, so the request's own scope (OpRequest) runs the work when it ends; over io_uring the reply
// is committed after the handler returns, so the transport holds an outer scope around the
// commit, and a scope that ends inside another hands its work to it. Without any scope (tools,
// unit tests, the scan threads) Run does the work at once.
#ifndef SCOPEDFS_DAEMON_KERNEL_AFTER_REPLY_H_
#define SCOPEDFS_DAEMON_KERNEL_AFTER_REPLY_H_

#include <functional>
#include <vector>

namespace scopedfs::daemon {

class AfterReply {
 public:
  AfterReply();
  // Runs what was queued, in order, or hands it to the enclosing scope.
  ~AfterReply();
  AfterReply(const AfterReply&) = delete;
  AfterReply& operator=(const AfterReply&) = delete;

  static void Run(std::function<void()> work);

 private:
  std::vector<std::function<void()>> work_;
  AfterReply* outer_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_KERNEL_AFTER_REPLY_H_
