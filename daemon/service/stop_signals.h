// SIGTERM and SIGINT end the session's loop, without the race libfuse 3.14 leaves: its loop
// checks its exit flag, then sleeps in sem_wait, so a signal handled between the two sets the
// flag and is never seen (the daemon serves on; it happened to stops right after a reload). Here
// the signals are blocked in every thread and taken by one thread of ours (sigwait), which ends
// the loop and then interrupts the loop's thread (SIGUSR1, a handler that does nothing) until the
// loop has returned.
#ifndef SCOPEDFS_DAEMON_SERVICE_STOP_SIGNALS_H_
#define SCOPEDFS_DAEMON_SERVICE_STOP_SIGNALS_H_

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <pthread.h>

#include <atomic>
#include <thread>

namespace scopedfs::daemon {

class StopSignals {
 public:
  // Blocks SIGTERM and SIGINT in the calling thread. Call first in main, before any thread is
  // made: every thread inherits the block, so no thread but ours ever takes them.
  static void BlockInThisThread();

  // Called on the thread that runs the loop, with the session it runs.
  explicit StopSignals(fuse_session* se);
  // Call once the loop has returned: stops interrupting it and ends the thread.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal that ended the loop, or 0 if none did (an unmount).
  int signal() const { return signal_.load(); }

 private:
  void Run();

  fuse_session* se_;
  pthread_t loop_thread_;
  std::atomic<bool> loop_returned_{false};
  std::atomic<int> signal_{0};
  std::thread thread_;
};

}  // namespace scopedfs::daemon

#endif  // SCOPEDFS_DAEMON_SERVICE_STOP_SIGNALS_H_
