// Termination signals taken by a thread of ours (see stop_signals.h).
#include "daemon/service/stop_signals.h"

#include <signal.h>
#include <time.h>

#include "base/signals.h"

namespace scopedfs::daemon {
namespace {

sigset_t StopSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

void Interrupted(int) {}  // only to make the loop's sem_wait return EINTR

}  // namespace

void StopSignals::BlockInThisThread() {
  sigset_t set = StopSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

StopSignals::StopSignals(fuse_session* se) : se_(se), loop_thread_(pthread_self()) {
  struct sigaction sa = {};
  sa.sa_handler = Interrupted;  // no SA_RESTART: the interrupted wait returns
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);
  thread_ = std::thread([this] { Run(); });
  // Named here too, so that whoever sees the daemon serving finds it named (Run names it as well,
  // for a start that raced ahead of this line).
  pthread_setname_np(thread_.native_handle(), "sfs-stop");
}

StopSignals::~StopSignals() {
  loop_returned_.store(true);
  // Ends the sigwait if no signal came (the mount was unmounted): the signal is blocked in every
  // thread, so this one stays with ours.
  pthread_kill(thread_.native_handle(), SIGTERM);
  thread_.join();
}

void StopSignals::Run() {
  pthread_setname_np(pthread_self(), "sfs-stop");
  base::NoTerminationSignals no_other_signals;  // SIGHUP and SIGQUIT stay with the others
  sigset_t set = StopSet();
  int sig = 0;
  if (sigwait(&set, &sig) != 0 || loop_returned_.load()) return;
  signal_.store(sig);
  fuse_session_exit(se_);
  // The loop may be between its check of the flag and its sem_wait: interrupt it until it has
  // noticed.
  while (!loop_returned_.load()) {
    pthread_kill(loop_thread_, SIGUSR1);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace scopedfs::daemon
