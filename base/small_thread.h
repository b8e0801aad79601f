// A thread of the daemon's own that keeps nothing large on its stack: created with a small one
// (a daemon run under an address-space limit pays for every stack it maps, 8 MiB each by default)
// and with the termination signals blocked (signals.h). Joined when the object goes.
#ifndef SCOPEDFS_BASE_SMALL_THREAD_H_
#define SCOPEDFS_BASE_SMALL_THREAD_H_

#include <pthread.h>

#include <cstddef>
#include <functional>

namespace scopedfs::base {

class SmallThread {
 public:
  static constexpr size_t kStack = size_t{256} << 10;

  SmallThread() = default;
  ~SmallThread() { Join(); }
  SmallThread(const SmallThread&) = delete;
  SmallThread& operator=(const SmallThread&) = delete;

  // Runs `body` on a new thread. Returns 0, or the errno pthread_create gave (nothing runs).
  int Start(std::function<void()> body);
  bool started() const { return started_; }
  void Join();

 private:
  pthread_t thread_{};
  bool started_ = false;
};

}  // namespace scopedfs::base

#endif  // SCOPEDFS_BASE_SMALL_THREAD_H_
