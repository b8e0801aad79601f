// Threads of the daemon's own (location scans, kernel notifications, the config watch, the
// control socket, lock waits) must never be the ones a termination signal lands on: libfuse's
// handler only sets a flag, and the session loop notices it when the signal interrupts the loop's
// own thread or a worker. A SIGTERM taken by any other thread would leave the daemon serving
// until the next request came. Create such threads inside a NoTerminationSignals scope: a new
// thread inherits the creator's signal mask.
#ifndef SCOPEDFS_BASE_SIGNALS_H_
#define SCOPEDFS_BASE_SIGNALS_H_

#include <pthread.h>
#include <signal.h>

#include <initializer_list>

namespace scopedfs::base {

class NoTerminationSignals {
 public:
  NoTerminationSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &saved_);
  }
  ~NoTerminationSignals() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  NoTerminationSignals(const NoTerminationSignals&) = delete;
  NoTerminationSignals& operator=(const NoTerminationSignals&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace scopedfs::base

#endif  // SCOPEDFS_BASE_SIGNALS_H_
